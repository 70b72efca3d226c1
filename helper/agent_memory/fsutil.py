"""Atomic file writes, bounded reads, private folders and an advisory lock: every state write and read goes
through here.

Local state is private whatever the umask: below the helper's config, cache and state roots every folder
we create is 0700 and every file 0600 (notes are private, and the machine may be shared). Folders above a
root, and outside the roots (the agents' folders), get ordinary permissions, 0755: explicit, because a
permissive umask would leave them writable by others.

Below the roots nothing leads elsewhere: a file opened there for writing, appending or locking (and the cache
files whose reading decides what is shown) is refused if it is a symbolic link, has another hard link or belongs
to another user, as is a folder on the way that is a link or another user's (UnsafeLocalFile). A planted
`checksums -> ~/.bashrc` would otherwise have the next refresh append to the user's shell start-up file. Every
read there (`read_own`) also refuses anything but a regular file within a bound for its kind, without waiting: a
FIFO or a link to `/dev/zero` in place of a record must not hang a command, nor a huge file exhaust it.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import stat
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

try:
    import fcntl
except ImportError:  # Windows: concurrent writers there only risk a redundant download
    fcntl = None  # type: ignore[assignment]  # Windows has no fcntl: every use tests for None

from . import paths
from .errors import AgentMemoryError

FILE_MODE = 0o600
DIR_MODE = 0o700
ORDINARY_DIR_MODE = 0o755  # outside our roots: what the agents' own folders usually have, never writable by others
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in place of a file must not block the open that refuses it
_BINARY = getattr(os, "O_BINARY", 0)  # Windows


class UnsafeLocalFile(AgentMemoryError, OSError):
    """A file or folder below our roots that could lead elsewhere; it was neither read nor written.

    Also an OSError, so that what only keeps a convenience up to date (the cache beside a save that succeeded)
    skips it as it skips a read-only or full disk; everything else shows its message and next step.
    """

    def __init__(self, path: Path | str, why: str, *, oversized: bool = False) -> None:
        quoted = shlex.quote(str(path))
        super().__init__(
            f"{path} {why}, so agent-memory will not use it: in its own folders it reads and writes only its own "
            "files, never through a link and never larger than it writes them. Nothing was written to it.",
            # a regular file too large may still hold someone's bytes: moved aside, never removed
            next_step=f"mv {quoted} {quoted}.damaged (agent-memory makes its own again), then run the command again"
            if oversized
            else f"rm {quoted} (that name only; agent-memory makes its own again), then run the command again",
        )
        self.path = str(path)
        self.why = why
        self.oversized = oversized


def make_dirs(folder: Path, mode: int = ORDINARY_DIR_MODE) -> None:
    """Create `folder` and its missing parents: owner-only at and below a root of ours (where every folder on the
    way must be a real folder of this user: UnsafeLocalFile), `mode` above and outside the roots."""

    root = next((root for root in paths.roots() if root == folder or root in folder.parents), None)
    if root is None:
        _make_missing(folder, mode)
        return
    if not root.is_dir():  # the root itself may be a link (a cache on another disk): the user's choice
        _make_missing(root.parent, mode)
        try:
            os.mkdir(root, DIR_MODE)  # the umask can only take bits away, and 0700 has none for others
        except FileExistsError:  # another process made it meanwhile
            pass
    level = root
    for name in folder.relative_to(root).parts:
        level = level / name
        try:
            info = os.lstat(level)
        except FileNotFoundError:
            try:
                os.mkdir(level, DIR_MODE)
            except FileExistsError:  # another process made it meanwhile
                pass
            info = os.lstat(level)
        if _is_link(info.st_mode):
            raise UnsafeLocalFile(level, "is a symbolic link")
        if not _owned(info):
            raise UnsafeLocalFile(level, f"belongs to another user (uid {info.st_uid})")


def _make_missing(folder: Path, mode: int) -> None:
    missing = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for level in reversed(missing):
        try:
            os.mkdir(level, mode)
        except FileExistsError:  # another process made it meanwhile
            pass


def write_atomic(path: Path, data: bytes | Iterable[bytes], *, mode: int | None = None, durable: bool = True) -> None:
    """Write `data` (bytes, or chunks of them) to `path` so that readers see the old file or the new one, never
    a mix. The file is 0600 unless `mode` says otherwise. Not `durable`: no fsync, for a record whose loss after a
    crash costs only the work of making it again (an fsync can cost a hook milliseconds on a busy disk)."""
    make_dirs(path.parent)
    tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, FILE_MODE)  # a name of its own
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in (data,) if isinstance(data, bytes) else data:
                handle.write(chunk)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is not None:  # made 0600 already
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def new_folder(parent: Path, prefix: str) -> Path:
    """A fresh, empty, owner-only folder in `parent` (made if missing), with a name no other process has."""
    make_dirs(parent)
    while True:
        folder = parent / f"{prefix}{os.urandom(6).hex()}"
        try:
            os.mkdir(folder, DIR_MODE)
            return folder
        except FileExistsError:
            continue


class scratch_folder:  # named as a function: `with scratch_folder(parent, prefix) as folder:`
    """A fresh folder (`new_folder`) for the block, removed with everything in it afterwards.

    This module's context managers are classes, not `contextlib` generators: every command loads this module, and
    `contextlib` (eighteen classes) costs a command's start-up about a millisecond."""

    def __init__(self, parent: Path, prefix: str) -> None:
        self.parent = parent
        self.prefix = prefix

    def __enter__(self) -> Path:
        self.folder = new_folder(self.parent, self.prefix)
        return self.folder

    def __exit__(self, *exc: object) -> None:
        remove_tree(self.folder)


