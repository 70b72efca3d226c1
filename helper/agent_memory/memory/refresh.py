"""Bring a project's cache up to date with the bucket, at the cost of what changed; and heal it: the listing is
the truth.

A refresh first asks the bucket's change feed (the Hub's; a folder store's record of changes, see
`store.local_record`) what changed after the cursor where the cache stands (see `ProjectCache.stand`): with nothing
new that is one request, whatever the number of notes; new notes cost their downloads. Changes of other projects
and of skills are passed over. Where the feed cannot be followed, the bucket's `updatedAt` seen before the last
listing stands in for the cursor: unchanged, nothing is new (one request); changed by any write to the bucket, the
project is listed again. It lists the whole project instead when there is no cursor yet, when the feed cannot say
(`reset`: the cursor is older than the feed's replay buffer; a deployment or token without the feed; an answer not
understood), at least once a day (by this machine's clock; a clock set back counts as a day), and whenever damage
to the cache was found, by a search or a read (which forget the cursor) or by `checksums` or the pack having
changed since the last refresh, which is then checked whole. The cursor is read before the listing, so a change
made during it is replayed next time; it is recorded only once what it covers is cached.

A listing checks every cached note against the listing: its file's size, and the size and hash recorded when it was
cached (`checksums`); a note that differs, is missing or was never verified is downloaded again. A
cached copy with no known hash is compared by hashing it the way the listing does, where the store can.
Downloads land in a staging folder and are moved into the cache only when complete, a batch at a time: when
the command's time budget runs out during a large download, the next refresh goes on from there. A folder store's
notes (a `direct` store) are read where they are instead, and written in place into the cache, each vouched for
by its line only once it is whole (see `cache.Adding`): a fill costs one read and one write a note. Cached notes
are dropped only after a complete, successful listing: a failed or partial one drops nothing. Last, the
search pack is checked whole and rebuilt if it is torn or disagrees with the notes (unless it is exactly as this
refresh's own appends left it: see `ProjectCache.check_pack`).

An object that the store cannot vouch for (a link planted in a folder store: see `store.local`) is skipped, and the
rest goes on: it is neither fetched nor dropped from the cache, and the caller says which were skipped. So is a
note whose listed size is over `cache.NOTE_FILE_MAX` (room for a note's 1 MiB body and its frontmatter): it is
never downloaded, whatever it holds, so a search costs the same memory whatever the bucket holds. A project with
more than MAX_NOTES objects is refused whole (the search answers from the cache, stale, saying why) rather than
ground through.

The feed can only make the cache fresher, never staler or smaller: a change that cannot be applied as told (a
delete, an update of a note not cached, a size over the limit or missing, a download that fails or does not have
the size and hash told) sends the refresh to the listing, and the cursor stays where it was. A note is dropped
from the cache only when a complete listing no longer shows it (notes are never deleted by agent-memory: a
delete is an out-of-band removal or a lie), and the refresh says which (`Freshness.gone`, kept for `status`).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from .. import names
from ..clock import age_seconds, utc_now
from ..fsutil import locked, make_dirs, new_folder, remove_tree
from ..store.base import Freshness, ObjectInfo, OversizedObject, Store, StoreError, UnsafeObject, oversized
from ..store.change_feed import Replay, Unfollowable
from .cache import NOTE_FILE_MAX, ProjectCache, Stand
from .checksums import Checksum
from .notes import object_path

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Skipped

_NOTE_FILE = re.compile(r"projects/[^/]+/notes/([^/]+)\.md")
BATCH = 1000  # notes per download: one request for a few new notes, kept progress for a first fill of thousands
LIST_EVERY = 86400  # seconds: the longest a cache goes without a complete listing, which heals what nothing showed
CLOCK_SLACK = 300  # seconds: a last listing this far in the future means the clock was set back
MAX_NOTES = 100_000  # objects in one project's notes folder: ten times the largest measured, far below a memory risk


def refresh(store: Store, cache: ProjectCache) -> Freshness:
    """Sync the cache of one project with the bucket: fresh, with the notes (or folders) it skipped as unsafe; or
    stale, with the store's failure (then what is cached stays cached)."""
    try:
        if _follow(store, cache):
            return Freshness(kind="changes")
        skipped, gone = _refresh(store, cache)
        return Freshness(skipped=skipped, gone=gone, kind="listing")
    except StoreError as exc:
        return Freshness(error=exc)


def _prefix(cache: ProjectCache) -> str:
    return f"projects/{cache.project}/notes"


