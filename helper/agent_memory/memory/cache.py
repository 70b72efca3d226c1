"""The per-bucket cache: exact copies of the notes, the record of what each copy must be, and a search pack.

Layout, mirroring the bucket: `<cache>/<bucket key>/projects/<project>/notes/<id>.md`. Beside `notes/`:
- `checksums` (see `checksums`): the size and CRC-32 of each verified note, and its hash in the listing. A
  line is written only from a verified source: a download checked against the listing, bytes this machine
  uploaded or read from the bucket, or a copy whose hash is the listing's; never from the cached file alone.
  `read` and `search` show a cached note only if it still matches its line, and a refresh compares each line
  with the listing.
- `search.pack` (see `pack`): derived from the verified notes; appended to, and rebuilt whenever it is
  damaged or disagrees with them.
- `stands.json`: where the cache stands in the bucket (see `refresh`): the change feed's cursor after the last
  refresh (or, for a bucket without a feed to follow, the `updatedAt` it showed), when the last complete
  listing was, and how `checksums` and the pack looked then (a cheap sign of changes made to them since).
  Forgotten whenever damage is found, so that the next refresh lists.
- `damaged.json`: the notes of the pack whose fields cannot be used (`{"id", "problem"}`), written with the pack
  (rebuilt or appended to) and the pack's signature then: `status` lists them without reading the pack; a
  record whose signature is not the pack's (an earlier version, a crash between the two writes) is made again.
- `report.json`: what the last listing skipped (unsafe or oversized objects, with why and the command that clears
  each), and the notes listings found gone from the bucket and dropped here (the newest GONE_KEPT), for `status`.

The cache is only a cache: a note that is damaged or unverified here is never shown, it is fetched again.
Writers hold the project's lock; readers take it only when what they read looks wrong (a writer may be
halfway), and check again.
"""

from __future__ import annotations

import errno
import os
from binascii import crc32
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import commands, paths
from ..fsutil import (
    FILE_MODE,
    UnsafeLocalFile,
    append,
    locked,
    make_dirs,
    open_own,
    read_json,
    read_own,
    remove_tree,
    try_locked,
    write_all,
    write_atomic,
    write_json_atomic,
)
from ..store.base import StoreError
from . import checksums, pack
from .checksums import Checksum

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypeVar

    from ..contract import DamagedNote, Skipped
    from .shape import CacheReport

    Consumed = TypeVar("Consumed")  # what a search of the pack gives back

TAIL = 4 << 20  # more than the longest record (a 1 MiB note, lowercased)
SMALL_RECORD = 64 << 10  # bytes of refresh.json and stands.json read at most: they hold a few lines
NOTE_FILE_MAX = 4 << 20  # bytes of a cached note read at most: more than any note (1 MiB and its frontmatter)
STANDS = "stands.json"
REPORT = "report.json"
DAMAGED = "damaged.json"
DAMAGED_MAX = 4 << 20  # bytes of damaged.json read at most: past that, the pack is read instead
REPORT_MAX = 1 << 20  # bytes of the report read at most: its lists are kept short
GONE_KEPT = 100  # notes found gone that `status` keeps telling, newest first
HELD_RECORDS = 16 << 20  # bytes of pack records held before they are written (with their lines): bounded memory
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


class Stand:
    """Where a project's cache stands (see `ProjectCache.stand`): the change feed's cursor, or where the bucket has
    no feed to follow, the `updatedAt` it showed; when it was last listed whole; how its bookkeeping looked."""

    __slots__ = ("cursor", "updated_at", "listed", "files")

    def __init__(self, cursor: str | None, updated_at: str | None, listed: str, files: list[object] | None) -> None:
        self.cursor = cursor
        self.updated_at = updated_at
        self.listed = listed
        self.files = files