def remove_tree(path: Path) -> None:
    """Remove a folder and everything in it, links included (never what they point at); quietly if it is gone."""
    _shutil().rmtree(path, ignore_errors=True)


def copy_as_is(source: Path, dest: Path) -> None:
    """Copy a file or a folder to `dest` exactly as it is: a link stays a link (never what it points at)."""
    if source.is_dir() and not source.is_symlink():
        _shutil().copytree(source, dest, symlinks=True)
    else:
        _shutil().copy2(source, dest, follow_symlinks=False)


def _shutil() -> ModuleType:
    """`shutil`, loaded where a folder is first removed or copied: with `bz2` and `lzma` it would cost every command
    (all of them import this module) a fifth of the interpreter's own start-up, and the read path does neither."""
    import shutil

    return shutil


def write_json_atomic(path: Path, value: object, *, known: bytes | None = None, volatile: str | None = None) -> bytes:
    """Write `value` as indented JSON, atomically; not at all when that is `known` (the file's bytes as last read or
    written): a record a hook finds unchanged costs it no write and no fsync. The bytes the file now holds.

    `volatile`: the record's keys from this one on (written last) only say when something ran. A record that differs
    from `known` in those alone is written without an fsync: after a crash it comes back with its older times, which
    every reader takes as "longer ago" (a session start with nothing changed then costs a hook no fsync)."""
    data = (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if data != known:
        write_atomic(path, data, durable=volatile is None or not _times_alone(data, known, volatile))
    return data


def _times_alone(data: bytes, known: bytes | None, volatile: str) -> bool:
    """Whether `data` and `known` differ only from the top-level key `volatile` on. indent=2 puts each top-level key
    at the start of a line, and JSON escapes every newline inside a string: the first such line naming `volatile` is
    where the record's times begin, in both."""
    mark = f'\n  "{volatile}":'.encode()
    cut = data.find(mark)
    return known is not None and cut >= 0 and known[:cut] == data[:cut] and known[cut:].startswith(mark)


def append(path: Path, chunks: Iterable[bytes]) -> None:
    """Append to a private file (created if missing), in one write (a fill appends thousands of lines and records at
    once); callers hold the file's lock, and find a torn end."""
    data = b"".join(chunks)
    fd = open_private(path, os.O_WRONLY)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to the open file `fd` with plain system calls: one, but for a short write."""
    with memoryview(data) as view:
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:])


def tighten(root: Path) -> None:
    """Make a root that an earlier version left open to other users owner-only, with everything below it.

    Cheap when there is nothing to do: one stat of the root, whose own mode tells (it is tightened last, so an
    interrupted pass is finished next time).
    """
    if os.name == "nt":  # access there is a matter of ACLs, which the user's profile folders already restrict
        return
    try:
        mode = os.lstat(root).st_mode
    except OSError:
        return
    if mode & 0o077 and not _is_link(mode):
        make_private(root)


def make_private(folder: Path) -> None:
    """Make `folder` and everything below it owner-only: folders 0700, files 0600 (an executable keeps its
    owner's x, for a skill backup to restore). Symbolic links are left alone, never followed."""
    for parent, dirs, files in os.walk(folder):
        for name in dirs:
            _chmod(os.path.join(parent, name), DIR_MODE)
        for name in files:
            _chmod(os.path.join(parent, name), None)
    _chmod(str(folder), DIR_MODE)


def _is_link(mode: int) -> bool:
    return stat.S_ISLNK(mode)


def _chmod(path: str, mode: int | None) -> None:
    try:
        current = os.lstat(path).st_mode
        if _is_link(current):
            return
        wanted = mode if mode is not None else (current & 0o100) | FILE_MODE
        if current & 0o7777 != wanted:
            os.chmod(path, wanted)
    except OSError:  # vanished meanwhile, or not ours: the next use tries again
        pass


def open_private(path: Path, flags: int) -> int:
    """A file descriptor on our own file `path` (see `open_own`), created 0600 (and its folders) if missing."""
    make_dirs(path.parent)
    return open_own(path, flags | os.O_CREAT | os.O_APPEND, FILE_MODE)


def open_own(path: str | Path, flags: int = os.O_RDONLY, mode: int = FILE_MODE) -> int:
    """`os.open`, refusing (UnsafeLocalFile) a symbolic link, a file with another hard link, a file of another
    user, anything but a regular file: checked on the descriptor opened, so nothing can be swapped in between."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _BINARY, mode)  # not inherited by children (PEP 446)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # how O_NOFOLLOW refuses a link
            raise UnsafeLocalFile(path, "is a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a FIFO that nobody reads
            raise UnsafeLocalFile(path, "is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeLocalFile(path, "is not a regular file")
        if not _owned(info):
            raise UnsafeLocalFile(path, f"belongs to another user (uid {info.st_uid})")
        if info.st_nlink > 1:  # nothing of ours is ever hard-linked: the other name may be any file of the user's
            raise UnsafeLocalFile(path, f"has {info.st_nlink} hard links")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_own(path: str | Path, limit: int) -> bytes:
    """The bytes of our own file `path` (see `open_own`), at most `limit` of them: FileNotFoundError if it is
    missing, UnsafeLocalFile if it is anything but a regular file of this user (a FIFO, a link to `/dev/zero`) or
    larger than `limit`, which nothing agent-memory writes there ever is. Never waits, never reads more than that.

    Every read of a file below the config, cache and state roots goes through here: an agent's shell can write
    them, and a planted file must not hang or exhaust a command, nor a hook.
    """
    with open(open_own(path), "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise _oversized(path, limit)
        data = handle.read(limit + 1)  # a file that grows meanwhile is still read no further
    if len(data) > limit:
        raise _oversized(path, limit)
    return data


def read_own_or_none(path: str | Path, limit: int) -> bytes | None:
    """`read_own`, None for a file that is missing or not ours (a link, too large, not this user's)."""
    try:
        return read_own(path, limit)
    except OSError:
        return None


def damage(path: Path, limit: int) -> UnsafeLocalFile | None:
    """Why our file `path` cannot be read by `read_own(path, limit)`, None if it can (or is missing): what
    `status` reports, without reading it."""
    try:
        fd = open_own(path)
    except UnsafeLocalFile as exc:
        return exc
    except OSError:  # missing, or a folder on the way that is not one: nothing planted at this name
        return None
    try:
        return _oversized(path, limit) if os.fstat(fd).st_size > limit else None
    finally:
        os.close(fd)


def _oversized(path: str | Path, limit: int) -> UnsafeLocalFile:
    return UnsafeLocalFile(path, f"is larger than {limit:,} bytes", oversized=True)


def read_json(path: Path, limit: int, default: object = None) -> object:
    """A JSON file of ours read with `read_own` (at most `limit` bytes), or `default` when it does not exist;
    ValueError if it is not JSON, UnsafeLocalFile if it is not a file of ours within the bound."""
    try:
        return json.loads(read_own(path, limit).decode("utf-8"))
    except FileNotFoundError:
        return default


def _owned(info: os.stat_result) -> bool:
    return os.name == "nt" or info.st_uid == os.getuid()  # Windows has no owners in stat, its profile folders ACLs


class locked:  # named as a function: `with locked(path):`
    """Hold an exclusive advisory lock on `path` (created if missing) for the duration of the block."""

    wait = True  # until the lock is free

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False

    def __enter__(self) -> bool:
        self.handle = open(open_private(self.path, os.O_RDWR), "a+b")  # noqa: SIM115 (closed on the way out)
        try:
            if fcntl is not None:
                fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX if self.wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another process holds it (`try_locked`)
            return False
        except BaseException:
            self.handle.close()
            raise
        self.held = True
        return True

    def __exit__(self, *exc: object) -> None:
        try:
            if self.held and fcntl is not None:
                fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
        finally:
            self.handle.close()


class try_locked(locked):  # named as a function: `with try_locked(path) as ours:`
    """Like `locked`, but never waits: gives False when another process holds the lock."""

    wait = False
