"""Atomic file writes, private folders and an advisory lock: every state write goes through here.

Local state is private whatever the umask: below the helper's config, cache and state roots every folder
we create is 0700 and every file 0600 (notes are private, and the machine may be shared). Folders above a
root, and outside the roots (the agents' skill folders), get ordinary permissions.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: every command starts through this module
if TYPE_CHECKING:
    from typing import Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_dirs(folder: Path) -> None:
    """Create `folder` and its missing parents: owner-only at and below a root of ours, ordinary above."""
    if folder.is_dir():
        return
    from . import paths

    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    roots = paths.roots()
    for level in reversed(missing):
        private = any(level == root or root in level.parents for root in roots)
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            if private:
                os.mkdir(level, DIR_MODE)  # the umask can only take bits away, and 0700 has none for others
            else:
                os.mkdir(level)


def write_atomic(path: Path, data: bytes | Iterable[bytes], *, mode: int | None = None) -> None:
    """Write `data` (bytes, or chunks of them) to `path` so that readers see the old file or the new one, never
    a mix. The file is 0600 unless `mode` says otherwise."""
    import tempfile  # only writers pay for it: read-only commands start faster

    make_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in (data,) if isinstance(data, bytes) else data:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:  # mkstemp made it 0600 already
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, value: Any) -> None:
    """Write `value` as indented JSON, atomically."""
    write_atomic(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def append(path: Path, chunks: Iterable[bytes]) -> None:
    """Append to a private file (created if missing); callers hold the file's lock, and find a torn end."""
    with open(_open_private(path, os.O_WRONLY), "ab") as handle:
        for chunk in chunks:
            handle.write(chunk)


def read_json(path: Path, default: Any = None) -> Any:
    """Read a JSON file, or return `default` when it does not exist."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


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
    import stat

    return stat.S_ISLNK(mode)


def _chmod(path: str, mode: int | None) -> None:
    with contextlib.suppress(OSError):  # vanished meanwhile, or not ours: the next use tries again
        current = os.lstat(path).st_mode
        if _is_link(current):
            return
        wanted = mode if mode is not None else (current & 0o100) | FILE_MODE
        if current & 0o7777 != wanted:
            os.chmod(path, wanted)


def _open_private(path: Path, flags: int) -> int:
    """A file descriptor on `path`, created 0600 (and its folders) if missing."""
    make_dirs(path.parent)
    return os.open(path, flags | os.O_CREAT | os.O_APPEND, FILE_MODE)  # not inherited by children (PEP 446)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path` (created if missing) for the duration of the block."""
    with open(_open_private(path, os.O_RDWR), "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # windows: concurrent writers there only risk a redundant download
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def try_locked(path: Path) -> Iterator[bool]:
    """Like `locked`, but never waits: yields False when another process holds the lock."""
    with open(_open_private(path, os.O_RDWR), "a+b") as handle:
        try:
            import fcntl
        except ImportError:
            yield True
            return
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