def _follow(store: Store, cache: ProjectCache) -> bool:
    """Bring the cache up to date from the change feed; False if only a listing can (see the module docstring)."""
    stand = cache.stand()
    if stand is None or cache.discarded or not _listed_lately(stand) or not _intact(cache, stand):
        return False
    if stand.cursor is None:  # a bucket without a feed to follow: any write anywhere in it changes `updatedAt`
        if store.updated_at() != stand.updated_at:
            return False
        cache.record_refresh(utc_now())
        return True
    try:
        replay = store.changes(stand.cursor, _prefix(cache))
    except Unfollowable:
        return False
    if replay.changes:
        cache.sweep()  # the download folders of killed refreshes, as a listing would
    if not _apply(store, cache, replay) or cache.discarded:
        return False
    if replay.cursor is not None and (replay.cursor, cache.files_signature()) != (stand.cursor, stand.files):
        cache.record_stand(stand.listed, cursor=replay.cursor)  # not rewritten (and synced) when nothing moved
    cache.record_refresh(utc_now())
    return True


def _listed_lately(stand: Stand) -> bool:
    age = age_seconds(stand.listed)
    return age is not None and -CLOCK_SLACK <= age < LIST_EVERY


def _intact(cache: ProjectCache, stand: Stand) -> bool:
    """Whether the cache's bookkeeping is as the last refresh left it, or checks out whole (a save since then,
    by this machine, changes it too); False if it is lost."""
    if cache.files_signature() == stand.files:
        return True
    if not cache.checksum_file.exists():
        return False  # a listing compares every note: nothing here says which are verified
    cache.check_pack()  # rebuilt if torn or if it disagrees with the notes; damaged copies are discarded
    return not cache.discarded


def _apply(store: Store, cache: ProjectCache, replay: Replay) -> bool:
    """Fetch the notes the replay added or changed; False if a change cannot be applied as told (see the module
    docstring: then the listing does)."""
    changed = {note_id: change for path, change in replay.changes.items() if (note_id := _note_id(path))}
    known = cache.verified_checksums_of([note_id for note_id, change in changed.items() if not change.added])
    remote: dict[str, ObjectInfo] = {}
    for note_id, change in changed.items():  # anything else below the folder is not a note: never read
        if change.deleted:
            return False  # only a listing may confirm that a note is gone
        size, xet_hash = change.size, change.hash
        if not change.added:  # an update tells only what changed: the rest is as cached, if it is cached
            if note_id not in known:
                return False
            size = known[note_id][0] if size is None else size
            xet_hash = known[note_id][2] if xet_hash is None else xet_hash
        if xet_hash is None and not change.added:
            continue  # the bytes did not change (only their time): the cached copy is still the one
        if xet_hash is None and store.hashed:
            return False  # an add without its hash: nothing to check a download against
        if size is None or size > NOTE_FILE_MAX:
            return False  # never downloaded on the feed's word: the listing says what it is, and reports it
        remote[note_id] = ObjectInfo(object_path(cache.project, note_id), size, hash=xet_hash)
    sizes = {}
    for note_id in remote:  # a few files: one stat each, not a scan of thousands
        with contextlib.suppress(FileNotFoundError):
            sizes[note_id] = os.stat(cache.note_file(note_id), follow_symlinks=False).st_size
    skipped: list[UnsafeObject] = []
    try:
        _fetch_changed(store, cache, remote, skipped, sizes, cache.verified_checksums_of(remote), verify=True)
    except StoreError:  # not there, not what the feed told: what was complete is kept, the listing does the rest
        return False
    return not skipped


def _refresh(store: Store, cache: ProjectCache) -> tuple[list[UnsafeObject | OversizedObject], list[str]]:
    """List the project and bring the cache to match: what was skipped (unsafe, oversized), and the paths of the
    cached notes dropped because the listing no longer shows them."""
    prefix = _prefix(cache)
    try:
        head = store.changes(None, prefix).cursor  # before the listing: what changes during it comes again
    except Unfollowable:
        head = None
    updated = None
    if head is None:  # no feed to follow: `updatedAt` will tell whether anything changed since this listing
        with contextlib.suppress(StoreError):  # then the listing says what is wrong, if anything is
            updated = store.updated_at()
    listed = utc_now()
    listing = store.list(prefix)
    if len(listing) > MAX_NOTES:
        raise StoreError(
            "error",
            f"project {cache.project} holds {len(listing)} objects in {store.uri}, more than the {MAX_NOTES} "
            "agent-memory reads for one project, so none was downloaded",
        )
    remote: dict[str, ObjectInfo] = {}
    too_large: list[OversizedObject] = []
    for info in listing:
        if (note_id := _note_id(info.path)) is None:
            continue
        if info.size > NOTE_FILE_MAX:
            too_large.append(oversized(store, info.path, info.size, NOTE_FILE_MAX))
        else:
            remote[note_id] = info
    # only what would have been a note, or a folder on the way to them: the rest was never read anyway
    skipped = [s for s in listing.skipped if _note_id(s.path) or (prefix + "/").startswith(s.path + "/")]
    cache.sweep()
    gone: set[str] = set()
    for _attempt in range(2):  # a second pass fetches the copies that rebuilding the pack found damaged
        cache.discarded.clear()
        gone |= _sync(store, cache, remote, skipped, {_note_id(o.path) for o in too_large})
        if not cache.discarded:
            break
    if (head is not None or updated is not None) and not skipped and not cache.discarded:
        cache.record_stand(listed, cursor=head, updated_at=None if head else updated)
    else:
        cache.forget_stand()  # no feed to follow, a partial listing, damage left: the next refresh lists again
    cache.record_refresh(utc_now())
    once = {s.path: s for s in skipped}  # once each, though both passes may meet one
    told: list[UnsafeObject | OversizedObject] = [*once.values(), *too_large]
    paths = sorted(object_path(cache.project, note_id) for note_id in gone)
    cache.record_report([_reported(s) for s in told], paths, utc_now())
    return told, paths


