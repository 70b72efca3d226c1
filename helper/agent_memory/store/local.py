"""A folder store (`file:///abs/path`): the bucket layout on a local or shared drive.

Writes go to a temporary name in the destination folder and are then hard-linked into place, which
fails if the name exists: two machines on a shared drive can never overwrite each other's objects. Each write is
then appended to the store's record of changes (`local_record`), which `changes` reads from a cursor: a refresh
with nothing new reads a few bytes instead of listing the folder.

A folder store never leads outside itself: every name below the root is looked up without following a link,
and a file is trusted only as opened (see `local_tree`). An entry that fails is an UnsafeObject: `list` leaves it
out and names it in `skipped`, the other operations refuse it. What the store creates is owner-only whatever the
umask: folders 0700, files 0600.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import AgentMemoryError
from ..fsutil import FILE_MODE, make_dirs, write_all
from . import local_record
from .base import (
    FolderDenied,
    FolderMissing,
    Listing,
    ObjectConflict,
    ObjectInfo,
    Store,
    StoreError,
    UnsafeObject,
    oversized,
)
from .change_feed import Replay, Unfollowable
from .local_tree import Folder, Untrusted, open_root

_NO_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK)  # how a filesystem without hard links refuses one
MAX_DEPTH = 32  # folders below a listed prefix; the layout needs a handful, a deeper tree is refused
BLOCK = 1 << 20  # bytes copied at a time by `fetch`
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOT_NAMES = frozenset(("", ".", ".."))  # path parts that name no object


class FolderStore(Store):
    """Objects as files below `root`."""

    hashed = False  # objects are written once, by an exclusive link, and never rewritten: their size says enough
    direct = True  # its files are read where they are: a fill copies each note once, through memory (`read_many`)

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uri = "file://" + str(root)

    def ensure(self, *, create: bool) -> bool:
        if not self.root.exists():
            if not create:
                raise FolderMissing(self.root)
            if not self.root.parent.is_dir():
                raise StoreError("error", f"its parent folder {self.root.parent} does not exist")
            os.mkdir(self.root, 0o700)  # the umask can only take bits away, and 0700 has none for others
            return True
        if not self.root.is_dir():
            raise StoreError("error", f"{self.root} is not a folder")
        return False  # its privacy was checked when it was opened (`check_private`)

    def _parts(self, path: str) -> list[str]:
        parts = path.split("/")
        if not path or path.startswith("/") or not _NOT_NAMES.isdisjoint(parts) or "\\" in path:
            raise StoreError("error", f"invalid object path {path!r}")
        return parts

    def _reachable(self) -> None:
        if not self.root.is_dir():
            raise FolderMissing(self.root)

    def _unsafe(self, failure: Untrusted) -> UnsafeObject:
        return UnsafeObject(failure.where, failure.why, str(self.root.joinpath(*failure.where.split("/"))))

    @contextlib.contextmanager
    def _folder(self, parts: list[str], *, create: bool = False) -> Iterator[Folder]:
        """The folder at `parts` below the root (made if `create`), open for the block. The root itself is
        trusted as configured: only the names below it are the store's."""
        folder = open_root(str(self.root))
        try:
            for name in parts:
                inner = folder.child(name, create=create)
                folder.close()
                folder = inner
            yield folder
        except Untrusted as exc:
            raise self._unsafe(exc) from None
        finally:
            folder.close()

    def _read(self, path: str, limit: int | None = None) -> bytes | None:
        """The object's bytes, None if there is none; UnsafeObject if it cannot be trusted, OversizedObject if it is
        larger than `limit`."""
        parts = self._parts(path)
        try:
            with self._folder(parts[:-1]) as folder:
                fd = folder.open_file(parts[-1])
                size = os.fstat(fd).st_size
                if limit is not None and size > limit:
                    os.close(fd)
                    raise oversized(self, path, size, limit)
                data = _read_all(fd, limit)
                if limit is not None and len(data) > limit:  # it grew after the check
                    raise oversized(self, path, len(data), limit)
                return data
        except (FileNotFoundError, NotADirectoryError):
            return None
        except Untrusted as exc:
            raise self._unsafe(exc) from None

    def put(self, path: str, data: bytes) -> None:
        self.put_many([(path, data)])

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        self._reachable()
        for path, data in objects:
            with _as_store_error():
                self._put_one(path, data)

    def _put_one(self, path: str, data: bytes) -> None:
        if not self._holds(path, data):
            self._link_new(path, data)
        # also when it was there already: a put retried after its first record failed records it now (a line
        # twice says nothing new)
        self._record(path, len(data))

    def _link_new(self, path: str, data: bytes) -> None:
        parts = self._parts(path)
        with self._folder(parts[:-1], create=True) as folder:
            tmp = folder.create_temporary(data)
            try:
                try:
                    folder.link(tmp, parts[-1])  # atomic and exclusive: fails if another writer got there first
                except FileExistsError:
                    self._require_same(path, data)
                except OSError as exc:
                    if exc.errno not in _NO_LINKS:
                        raise
                    # filesystems without hard links: check, then rename (a narrow race we accept there)
                    if not self._holds(path, data):
                        folder.rename(tmp, parts[-1])
            finally:
                with contextlib.suppress(FileNotFoundError):
                    folder.unlink(tmp)

    def _record(self, path: str, size: int) -> None:
        """Append the object's line to the record of changes, made with its header if there is none yet."""
        with self._folder([]) as root:
            try:
                fd = root.open_append(local_record.NAME)
            except FileNotFoundError:
                _start_record(root)
                fd = root.open_append(local_record.NAME)
            try:
                os.write(fd, local_record.line(path, size))  # one write: concurrent appends never interleave
                full = os.fstat(fd).st_size > local_record.ROTATE_BYTES
            finally:
                os.close(fd)
            if full:
                _start_record(root, replacing=True)  # see `local_record`: readers of the old one list

    def changes(self, cursor: str | None, prefix: str) -> Replay:
        self._reachable()
        try:
            with self._folder([]) as root:
                try:
                    fd = root.open_file(local_record.NAME)
                except FileNotFoundError:
                    if cursor is not None:
                        raise
                    # a store filled before the record existed, or by other tools: the listing this head is read
                    # for covers what is there, and the record tells what comes after it
                    _start_record(root)
                    fd = root.open_file(local_record.NAME)
                try:
                    generation = local_record.generation(fd)
                    if cursor is None:
                        return Replay(f"{generation}:{local_record.head(fd)}", {})
                    told, _, offset = cursor.partition(":")
                    if told != generation or not offset.isdigit() or len(offset) > 20:
                        raise Unfollowable("reset", "the folder store's record of changes was replaced")
                    if not local_record.HEADER_BYTES <= int(offset) <= os.fstat(fd).st_size:
                        raise Unfollowable("reset", "the folder store's record of changes was cut short")
                    end, found = local_record.replay(fd, int(offset), prefix.strip("/") + "/")
                    return Replay(f"{generation}:{end}", found)
                finally:
                    os.close(fd)
        except FileNotFoundError:
            raise Unfollowable("unsupported", "the folder store has no record of changes yet") from None
        except UnsafeObject as exc:
            raise Unfollowable("unsafe", exc.detail) from None
        except OSError as exc:
            raise Unfollowable("unreadable", f"the folder store's record of changes cannot be read ({exc})") from None

    def _holds(self, path: str, data: bytes) -> bool:
        found = self._read(path)
        if found is not None and found != data:
            raise ObjectConflict(path)
        return found is not None

    def _require_same(self, path: str, data: bytes) -> None:
        if self._read(path) != data:
            raise ObjectConflict(path)

    def list(self, prefix: str) -> Listing:
        self._reachable()
        base = prefix.strip("/")
        found: list[ObjectInfo] = []
        skipped: list[UnsafeObject] = []
        with _as_store_error():
            try:
                with self._folder(self._parts(base)) as folder:
                    self._walk(folder, found, skipped)
            except (FileNotFoundError, NotADirectoryError):
                pass  # a folder nobody has written to yet
            except UnsafeObject as exc:  # a link on the way to the prefix: nothing below it is the store's
                skipped.append(exc)
        return Listing(sorted(found, key=lambda info: info.path), sorted(skipped, key=lambda exc: exc.path))

    def _walk(self, top: Folder, found: builtins.list[ObjectInfo], skipped: builtins.list[UnsafeObject]) -> None:
        """Add every object below `top` to `found`, and every entry that cannot be trusted to `skipped`.

        Depth first with a stack, so that a deep tree costs neither Python's recursion nor more descriptors
        than its depth; links to folders are never entered.
        """
        stack = [(top, iter(top.entries()))]
        try:
            while stack:
                folder, entries = stack[-1]
                entry = next(entries, None)
                if entry is None:
                    stack.pop()
                    if folder is not top:
                        folder.close()
                    continue
                if entry.name.startswith("."):  # temporary files of writers in progress
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(info.st_mode):
                        if len(stack) > MAX_DEPTH:
                            raise Untrusted(
                                folder.relative(entry.name), f"is nested more than {MAX_DEPTH} folders deep"
                            )
                        inner = folder.child(entry.name)
                        stack.append((inner, iter(inner.entries())))
                    elif (why := folder.why_not(entry.name, info)) is not None:
                        raise Untrusted(folder.relative(entry.name), why)
                    else:
                        found.append(ObjectInfo(folder.relative(entry.name), info.st_size))
                except Untrusted as exc:
                    skipped.append(self._unsafe(exc))
                except (FileNotFoundError, NotADirectoryError):
                    continue  # removed or replaced meanwhile: the next listing sees what is there
        finally:
            for folder, _entries in stack[1:]:
                folder.close()

    def fetch(self, objects: builtins.list[ObjectInfo], dest: Path) -> None:
        self._reachable()
        with _as_store_error(), contextlib.ExitStack() as opened:
            folders: dict[str, tuple[Folder, Path]] = {}  # objects share a few folders: open each (and its copy) once
            for info in objects:
                parts = self._parts(info.path)
                where = "/".join(parts[:-1])
                if where not in folders:
                    target = dest.joinpath(*parts[:-1])
                    make_dirs(target)  # owner-only when `dest` is in the cache
                    folders[where] = (opened.enter_context(self._folder(parts[:-1])), target)
                folder, target = folders[where]
                try:
                    source = folder.open_file(parts[-1])
                except Untrusted as exc:
                    raise self._unsafe(exc) from None
                _copy(source, target / parts[-1])

    def read_many(self, objects: builtins.list[ObjectInfo]) -> Iterator[tuple[ObjectInfo, bytes]]:
        self._reachable()
        with _as_store_error(), contextlib.ExitStack() as opened:
            folders: dict[str, Folder] = {}  # notes share one folder: open it once
            for info in objects:
                *parts, name = self._parts(info.path)
                where = "/".join(parts)
                if where not in folders:
                    folders[where] = opened.enter_context(self._folder(parts))
                try:
                    data = folders[where].read_file(name, info.size)
                except Untrusted as exc:
                    raise self._unsafe(exc) from None
                yield info, data

    def removal(self, path: str) -> str:
        return f"rm {shlex.quote(str(self.root.joinpath(*self._parts(path))))}"

    def holds(self, path: str, data: bytes) -> bool:
        self._reachable()
        with _as_store_error():
            return self._holds(path, data)

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        self._reachable()
        with _as_store_error():
            return self._read(path, limit)


