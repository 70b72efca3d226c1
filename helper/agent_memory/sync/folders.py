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

from ..agents import claude, codex
from ..config import claude_memory_folder, projects
from ..importing.sources import CODEX_WORKING_FILES
from . import settings, versions
from .index import GONE, LINK, NOT_FOLDER
from .versions import NOT_REGULAR, TOO_LARGE, Refused

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..config.shape import Config

MAX_FILES = 1000  # files of one memory folder that are synced; more are reported, not synced
TEAM = "team"  # Claude Code's own team memory, inside its memory folder: never read or written
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


def claude_places(config: Config, project: str) -> list[tuple[Path, str]]:
    """Claude Code's memory folder of every checkout mapped to `project` here (worktrees share their main
    checkout's), each once, with where its place came from."""
    found: dict[Path, str] = {}
    for root, name in sorted(config.get("projects", {}).items()):
        if name == project:
            folder, source = claude_memory_folder.memory_folder(Path(root))
            found.setdefault(folder, source)
    return list(found.items())


def claude_place_of(directory: str | os.PathLike[str]) -> tuple[Path, str]:
    """Claude Code's memory folder for the checkout that holds `directory`, and where its place came from."""
    return claude_memory_folder.memory_folder(projects.canonical(directory))


def own_folder(runtime: str) -> Path:
    """The runtime's own configuration folder: the memory folders inside it are synced once sync is on."""
    return claude.config_dir() if runtime == "claude" else codex.home()


def allowed(config: Config, runtime: str, folder: Path) -> bool:
    """Whether sync uses `folder`: inside the runtime's own folder, or named by the user. A repository's settings
    or an environment variable can point the runtime anywhere (`~/Documents`): it is synced only once named."""
    place = os.path.normpath(os.path.abspath(folder))
    own = os.path.normpath(os.path.abspath(own_folder(runtime)))
    return place.startswith(own.rstrip(os.sep) + os.sep) or place in settings.folders_named(config).get(runtime, [])


def codex_folder() -> Path:
    """Codex's memories: `$CODEX_HOME/memories/`."""
    return codex.home() / "memories"


def ignored(runtime: str, path: str) -> bool:
    """Whether `path` (a file, or a folder) is none of the memory sync carries: one of the runtime's own working
    files (Codex's), or Claude Code's `team/` folder, which it keeps for its own team memory and we never touch."""
    if runtime == "claude":
        return path == TEAM or path.startswith(TEAM + "/")
    return runtime == "codex" and any(fnmatch.fnmatch(path, pattern) for pattern in CODEX_WORKING_FILES)


def unreadable(exc: OSError) -> str:
    """Why a folder that could not be listed is not synced."""
    return f"it could not be read ({exc.strerror or exc})"