def _reported(skipped: UnsafeObject | OversizedObject) -> Skipped:
    reason = "oversized" if isinstance(skipped, OversizedObject) else "unsafe"
    return {"path": skipped.path, "reason": reason, "detail": skipped.detail, "next": skipped.next_step}


def _note_id(path: str) -> str | None:
    match = _NOTE_FILE.fullmatch(path)
    return match.group(1) if match and names.is_id(match.group(1)) else None


def _sync(
    store: Store,
    cache: ProjectCache,
    remote: dict[str, ObjectInfo],
    skipped: list[UnsafeObject],
    kept: set[str | None],
) -> set[str]:
    """Fetch what the cache lacks of `remote`, drop the verified notes it no longer lists (but those of `skipped`
    and `kept`, which it lists but could not read); the ids of the verified notes dropped."""
    sizes, known = cache.sizes(), cache.verified_checksums()
    _fetch_changed(store, cache, remote, skipped, sizes, known)
    gone = (sizes.keys() | known.keys()) - remote.keys()
    if any(_note_id(s.path) is None for s in skipped):  # a folder on the way was skipped: the listing is partial
        gone = set()
    gone -= {_note_id(s.path) for s in skipped} | kept  # kept as they were: the bucket's copy could not be read
    if gone:
        cache.drop(gone)
    cache.check_pack()
    return gone & known.keys()  # a stray file that was never a verified note is no note gone


def _fetch_changed(
    store: Store,
    cache: ProjectCache,
    remote: dict[str, ObjectInfo],
    skipped: list[UnsafeObject],
    sizes: dict[str, int],
    known: dict[str, Checksum],
    *,
    verify: bool = False,
) -> None:
    """Fetch each note of `remote` that the cache does not hold as it is there (`sizes` of its files and `known`
    checksums, of these notes at least); with `verify`, each download's hash is checked against the one told,
    where the store can hash (the feed's word, unlike a listing's, may not be what the download gives)."""
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
    batches = [{note_id: remote[note_id] for note_id in fetch[at : at + BATCH]} for at in range(0, len(fetch), BATCH)]
    if store.direct:  # not hashed: nothing to verify beyond the size
        _read_in(store, cache, batches, skipped)
    else:
        _download(store, cache, batches, skipped, verify)


def _verify_by_hash(store: Store, cache: ProjectCache, infos: dict[str, ObjectInfo]) -> list[str]:
    """Record the cached copies whose hash is the listing's; the ids of the others, to download."""
    if not infos:
        return []
    files = [cache.note_file(note_id) for note_id in infos]
    try:
        hashes: list[str | None] = store.hashes(files)
    except OSError:  # a copy vanished meanwhile: download them all
        return list(infos)
    same = {note_id for (note_id, info), got in zip(infos.items(), hashes, strict=True) if got and got == info.hash}
    cache.add({note_id: cache.note_file(note_id) for note_id in same}, remote={i: infos[i].hash for i in same})
    return [note_id for note_id in infos if note_id not in same]


def _read_in(
    store: Store, cache: ProjectCache, batches: list[dict[str, ObjectInfo]], skipped: list[UnsafeObject]
) -> None:
    """Copy the batches of a `direct` store into the cache: each note read once, written in place and indexed from
    the bytes read (see `cache.Adding`, which records each batch, what was put of it also when it fails)."""
    for infos in batches:
        ids = {info.path: note_id for note_id, info in infos.items()}
        with cache.adding(infos) as adding:
            left = [info for note_id, info in infos.items() if not adding.holds(note_id, info.size, info.hash)]
            while left:
                try:
                    for info, data in store.read_many(left):
                        if len(data) != info.size:
                            raise StoreError("error", f"incomplete download of {info.path} (changed since the listing)")
                        adding.put(ids[info.path], data, info.hash)
                    left = []
                except UnsafeObject as exc:
                    left = _past(exc, left, infos, skipped)