def _start_record(root: Folder, *, replacing: bool = False) -> None:
    """Make the record of changes, with its header only, unless another process made it first (then theirs is the
    one): linked into place as objects are, renamed where the filesystem has no hard links. `replacing`: a new
    record in place of a full one, renamed over it."""
    tmp = root.create_temporary(local_record.header())
    try:
        if replacing:
            root.replace(tmp, local_record.NAME)
            return
        root.link(tmp, local_record.NAME)
    except FileExistsError:
        pass
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        try:
            root.lstat(local_record.NAME)
        except FileNotFoundError:
            root.rename(tmp, local_record.NAME)  # the narrow race accepted for objects there too
    finally:
        with contextlib.suppress(FileNotFoundError):
            root.unlink(tmp)


def _read_all(fd: int, limit: int | None = None) -> bytes:
    with open(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit + 1)  # grown meanwhile: not read further


def _copy(source: int, target: Path) -> None:
    """Copy the open file `source` (closed after) to a new owner-only file `target`, in blocks, whatever it holds now
    (the caller checks the copy against the listing)."""
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
        writer = os.open(target, flags, FILE_MODE)
        try:
            while chunk := os.read(source, BLOCK):
                write_all(writer, chunk)
        finally:
            os.close(writer)
    finally:
        os.close(source)


@contextlib.contextmanager
def _as_store_error() -> Iterator[None]:
    try:
        yield
    except (StoreError, AgentMemoryError):  # ours already, as is a link planted in the cache it fetches into
        raise
    except PermissionError as exc:
        raise FolderDenied(str(exc.filename)) from exc
    except OSError as exc:
        raise StoreError("error", f"{exc.strerror or exc} ({exc.filename})") from exc
