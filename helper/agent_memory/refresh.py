"""Bring a project's cache up to date with the bucket: list, download only what is missing, drop what is gone.

Downloads land in a staging folder and are moved into the cache only when complete. Cached notes are
dropped only after a complete, successful listing: a failed or partial one changes nothing.
"""

from __future__ import annotations

import re

from .cache import ProjectCache
from .store import Store, StoreError

_NOTE_FILE = re.compile(r"^projects/[^/]+/notes/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.md$")


def refresh(store: Store, cache: ProjectCache, project: str) -> dict[str, int]:
    """Sync the cache of `project`; returns counts `{"listed", "downloaded", "dropped"}`; raises StoreError."""
    listing = store.list(f"projects/{project}/notes")
    remote = {}
    for info in listing:
        match = _NOTE_FILE.match(info.path)
        if match and ".." not in match.group(1):
            remote[match.group(1)] = info
    cached = cache.ids()
    missing = [remote[note_id] for note_id in sorted(remote.keys() - cached)]
    if missing:
        staging = cache.staging()
        try:
            store.fetch(missing, staging)
            complete = {}
            for info in missing:
                file = staging / info.path
                if not file.is_file() or file.stat().st_size != info.size:
                    raise StoreError("error", f"incomplete download of {info.path}")
                complete[_NOTE_FILE.match(info.path).group(1)] = file  # type: ignore[union-attr]
            cache.add(complete)
        finally:
            cache.discard_staging(staging)
    gone = cached - remote.keys()
    if gone:
        cache.drop(gone)
    cache.repair(cached=set(remote))
    cache.record_refresh()
    return {"listed": len(remote), "downloaded": len(missing), "dropped": len(gone)}