def _download(
    store: Store, cache: ProjectCache, batches: list[dict[str, ObjectInfo]], skipped: list[UnsafeObject], verify: bool
) -> None:
    """Download the batches in order, each into its own staging folder, and add each to the cache once complete.

    While one batch is added (read, checked, indexed: Python's work), the next one downloads (hf_xet's, outside
    the interpreter's lock): a first fill costs about the larger of the two instead of their sum.
    """
    with contextlib.ExitStack() as stack:
        pool = None
        if len(batches) > 1:
            # loaded here: concurrent.futures brings threading and logging (about 10 ms), which the hooks and a
            # refresh with nothing new must not pay for
            from concurrent.futures import ThreadPoolExecutor

            pool = stack.enter_context(ThreadPoolExecutor(1, "agent-memory-download"))
        previous: tuple[contextlib.ExitStack, Path, dict[str, ObjectInfo]] | None = None
        for infos in batches:
            folder = contextlib.ExitStack()
            stack.callback(folder.close)  # whatever fails, no staging folder is left behind (closing twice is none)
            staging = folder.enter_context(_staging(cache))
            job = pool.submit(_fetch, store, staging, infos, skipped) if pool is not None else None
            if job is not None:  # whatever fails meanwhile, its folder is removed only once it stops writing there
                folder.callback(job.exception)
            if previous is not None:
                with previous[0]:  # its staging folder goes once it is added (or fails)
                    _keep(store, cache, *previous[1:], verify)
            with _closed_on_error(folder):
                job.result() if job is not None else _fetch(store, staging, infos, skipped)
            previous = (folder, staging, infos)
        if previous is not None:
            with previous[0]:
                _keep(store, cache, *previous[1:], verify)


@contextlib.contextmanager
def _staging(cache: ProjectCache) -> Iterator[Path]:
    """A fresh folder on the cache's filesystem for downloads that are not complete yet, removed after use (those of
    killed processes: `ProjectCache.sweep`)."""
    with contextlib.ExitStack() as stack:
        with cache.lock():  # never while `sweep` runs: it would find the folder unlocked
            make_dirs(cache.dir)
            folder = new_folder(cache.dir, ".download-")
            stack.enter_context(locked(folder / ".lock"))
        try:
            yield folder
        finally:
            remove_tree(folder)


@contextlib.contextmanager
def _closed_on_error(stack: contextlib.ExitStack) -> Iterator[None]:
    try:
        yield
    except BaseException:
        stack.close()
        raise


def _fetch(store: Store, staging: Path, infos: dict[str, ObjectInfo], skipped: list[UnsafeObject]) -> None:
    """Download `infos` into `staging`, skipping (and dropping from `infos`) those found unsafe now."""
    left = list(infos.values())
    while left:
        try:
            store.fetch(left, staging)
            left = []
        except UnsafeObject as exc:
            left = _past(exc, left, infos, skipped)


def _past(
    exc: UnsafeObject, left: list[ObjectInfo], infos: dict[str, ObjectInfo], skipped: list[UnsafeObject]
) -> list[ObjectInfo]:
    """What is left of `left` to copy once `exc` was raised by an object found unsafe only now (it changed since
    the listing): skipped, with the rest of it (a folder's notes), and dropped from `infos`; those before it were
    copied already."""
    skipped.append(exc)
    bad = [info for info in left if info.path == exc.path or info.path.startswith(exc.path + "/")]
    for info in bad:
        infos.pop(_note_id(info.path) or "", None)
    at = left.index(bad[0]) if bad else len(left)
    return [info for info in left[at:] if info not in bad]


def _keep(store: Store, cache: ProjectCache, staging: Path, infos: dict[str, ObjectInfo], verify: bool) -> None:
    """Add a batch's downloads to the cache, once each is found complete: of the size listed."""
    complete: dict[str, bytes | Path] = {}
    for note_id, info in infos.items():
        file = staging / info.path
        try:
            found = os.stat(file, follow_symlinks=False)
        except FileNotFoundError:
            found = None
        if found is None or not stat.S_ISREG(found.st_mode) or found.st_size != info.size:
            raise StoreError("error", f"incomplete download of {info.path}")
        complete[note_id] = file
    if verify and complete:
        got: list[str | None] = store.hashes([staging / infos[note_id].path for note_id in complete])
        for note_id, found_hash in zip(complete, got, strict=True):
            if found_hash is not None and found_hash != infos[note_id].hash:
                raise StoreError("error", f"{infos[note_id].path} did not download with the hash it was told")
    cache.add(complete, remote={note_id: info.hash for note_id, info in infos.items()})