class ProjectCache:
    """The cached notes of one project of one bucket."""

    def __init__(self, bucket_uri: str, project: str) -> None:
        self.project = project
        self.dir = paths.bucket_cache(bucket_uri) / "projects" / project
        self.notes = self.dir / "notes"
        self.pack = self.dir / "search.pack"
        self.checksum_file = self.dir / "checksums"
        self.discarded: set[str] = set()  # damaged copies removed by this object, to be fetched again
        # `files_signature` as this object's last `Adding` left them agreeing (see `check_pack`), or None
        self.agreed: list[list[int] | None] | None = None

    def note_file(self, note_id: str) -> Path:
        """Where the cached copy of a note is (it may not exist)."""
        return self.notes / f"{note_id}.md"

    # -- reading ------------------------------------------------------------------------------------------

    def sizes(self) -> dict[str, int]:
        """The size of every cached note file (temporary downloads live elsewhere)."""
        found = {}
        try:
            with os.scandir(self.notes) as entries:
                for entry in entries:
                    if entry.name.endswith(".md") and not entry.name.startswith("."):
                        try:
                            found[entry.name[:-3]] = entry.stat(follow_symlinks=False).st_size  # a link: fetched again
                        except FileNotFoundError:  # dropped meanwhile
                            pass
        except FileNotFoundError:
            pass
        return found

    def verified_checksums(self) -> dict[str, Checksum]:
        """What each verified note must be: `{id: (size, crc32, remote hash or None)}`."""
        return checksums.read(self.checksum_file)

    def verified_checksums_of(self, note_ids: list[str] | set[str] | Mapping[str, object]) -> dict[str, Checksum]:
        """`verified_checksums` of these notes only (for a few, cheaper than parsing every line)."""
        return checksums.read(self.checksum_file, note_ids)

    def note_ids(self) -> set[str]:
        """The ids of the verified notes the cache holds (their copies are checked when they are read)."""
        return checksums.ids(self.checksum_file)

    def verified(self, note_ids: list[str]) -> dict[str, bytes | None]:
        """Each cached note's bytes if they are exactly what was cached from a verified source, else None."""
        found = self._intact(note_ids)
        if any(data is None and self.note_file(note_id).exists() for note_id, data in found.items()):
            try:
                with self.lock():
                    found = self._intact(note_ids)
            except OSError:  # a writer may be between a file and its line
                pass
        return found

    def _intact(self, note_ids: list[str] | set[str]) -> dict[str, bytes | None]:
        """`{id: bytes or None}`: each cached copy's bytes if they match its line."""
        known = checksums.read(self.checksum_file, note_ids)
        return {note_id: self.matching(note_id, known.get(note_id)) for note_id in note_ids}

    def matching(self, note_id: str, expected: Checksum | None) -> bytes | None:
        """The cached copy's bytes if they have the size and CRC-32 of `expected`, else None. Its path is built as
        text: the view checks 50,000 notes this way, where a `Path` per note cost a second."""
        try:
            data = read_own(f"{self.notes}/{note_id}.md", NOTE_FILE_MAX)
        except (FileNotFoundError, UnsafeLocalFile):  # a link in place of a copy is damage: removed, fetched again
            return None
        return data if expected is not None and (len(data), crc32(data)) == expected[:2] else None

    def search_pack(self, needle: bytes, consume: Callable[[Iterator[bytes]], Consumed]) -> Consumed:
        """`consume(headers)` of the pack records whose text contains `needle` (see `pack.scan`)."""
        return self.search_hits((needle,) if needle else (), lambda hits: consume(hit.header for hit in hits))

    def search_hits(
        self,
        needles: tuple[bytes, ...],
        consume: Callable[[Iterator[pack.Hit]], Consumed],
        corrections: dict[str, tuple[str, str]] | None = None,
    ) -> Consumed:
        """`consume(hits)` of the pack records whose text contains one of `needles` (all records if there is
        none), filling `corrections` (see `pack.hits`).

        A pack found torn or missing is checked again and repaired under the lock, and read there once more.
        """
        if self.pack.exists() or not self.checksum_file.exists():
            try:
                return consume(pack.hits(self.pack, needles, corrections))
            except pack.Damaged:
                pass
        with self.lock():
            self._repair_locked()
            if corrections is not None:
                corrections.clear()  # what the damaged read found
            return consume(pack.hits(self.pack, needles, corrections))

    def damaged_notes(self) -> list[DamagedNote]:
        """The notes of the pack whose fields cannot be used, as `{"id", "problem"}` (see `notes.fields`), from
        `damaged.json` when it describes the pack as it is; otherwise read from the pack, and recorded."""
        before = self._pack_signature()
        recorded = self._damaged_record()
        if recorded is not None and before is not None and recorded[0] == before:
            return recorded[1]

        def damaged(headers: Iterator[bytes]) -> list[DamagedNote]:
            found = (pack.fields(header) for header in headers)
            return [{"id": f["id"], "problem": f["problem"]} for f in found if f.get("problem")]

        found = self.search_pack(b"", damaged)
        if before is not None and self._pack_signature() == before:  # nobody wrote the pack meanwhile
            try:
                self._record_damaged(found, before)
            except OSError:  # a read-only cache (a sandbox): read again next time
                pass
        return found

    def _pack_signature(self) -> list[int] | None:
        return self.files_signature()[1]

    def _damaged_record(self) -> tuple[list[int], list[DamagedNote]] | None:
        """`(the pack's signature, the damaged notes)` as `damaged.json` holds them, None if it cannot be used."""
        try:
            found = read_json(self.dir / DAMAGED, DAMAGED_MAX)
        except (ValueError, OSError):
            return None
        if not isinstance(found, dict) or not isinstance(notes := found.get("notes"), list):
            return None
        signature = found.get("pack")
        if not (isinstance(signature, list) and len(signature) == 3 and all(type(v) is int for v in signature)):
            return None
        if not all(_strings(item, {"id", "problem"}) for item in notes):
            return None
        return signature, notes

    def _record_damaged(self, notes: list[DamagedNote], signature: list[int] | None) -> None:
        """Write `damaged.json`: these damaged notes, for the pack of this signature."""
        write_json_atomic(self.dir / DAMAGED, {"pack": signature, "notes": notes})

    # -- writing ------------------------------------------------------------------------------------------

    def add(self, notes: dict[str, bytes | Path], remote: dict[str, str | None] | None = None) -> None:
        """Put notes from a verified source into the cache: bytes, or files on this filesystem, moved in.

        A copy that is already there and intact is kept; a damaged one is replaced. `remote` gives the hashes
        the listing showed for them, when it shows any.
        """
        remote = remote or {}
        with self.adding(notes) as adding:
            for note_id, source in notes.items():
                adding.put(note_id, source, remote.get(note_id))

    def adding(self, note_ids: list[str] | Mapping[str, object]) -> Adding:
        """Notes of `note_ids` to put (`Adding.put`) in a block that holds the lock (`with cache.adding(ids) as
        adding`); what was put is recorded when the block ends, also when it fails."""
        return Adding(self, note_ids)

    def drop(self, note_ids: set[str]) -> None:
        """Remove notes that the bucket no longer lists, and rebuild the pack without them."""
        with self.lock():
            self._forget_locked(note_ids)
            self._rebuild_locked()

    def discard(self, note_ids: set[str]) -> None:
        """Remove cached copies found damaged (unless another process has replaced them meanwhile)."""
        with self.lock():
            damaged = {note_id for note_id, data in self._intact(note_ids).items() if data is None}
            self._forget_locked(damaged)
            if damaged:
                self.forget_stand()  # the feed will not tell them again: the next refresh lists
        self.discarded |= damaged

    def _repair_locked(self) -> None:
        """Rebuild the pack if it is missing or damaged."""
        try:
            if self.pack.exists():
                for _header in pack.scan(self.pack, b""):
                    pass
                return
        except pack.Damaged:
            pass
        self._rebuild_locked()

    def check_pack(self) -> None:
        """Rebuild the pack unless every record is intact and they describe exactly the verified notes.

        Not read at all when `checksums` and the pack are as this object's last `Adding` left them, agreeing: a
        fill appended every record itself, from the bytes of the note whose line it appended (a change made
        since by anyone changes their signature, and they are read).
        """
        if self.agreed is not None and self.files_signature() == self.agreed:
            return
        try:
            ids = [pack.record_id(header) for header in pack.scan(self.pack, b"")]
        except pack.Damaged:
            ids = None
        if ids is None or len(ids) != len(set(ids)) or set(ids) != self.verified_checksums().keys():
            with self.lock():
                self._rebuild_locked()

    def lock(self) -> locked:
        """The cache's lock, held by a block that changes it (`with cache.lock():`)."""
        return locked(self.dir / ".lock")

    def _write(self, target: str, data: bytes, verified: bool) -> bool:
        """Write a note's file in place (its folder exists); whether one was there. A copy that a line verifies
        is replaced whole, so that a reader sees the one or the other; one that none does is never shown (a fill
        killed while writing it): removed first, never written through (it may be a link)."""
        try:
            fd = os.open(target, _NEW_FILE, FILE_MODE)
        except FileExistsError:
            if verified:
                write_atomic(Path(target), data)
                return True
            os.unlink(target)
            fd = os.open(target, _NEW_FILE, FILE_MODE)
            existed = True
        else:
            existed = False
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        return existed

    def _record(self, lines: list[bytes]) -> None:
        """Append checksum lines; after a torn line (a crash mid-append) the file is rewritten whole first."""
        if checksums.ends_torn(self.checksum_file):
            kept = [checksums.line(note_id, checksum) for note_id, checksum in self.verified_checksums().items()]
            write_atomic(self.checksum_file, b"".join(kept + lines))
        else:
            append(self.checksum_file, lines)

    def _forget_locked(self, note_ids: set[str]) -> None:
        if not note_ids:
            return
        for note_id in note_ids:
            try:
                self.note_file(note_id).unlink()
            except FileNotFoundError:
                pass
        kept = {key: value for key, value in self.verified_checksums().items() if key not in note_ids}
        write_atomic(self.checksum_file, b"".join(checksums.line(note_id, value) for note_id, value in kept.items()))

    def _pack_appendable(self, empty: bool) -> bool:
        """Whether records can be appended to the pack: it ends with a whole record (an append cut by a crash would
        not), or there is none and there should be none (`empty`: no note was verified before); otherwise it is
        rebuilt from the notes, which reads each of them."""
        try:
            with open(open_own(self.pack), "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(0, size - TAIL))
                tail = handle.read()
        except FileNotFoundError:
            return empty
        except UnsafeLocalFile:  # a link in its place: rebuilt, which replaces the link
            return False
        return not tail or pack.ends_whole(tail)

    def _no_checksums(self) -> bool:
        """Whether no note is verified yet: `checksums` is missing or empty (a link in its place is not)."""
        try:
            return os.stat(self.checksum_file, follow_symlinks=False).st_size == 0
        except FileNotFoundError:
            return True

    def _rebuild_locked(self) -> None:
        """Write the pack again from the verified notes; copies that no longer match their line are removed."""
        known = self.verified_checksums()
        damaged = set()
        unusable: list[DamagedNote] = []  # notes whose fields cannot be used (`damaged.json`)

        def records() -> Iterator[bytes]:
            for note_id in sorted(known):
                data = self.matching(note_id, known[note_id])
                if data is None:
                    damaged.add(note_id)
                else:
                    record = pack.record(note_id, data)
                    if problem := pack.record_problem(record):
                        unusable.append({"id": note_id, "problem": problem})
                    yield record

        write_atomic(self.pack, records())
        self._record_damaged(unusable, self._pack_signature())
        self._forget_locked(damaged)
        if damaged:
            self.forget_stand()
        self.discarded |= damaged

    # -- refresh bookkeeping ------------------------------------------------------------------------------

    def record_refresh(self, when: str) -> None:
        """Remember when (a `clock.utc_now()` stamp) the cache last matched the bucket."""
        write_json_atomic(self.dir / "refresh.json", {"last_success": when})

    def last_refresh(self) -> str | None:
        """When the cache last matched the bucket, or None."""
        try:
            found = read_json(self.dir / "refresh.json", SMALL_RECORD, {})
            last = found.get("last_success") if isinstance(found, dict) else None
            return last if isinstance(last, str) else None
        except (ValueError, OSError):
            return None

    def record_report(self, skipped: list[Skipped], gone: list[str], when: str) -> None:
        """Keep what a listing skipped (replacing what the last one skipped) and the notes it found gone (added
        to those found before, with `when`, a `clock.utc_now()` stamp), for `status`."""
        before = self.report()
        kept = [{"path": path, "at": when} for path in gone] + [g for g in before["gone"] if g["path"] not in gone]
        if skipped or kept or before["skipped"]:
            write_json_atomic(self.dir / REPORT, {"skipped": skipped, "gone": kept[:GONE_KEPT]})

    def report(self) -> CacheReport:
        """`{"skipped": [{"path", "reason", "detail", "next"}], "gone": [{"path", "at"}]}` as the last listings left
        them (empty when unreadable: the next listing writes it again)."""
        try:
            found = read_json(self.dir / REPORT, REPORT_MAX, {})
            found = found if isinstance(found, dict) else {}  # anything else is damaged: read as nothing kept
            skipped, gone = found.get("skipped"), found.get("gone")
            if isinstance(skipped, list) and isinstance(gone, list):
                fields = ({"path", "reason", "detail", "next"}, {"path", "at"})
                return {
                    "skipped": [s for s in skipped if _strings(s, fields[0])],
                    "gone": [g for g in gone if _strings(g, fields[1])],
                }
        except (ValueError, OSError):
            pass
        return {"skipped": [], "gone": []}

    def stand(self) -> Stand | None:
        """Where the cache stood after its last refresh in the bucket's change feed, or None (never recorded,
        forgotten after damage, or not readable: then the next refresh lists)."""
        try:
            found = read_json(self.dir / STANDS, SMALL_RECORD)
        except (ValueError, OSError):
            return None
        if not isinstance(found, dict):
            return None
        cursor, updated_at, listed, files = (found.get(key) for key in ("cursor", "updated_at", "listed", "files"))
        if not all(
            value is None or (isinstance(value, str) and 0 < len(value) <= 1000) for value in (cursor, updated_at)
        ):
            return None
        if (cursor is None) == (updated_at is None) or not isinstance(listed, str):
            return None  # exactly one of them says where the cache stands
        return Stand(cursor, updated_at, listed, files if isinstance(files, list) else None)

    def record_stand(self, listed: str, *, cursor: str | None = None, updated_at: str | None = None) -> None:
        """Remember that the cache holds every change up to `cursor` (or up to the bucket's `updated_at`), and
        when it was last listed whole."""
        stand = {"cursor": cursor, "updated_at": updated_at, "listed": listed, "files": self.files_signature()}
        write_json_atomic(self.dir / STANDS, stand)

    def forget_stand(self) -> None:
        """Make the next refresh list the whole project (damage was found, or the feed cannot be followed)."""
        try:
            os.unlink(self.dir / STANDS)
        except FileNotFoundError:
            pass

    def files_signature(self) -> list[list[int] | None]:
        """How `checksums` and the pack look on disk (inode, size, modification time), None for a missing one."""
        found: list[list[int] | None] = []
        for file in (self.checksum_file, self.pack):
            try:
                info = os.stat(file, follow_symlinks=False)
            except FileNotFoundError:
                found.append(None)
            else:
                found.append([info.st_ino, info.st_size, info.st_mtime_ns])
        return found

    def sweep(self) -> None:
        """Remove the download folders of killed processes (a folder in use is locked by its process)."""
        leftovers = list(self.dir.glob(".download-*"))
        if leftovers:
            with self.lock():
                for folder in leftovers:
                    with try_locked(folder / ".lock") as unused:
                        if unused:
                            remove_tree(folder)


class Adding:
    """Notes being put into a project's cache, under its lock (`ProjectCache.adding`).

    Each note's file is written first (in place: see `ProjectCache._write`), then, a batch at a time, the checksum
    lines, then the pack records: a process killed at any point leaves files that no line verifies (never shown,
    fetched again) or lines whose records are missing (the pack is checked against them, and rebuilt); never a
    line before its file is whole, nor a record without its line. A first fill makes the whole pack by appends.
    """

    def __init__(self, cache: ProjectCache, note_ids: list[str] | Mapping[str, object]) -> None:
        self.cache = cache
        self.note_ids = note_ids
        self.lock = cache.lock()

    def __enter__(self) -> Adding:
        """Take the cache's lock, and see what it holds."""
        self.lock.__enter__()
        try:
            self._begin(self.cache, self.note_ids)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        """Record what was put (also when the block failed), then let the lock go."""
        try:
            self.finish()
        finally:
            self.lock.__exit__(None, None, None)

    def _begin(self, cache: ProjectCache, note_ids: list[str] | Mapping[str, object]) -> None:
        # whether `checksums` and the pack agree as found: as this cache's last Adding left them, or both empty
        found = cache.files_signature()
        own = found == cache.agreed  # the pack ends with a whole record: the last one appended here
        self.agreeing = own or all(each is None or each[1] == 0 for each in found)
        cache.agreed = None  # until this one has finished
        self.recorded: set[str] = set()  # the notes whose records were appended
        self.known = checksums.read(cache.checksum_file, note_ids)
        self.first = cache._no_checksums()  # no note verified yet: nothing there can have a record in the pack
        self.appendable = own or cache._pack_appendable(self.first)  # its end read only when it may be torn
        self.lines: list[bytes] = []
        self.records: list[bytes] = []
        self.held = 0  # bytes of records not written yet
        self.added = self.replaced = False
        self.folder = ""  # the notes folder with its separator, once made

    def holds(self, note_id: str, size: int, remote: str | None) -> bool:
        """Whether the note is cached already with this size (and remote hash, if given), intact: put meanwhile by
        another process, which need not be read again."""
        current = self.known.get(note_id)
        return (
            current is not None
            and current[0] == size
            and remote in (None, current[2])
            and self.cache.matching(note_id, current) is not None
        )

    def put(self, note_id: str, source: bytes | Path, remote: str | None) -> None:
        """Put one note: its bytes (written in place), or a file on this filesystem (moved in whole)."""
        data = source if isinstance(source, bytes) else read_own(source, NOTE_FILE_MAX)
        checksum = (len(data), crc32(data), remote)
        current = self.known.get(note_id)
        if current is not None and current[:2] == checksum[:2] and self.cache.matching(note_id, current) is not None:
            if remote is not None and current[2] != remote:
                self.lines.append(checksums.line(note_id, checksum))  # same bytes, remote hash now known
            return  # cached already: notes are immutable
        if not self.folder:
            make_dirs(self.cache.notes)  # once, not per note: checking the folders on the way costs a few stats
            self.folder = os.path.join(self.cache.notes, "")
        target = f"{self.folder}{note_id}.md"  # `note_file`, without building a Path per note
        if isinstance(source, bytes):
            existed = self.cache._write(target, data, current is not None)
        else:
            existed = not self.first and os.path.exists(target)  # not looked for when it cannot matter
            if os.fspath(source) != target:  # a download: made private, then moved in whole
                os.chmod(source, FILE_MODE)
                os.replace(source, target)
        # a file there that no line verifies may have a record in the pack, unless none is verified at all
        self.replaced = self.replaced or current is not None or (existed and not self.first)
        self.lines.append(checksums.line(note_id, checksum))
        self.added = True
        if self.appendable and not self.replaced:  # else the pack is rebuilt: no record is needed
            record = pack.record(note_id, data)
            if note_id in self.recorded:
                self.agreeing = False  # put twice: two records of one note, which `check_pack` finds
            self.recorded.add(note_id)
            self.records.append(record)
            self.held += len(record)
            if self.held > HELD_RECORDS:
                self._write_down()

    def _write_down(self) -> None:
        """Append the lines of the notes put so far, then their records."""
        if self.lines:
            self.cache._record(self.lines)
        if self.records and not self.replaced:
            recorded: tuple[list[int] | None, list[DamagedNote]] | None = self.cache._damaged_record()
            before = self.cache._pack_signature()
            append(self.cache.pack, self.records)
            if before is None or before[1] == 0:  # a new pack: no damaged note yet
                recorded = (before, [])
            if recorded is not None and recorded[0] == before:  # it describes the pack: extended with these
                unusable = [(record, pack.record_problem(record)) for record in self.records]
                added: list[DamagedNote] = [
                    {"id": pack.record_id(r[pack.PREFIX :]), "problem": p} for r, p in unusable if p
                ]
                self.cache._record_damaged(recorded[1] + added, self.cache._pack_signature())
        self.lines, self.records, self.held = [], [], 0

    def finish(self) -> None:
        self._write_down()
        if self.added and (self.replaced or not self.appendable):
            self.cache._rebuild_locked()  # a replaced note's old record must go; a torn pack is rebuilt
        elif self.agreeing and self.appendable:  # each line appended has its record, appended after it
            self.cache.agreed = self.cache.files_signature()


def _strings(value: object, keys: set[str]) -> bool:
    return isinstance(value, dict) and value.keys() == keys and all(isinstance(v, str) for v in value.values())


def cache_not_written(failure: OSError) -> StoreError | None:
    """Why a refresh answers from the cache as it is, when the cache could not be written (Codex's sandbox without
    the consent, a read-only home); None for any other failure (a store's own folder, a full disk), which is not
    this case."""
    where = Path(os.fsdecode(failure.filename)) if failure.filename is not None else None
    if (
        failure.errno not in (errno.EROFS, errno.EACCES, errno.EPERM)
        or not where
        or not where.is_relative_to(paths.cache_dir())
    ):
        return None
    return StoreError(
        "error",
        f"the local cache cannot be written here ({failure.strerror}: {failure.filename}), so it was not refreshed; "
        f"in Codex's sandbox, the user can allow it with: {commands.line('codex-sandbox', 'allow')}",
    )
