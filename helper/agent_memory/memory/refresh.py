"""Bring a project's cache up to date with the bucket: list, download only what is missing, drop what is gone.

Downloads land in a staging folder and are moved into the cache only when complete. Cached notes are
dropped only after a complete, successful listing: a failed or partial one changes nothing.
"""

from __future__ import annotations

import re

from .. import names
from ..store import Store, StoreError
from .cache import ProjectCache

_NOTE_FILE = re.compile(r"projects/[^/]+/notes/([^/]+)\.md")


def refresh(store: Store, cache: ProjectCache) -> None:
    """Sync the cache of one project with the bucket; raises StoreError (and then changes nothing)."""
    remote = {}
    for info in store.list(f"projects/{cache.project}/notes"):
        match = _NOTE_FILE.fullmatch(info.path)
        if match and names.is_id(match.group(1)):
            remote[match.group(1)] = info
    cached = cache.ids()
    new_ids = sorted(remote.keys() - cached)
    if new_ids:
        staging = cache.staging()
        try:
            store.fetch([remote[note_id] for note_id in new_ids], staging)
            complete = {}
            for note_id in new_ids:
                file = staging / remote[note_id].path
                if not file.is_file() or file.stat().st_size != remote[note_id].size:
                    raise StoreError("error", f"incomplete download of {remote[note_id].path}")
                complete[note_id] = file
            cache.add(complete)
        finally:
            cache.discard_staging(staging)
    gone = cached - remote.keys()
    if gone:
        cache.drop(gone)
    cache.repair(cached=set(remote))
    cache.record_refresh()
