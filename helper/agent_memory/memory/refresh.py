"""Bring a project's cache up to date with the bucket, and heal it: the listing is the truth.

Every cached note is checked against the listing: its file's size, and the size and hash recorded when it was
cached (`checksums`); a note that differs, is missing or was never verified is downloaded again. A
cached copy with no known hash is compared by hashing it the way the listing does, where the store can.
Downloads land in a staging folder and are moved into the cache only when complete, a batch at a time: when
the command's time budget runs out during a large download, the next refresh goes on from there. Cached notes
are dropped only after a complete, successful listing: a failed or partial one drops nothing. Last, the
search pack is checked whole and rebuilt if it is torn or disagrees with the notes.

An object that the store cannot vouch for (a link planted in a folder store: see `store.local`) is skipped, and
the rest goes on: it is neither fetched nor dropped from the cache, and the caller says which were skipped.
"""

from __future__ import annotations

import re

from .. import names
from ..store import Freshness, ObjectInfo, Store, StoreError, UnsafeObject
from .cache import ProjectCache

_NOTE_FILE = re.compile(r"projects/[^/]+/notes/([^/]+)\.md")
BATCH = 1000  # notes per download: one request for a few new notes, kept progress for a first fill of thousands


def refresh(store: Store, cache: ProjectCache) -> Freshness:
    """Sync the cache of one project with the bucket: fresh, with the notes (or folders) it skipped as unsafe; or
    stale, with the store's failure (then what is cached stays cached)."""
    try:
        return Freshness(skipped=_refresh(store, cache))
    except StoreError as exc:
        return Freshness(error=exc)


def _refresh(store: Store, cache: ProjectCache) -> list[UnsafeObject]:
    prefix = f"projects/{cache.project}/notes"
    listing = store.list(prefix)
    remote: dict[str, ObjectInfo] = {}
    for info in listing:
        if (note_id := _note_id(info.path)) is not None:
            remote[note_id] = info
    # only what would have been a note, or a folder on the way to them: the rest was never read anyway
    skipped = [s for s in listing.skipped if _note_id(s.path) or (prefix + "/").startswith(s.path + "/")]
    cache.sweep()
    for _attempt in range(2):  # a second pass fetches the copies that rebuilding the pack found damaged
        cache.discarded.clear()
        _sync(store, cache, remote, skipped)
        if not cache.discarded:
            break
    cache.record_refresh()
    return list({s.path: s for s in skipped}.values())  # once each, though both passes may meet it


def _note_id(path: str) -> str | None:
    match = _NOTE_FILE.fullmatch(path)
    return match.group(1) if match and names.is_id(match.group(1)) else None


def _sync(store: Store, cache: ProjectCache, remote: dict[str, ObjectInfo], skipped: list[UnsafeObject]) -> None:
    sizes, known = cache.sizes(), cache.verified_checksums()
    fetch, compare = [], []
    for note_id, info in remote.items():
        size, checksum = sizes.get(note_id), known.get(note_id)
        if size != info.size or (checksum is not None and checksum[0] != size):
            fetch.append(note_id)  # missing, cut short, or not what was cached
        elif info.hash is not None and checksum is not None and checksum[2] not in (None, info.hash):
            fetch.append(note_id)  # the object changed in the bucket
        elif checksum is None or (info.hash is not None and checksum[2] is None):
            compare.append(note_id)  # never verified, or saved here before its hash was known
    fetch = sorted(fetch + _verify_by_hash(store, cache, {note_id: remote[note_id] for note_id in compare}))
    for start in range(0, len(fetch), BATCH):
        _download(store, cache, {note_id: remote[note_id] for note_id in fetch[start : start + BATCH]}, skipped)
    gone = (sizes.keys() | known.keys()) - remote.keys()
    if any(_note_id(s.path) is None for s in skipped):  # a folder on the way was skipped: the listing is partial
        gone = set()
    gone -= {_note_id(s.path) for s in skipped}  # kept as they were: the bucket's copy could not be read
    if gone:
        cache.drop(gone)
    cache.check_pack()


def _verify_by_hash(store: Store, cache: ProjectCache, infos: dict[str, ObjectInfo]) -> list[str]:
    """Record the cached copies whose hash is the listing's; the ids of the others, to download."""
    if not infos:
        return []
    files = [cache.note_file(note_id) for note_id in infos]
    try:
        hashes = store.hashes(files)
    except OSError:  # a copy vanished meanwhile: download them all
        return list(infos)
    same = {note_id for (note_id, info), got in zip(infos.items(), hashes, strict=True) if got and got == info.hash}
    cache.add({note_id: cache.note_file(note_id) for note_id in same}, remote={i: infos[i].hash for i in same})
    return [note_id for note_id in infos if note_id not in same]


def _download(store: Store, cache: ProjectCache, infos: dict[str, ObjectInfo], skipped: list[UnsafeObject]) -> None:
    with cache.staging() as staging:
        left = list(infos.values())
        while left:
            try:
                store.fetch(left, staging)
                left = []
            except UnsafeObject as exc:  # changed since the listing: skip it (a note, or their folder), go on
                skipped.append(exc)
                bad = [info for info in left if info.path == exc.path or info.path.startswith(exc.path + "/")]
                for info in bad:
                    infos.pop(_note_id(info.path) or "", None)
                at = left.index(bad[0]) if bad else len(left)  # those before it were copied already
                left = [info for info in left[at:] if info not in bad]
        complete = {}
        for note_id, info in infos.items():
            file = staging / info.path
            if not file.is_file() or file.stat().st_size != info.size:
                raise StoreError("error", f"incomplete download of {info.path}")
            complete[note_id] = file
        cache.add(complete, remote={note_id: info.hash for note_id, info in infos.items()})
