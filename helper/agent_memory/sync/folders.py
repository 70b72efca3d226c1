"""The runtimes' memory folders on this machine, read and written with care: only the runtime's own memory files,
never through a link, never outside the folder, and never over a write the runtime made meanwhile.

Claude Code keeps its auto memory per project (`config.claude_memory_folder`: one folder per checkout, shared by its
worktrees), so a project's files go to the folder of every checkout mapped to it here. Codex keeps one set per user.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import stat
from pathlib import Path

from ..agents import codex
from ..config import claude_memory_folder, projects
from ..importing.sources import CODEX_WORKING_FILES
from . import versions
from .versions import Refused

MAX_FILES = 1000  # files of one memory folder that are synced; more are reported, not synced
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class Local:
    """One file of a memory folder as it is now: its size and modification time (one stat), and its hash and text
    when they were read."""

    __slots__ = ("size", "mtime_ns", "hash", "text")

    def __init__(self, size: int, mtime_ns: int, hash: str | None = None, text: str | None = None) -> None:
        self.size = size
        self.mtime_ns = mtime_ns
        self.hash = hash
        self.text = text


class Moved(Exception):
    """The file changed on disk since it was read (the runtime wrote it): it was left as it is."""


def claude_folders(config: dict[str, object], project: str) -> list[Path]:
    """Claude Code's memory folder of every checkout mapped to `project` here (worktrees share their main
    checkout's), each once."""
    found: list[Path] = []
    for root, name in sorted(config.get("projects", {}).items()):
        if name == project:
            folder = claude_memory_folder.memory_folder(Path(root))[0]
            if folder not in found:
                found.append(folder)
    return found


def claude_folder_of(directory: str | os.PathLike[str]) -> Path:
    """Claude Code's memory folder for the checkout that holds `directory`."""
    return claude_memory_folder.memory_folder(projects.canonical(directory))[0]


def codex_folder() -> Path:
    """Codex's memories: `$CODEX_HOME/memories/`."""
    return codex.home() / "memories"


def ignored(runtime: str, path: str) -> bool:
    """Whether `path` is one of the runtime's own working files, which are no memories (Codex's)."""
    return runtime == "codex" and any(fnmatch.fnmatch(path, pattern) for pattern in CODEX_WORKING_FILES)


def scan(runtime: str, folder: Path, known: dict[str, dict[str, object]]) -> tuple[dict[str, Local], dict[str, str]]:
    """The files of a memory folder (`{path: Local}`) and those left out (`{path: why}`): one stat per file; a
    file is read only when its size or time differ from what `known` recorded. Hidden names, links and anything
    but regular files are never synced; nor are files over versions.MAX_TEXT bytes or not UTF-8 text."""
    files: dict[str, Local] = {}
    skipped: dict[str, str] = {}
    for parent, dirs, names in os.walk(folder):  # never into a linked folder (followlinks=False)
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        base = Path(parent)
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = (base / name).relative_to(folder).as_posix()
            if ignored(runtime, path):
                continue
            try:
                versions.check_path(path)
            except Refused as exc:
                skipped[path] = str(exc)
                continue
            try:
                info = os.stat(base / name, follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            if not stat.S_ISREG(info.st_mode):
                skipped[path] = "it is a link or not a regular file"
                continue
            if len(files) >= MAX_FILES:
                skipped[path] = f"the folder has more than {MAX_FILES} files"
                continue
            record = known.get(path)
            if record and record.get("size") == info.st_size and record.get("mtime_ns") == info.st_mtime_ns:
                files[path] = Local(info.st_size, info.st_mtime_ns, record.get("hash"))
                continue
            try:
                files[path] = read(folder, path)
            except (OSError, Refused) as exc:
                skipped[path] = str(exc) if isinstance(exc, Refused) else f"it could not be read ({exc.strerror})"
    return files, skipped


def read(folder: Path, path: str) -> Local:
    """A file's stat, hash and text, read without following a link; Refused if it is too large or not text."""
    fd = _open_in(folder, path, os.O_RDONLY | _NONBLOCK)
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused("it is not a regular file")
        data = handle.read(versions.MAX_TEXT + 1)
    if len(data) > versions.MAX_TEXT:
        raise Refused(f"it is larger than {versions.MAX_TEXT} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("it is not UTF-8 text") from None
    if "\x00" in text:
        raise Refused("it holds a NUL character")
    return Local(info.st_size, info.st_mtime_ns, versions.text_hash(text), text)


def write(folder: Path, path: str, text: str | None, expected: str | None) -> Local | None:
    """Put `text` at `path` in the folder (None: delete it), if the file there still has the hash `expected` (None:
    no file): Moved otherwise, and nothing is changed. The new text is written to a temporary file beside it and
    renamed over it, so the runtime reads the old text or the new, never a mix; the folders on the way are opened
    without following links. Returns the file's new stat (None once deleted)."""
    versions.check_path(path)
    *parents, name = path.split("/")
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parents:
            fd, outer = None, fd
            fd = _enter(outer, part, create=text is not None)
            if fd is None:
                return None  # its folder is gone: so is the file, which is what a deletion wants
        if _hash_at(fd, name) != expected:
            raise Moved(path)
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
            return None
        temporary = f".{name}.{os.urandom(6).hex()}.agent-memory-sync"
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=fd)
        try:
            with open(out, "wb") as handle:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            if _hash_at(fd, name) != expected:  # compared again just before the swap: the runtime's write wins
                raise Moved(path)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=fd)
            raise
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        return Local(info.st_size, info.st_mtime_ns, versions.text_hash(text), text)
    finally:
        if fd is not None:
            os.close(fd)


def _enter(fd: int, part: str, *, create: bool) -> int | None:
    """The folder `part` inside the open folder `fd` (made if missing and `create`), opened without following a
    link; the descriptor `fd` is closed. Refused if `part` is a link or a file."""
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
        try:
            return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise Refused(f"{part} in the memory folder is a link or a file, not a folder") from None
            raise
    finally:
        os.close(fd)


def _hash_at(fd: int, name: str) -> str | None:
    """The hash of the file `name` in the open folder `fd`, None if there is none; Refused if it is a link or not
    a regular file (never written over)."""
    try:
        handle_fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise Refused(f"{name} in the memory folder is a link or not a regular file") from None
        raise
    with open(handle_fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise Refused(f"{name} in the memory folder is not a regular file")
        data = handle.read(versions.MAX_TEXT + 1)
    try:
        return versions.text_hash(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "not text"


def _open_in(folder: Path, path: str, flags: int) -> int:
    """A file below `folder`, every part opened without following a link."""
    *parents, name = path.split("/")
    fd = os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parents:
            fd, outer = None, fd
            fd = _enter(outer, part, create=False)
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, "no such folder", part)
        return os.open(name, flags | _NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("it is a link") from None
        raise
    finally:
        if fd is not None:
            os.close(fd)