def scan(
    runtime: str, folder: Path, known: dict[str, dict[str, object]]
) -> tuple[dict[str, Local], dict[str, Refused], dict[str, str]]:
    """The files of a memory folder (`{path: Local}`), those left out (`{path: Refused}`), and the folders not read
    (`{folder: why}`, "" for the memory folder itself: gone, a link, a file, unreadable; a folder `known` had files
    in and that is gone now counts too). One stat per file; a file is read only when its size or time differ from
    what `known` recorded. Hidden names, links and anything but regular files are never synced; nor are files over
    versions.MAX_TEXT bytes or not UTF-8 text."""
    files: dict[str, Local] = {}
    skipped: dict[str, Refused] = {}
    blocked: dict[str, str] = {}
    try:
        top = os.lstat(folder)
    except FileNotFoundError:
        if any(entry.get("hash") is not None for entry in known.values()):
            blocked[""] = GONE  # a folder with no record yet is one the runtime has not made: nothing to tell
        return files, skipped, blocked
    except OSError as exc:
        return files, skipped, {"": unreadable(exc)}
    if stat.S_ISLNK(top.st_mode) or not stat.S_ISDIR(top.st_mode):
        return files, skipped, {"": LINK if stat.S_ISLNK(top.st_mode) else NOT_FOLDER}
    errors: list[OSError] = []
    for parent, dirs, names in os.walk(folder, onerror=errors.append):  # never into a link (followlinks=False)
        base = Path(parent)
        dirs[:] = [name for name in sorted(dirs) if _walked(runtime, folder, base / name, blocked)]
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = (base / name).relative_to(folder).as_posix()
            if ignored(runtime, path):
                continue
            try:
                versions.check_path(path)
            except Refused as exc:
                skipped[path] = exc
                continue
            try:
                info = os.stat(base / name, follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile: its folder is checked below
            if not stat.S_ISREG(info.st_mode):
                skipped[path] = Refused("it is a link or not a regular file", NOT_REGULAR)
                continue
            if len(files) >= MAX_FILES:
                skipped[path] = Refused(f"the folder has more than {MAX_FILES} files", TOO_LARGE)
                continue
            record = known.get(path)
            if record and record.get("size") == info.st_size and record.get("mtime_ns") == info.st_mtime_ns:
                files[path] = Local(info.st_size, info.st_mtime_ns, record.get("hash"))  # type: ignore[arg-type]  # unchecked: this machine's own index
                continue
            try:
                files[path] = read(folder, path)
            except (OSError, Refused) as exc:
                skipped[path] = exc if isinstance(exc, Refused) else Refused(f"it could not be read ({exc.strerror})")
    for error in errors:  # a folder that could not be listed (or went away while it was walked)
        where = os.path.relpath(error.filename, folder) if error.filename else "."
        where = "" if where == "." else Path(where).as_posix()
        blocked.setdefault(where, GONE if isinstance(error, FileNotFoundError) else unreadable(error))
    for path, entry in known.items():  # a file that is not here: is its folder still here, and a real one?
        if entry.get("hash") is None or path in files or path in skipped or ignored(runtime, path):
            continue
        if (found := missing_folder(folder, path)) is not None:
            blocked.setdefault(*found)
    for where, why in blocked.items():
        if why == NOT_FOLDER:  # the file in a folder's place is told with it, not synced as a file of its own
            files.pop(where, None)
    return files, skipped, blocked


def _walked(runtime: str, folder: Path, path: Path, blocked: dict[str, str]) -> bool:
    """Whether the walk goes into the subfolder `path`: not a hidden one, not `team/`, never a link (told)."""
    relative = path.relative_to(folder).as_posix()
    if path.name.startswith(".") or ignored(runtime, relative):
        return False
    try:
        linked = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return True  # gone meanwhile: the walk tells it
    if linked:
        blocked[relative] = LINK
    return not linked


def missing_folder(folder: Path, path: str) -> tuple[str, str] | None:
    """The first folder on the way to `path` (the memory folder itself: "") that is no real folder now, and why;
    None when every one is."""
    parts = path.split("/")[:-1]
    for depth in range(len(parts) + 1):
        relative = "/".join(parts[:depth])
        try:
            info = os.lstat(folder / relative if relative else folder)
        except FileNotFoundError:
            return relative, GONE
        except OSError as exc:
            return relative, unreadable(exc)
        if not stat.S_ISDIR(info.st_mode):
            return relative, LINK if stat.S_ISLNK(info.st_mode) else NOT_FOLDER
    return None


def under(path: str, blocked: dict[str, str] | list[str]) -> str | None:
    """The folder of `blocked` that holds `path` (a file of the memory folder), None if none does."""
    for where in blocked:
        if where == "" or path.startswith(where + "/"):
            return where
    return None


def read(folder: Path, path: str) -> Local:
    """A file's stat, hash and text, read without following a link; Refused if it is too large or not text."""
    fd = _open_in(folder, path, os.O_RDONLY | _NONBLOCK)
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused("it is not a regular file", NOT_REGULAR)
        data = handle.read(versions.MAX_TEXT + 1)
    if len(data) > versions.MAX_TEXT:
        raise Refused(f"it is larger than {versions.MAX_TEXT} bytes", TOO_LARGE)
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
    fd: int | None = os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parents:
            outer, fd = fd, None  # `_enter` closes it: `finally` must not close it again
            assert outer is not None  # (opened: a folder that is not there returns just below)
            fd = _enter(outer, part, create=text is not None)
            if fd is None:
                return None  # its folder is gone: so is the file, which is what a deletion wants
        assert fd is not None  # (every folder on the way opened)
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
                raise Refused(f"{part} in the memory folder is a link or a file, not a folder", NOT_REGULAR) from None
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
            raise Refused(f"{name} in the memory folder is a link or not a regular file", NOT_REGULAR) from None
        raise
    if not stat.S_ISREG(os.fstat(handle_fd).st_mode):  # a folder in the file's place: never written over
        os.close(handle_fd)
        raise Refused(f"{name} in the memory folder is a folder or not a regular file", NOT_REGULAR)
    with open(handle_fd, "rb") as handle:
        data = handle.read(versions.MAX_TEXT + 1)
    try:
        return versions.text_hash(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "not text"


def _open_in(folder: Path, path: str, flags: int) -> int:
    """A file below `folder`, every part opened without following a link."""
    *parents, name = path.split("/")
    fd: int | None = os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parents:
            outer, fd = fd, None  # `_enter` closes it: `finally` must not close it again
            assert outer is not None  # (opened: a folder that is not there returns just below)
            fd = _enter(outer, part, create=False)
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, "no such folder", part)
        return os.open(name, flags | _NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused("it is a link", NOT_REGULAR) from None
        raise
    finally:
        if fd is not None:
            os.close(fd)
