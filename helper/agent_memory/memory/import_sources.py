"""Where the memories a user already has are kept, and reading them as files: Claude Code's auto memory for this
checkout, Codex's memories, Cline's `memory-bank/`, or any folder of Markdown files.

Everything read here is the user's data from outside the process, so it is read with bounded cost: at most
FILES_MAX Markdown files and ENTRIES_MAX folder entries per source, DEPTH_MAX folders deep, each file at most
`notes.MAX_BYTES`. Below a source's folder (which may itself be reached through a link: the user's choice) names
are looked up one at a time and never through a link (`store.local_tree`), so a link planted in a memory folder
cannot bring a file from elsewhere into the bucket; such an entry is listed as refused, with why.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import re
import shlex
import stat
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..agents import claude, codex
from ..display import safe
from ..errors import UsageError
from ..store.local_tree import Folder, Untrusted, open_root
from . import notes

TOOLS = ("claude", "codex", "cline")
FOLDER_TAG = "markdown"  # the tool tag of `import PATH` without --from
FILES_MAX = 2000
ENTRIES_MAX = 20000
DEPTH_MAX = 8
SETTINGS_MAX = 1024 * 1024  # a settings.json larger than this is not read for autoMemoryDirectory
GIT_FILE_MAX = 4096  # `.git`, `commondir` and `gitdir` files hold one path


@dataclass
class Source:
    """One place memories may be kept: which tool's (`tool`, the note's tag), its folder, and whether it exists."""

    tool: str
    folder: Path
    found: bool
    why: str = ""  # how the folder was found (or why it is absent), for people
    relative_to: Path | None = None  # files below this folder are recorded by their path relative to it
    ignored: tuple[str, ...] = ()  # the tool's own working files (fnmatch patterns of paths in the folder)


@dataclass
class File:
    """A Markdown file of a source: where it is, and its bytes (None, with `problem`, if it cannot be imported)."""

    path: Path
    source: str  # what the note records as its source: the path, relative to the checkout when inside it
    data: bytes | None
    problem: str | None = None
    name: str = ""
    findings: list[dict[str, object]] = field(default_factory=list)


# -- Claude Code ---------------------------------------------------------------------------------------------
# The rules below are read from Claude Code 2.1.328's bundle (node_modules/@anthropic-ai/claude-code, the
# compiled `claude` binary; the functions are minified, so they are named here by what they do):
# - the config folder is `$CLAUDE_CONFIG_DIR` else `~/.claude` (NFC-normalised);
# - `autoMemoryDirectory` is taken from the first of policy, --settings, local and project (trusted folders
#   only), then user settings that sets it; `~/` means the home folder; a value that is not an absolute path
#   of at least 3 characters (or holds NUL) is ignored. Its description says a checked-in
#   `.claude/settings.json` is ignored "for security": so we never read that one;
# - otherwise the folder is `<config>/projects/<key>/memory/`, where the key is `CLAUDE_CODE_PROJECT_DIR_NAME`
#   when CLAUDE_CONFIG_DIR is set and that name matches ^[A-Za-z0-9_-]{1,64}$ (not a reserved Windows name),
#   else the sanitised path of the project: the canonical git root of the working folder (a linked worktree's
#   main checkout, checked through `gitdir`, `commondir` and the worktree's `gitdir` back-link), else the
#   folder itself, every character but [a-zA-Z0-9] replaced by `-`, and a path longer than 200 characters cut
#   there and followed by `-` and a base-36 32-bit string hash of the whole path;
# - `CLAUDE_CODE_REMOTE_MEMORY_DIR` replaces the config folder (and then the key is always the sanitised path).
# The layout inside: `MEMORY.md` (an index, one line per memory) and one Markdown file per memory with its own
# frontmatter (name, description, type), possibly in subfolders (`team/`).
_KEY_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])", re.I)
_KEY_MAX = 200


def claude_key(project_path: str) -> str:
    """Claude Code's folder name for a project path (`sanitizePath` in its bundle)."""
    key = re.sub(r"[^a-zA-Z0-9]", "-", project_path)
    if len(key) <= _KEY_MAX:
        return key
    return f"{key[:_KEY_MAX]}-{_base36(abs(_string_hash(project_path)))}"


def _string_hash(text: str) -> int:
    """JavaScript's `h = (h << 5) - h + charCodeAt(i) | 0` over the UTF-16 code units of `text`."""
    value = 0
    units = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(units), 2):
        value = ((value << 5) - value + int.from_bytes(units[index : index + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def claude_memory(folder: Path) -> Source:
    """Claude Code's auto memory folder for the checkout that holds `folder` (see the rules above)."""
    configured, where = _configured_memory_dir(folder)
    if configured is not None:
        return _source("claude", configured, f"autoMemoryDirectory in {where}")
    remote = os.environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    root = Path(remote) if remote else claude.config_dir()
    base = _git_base(folder)
    name = os.environ.get("CLAUDE_CODE_PROJECT_DIR_NAME", "")
    valid = _KEY_NAME.fullmatch(name) and not _RESERVED.fullmatch(name)
    by_name = valid and not remote and os.environ.get("CLAUDE_CONFIG_DIR")
    key = name if by_name else claude_key(str(base))  # the path as it is: only the whole folder is NFC-normalised
    memory = Path(unicodedata.normalize("NFC", str(root / "projects" / key / "memory")))
    return _source("claude", memory, f"Claude Code's folder for {base}")


def _configured_memory_dir(folder: Path) -> tuple[Path | None, str]:
    """`autoMemoryDirectory` from the settings Claude Code trusts for it, in its order: managed, local, user."""
    managed = (
        Path("/Library/Application Support/ClaudeCode/managed-settings.json")
        if sys.platform == "darwin"
        else Path("/etc/claude-code/managed-settings.json")
    )
    local = _git_root(folder)
    user = claude.config_dir() / "settings.json"
    candidates = [managed, *([local / ".claude" / "settings.local.json"] if local else []), user]
    for settings in candidates:
        value = _setting(settings, "autoMemoryDirectory")
        if value is None:
            continue
        if value.startswith(("~/", "~\\")):
            rest = value[2:]
            if os.path.normpath(rest or ".").split(os.sep)[0] in (".", ".."):  # `~/..` is refused, as Claude does
                continue
            value = str(Path.home() / rest)
        path = os.path.normpath(value).rstrip("/\\")
        if not os.path.isabs(path) or len(path) < 3 or "\x00" in path:
            continue  # Claude Code ignores it too, and uses its default folder
        return Path(path), str(settings)
    return None, ""


def _setting(path: Path, key: str) -> str | None:
    """A string setting of a JSON settings file, None if the file is missing, unreadable or does not set it."""
    try:
        value = json.loads(_small_file(path, SETTINGS_MAX))
    except (OSError, ValueError, RecursionError):
        return None
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _git_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` with a `.git` entry (a folder, or a worktree's file)."""
    for level in (folder, *folder.parents):
        if os.path.lexists(level / ".git"):
            return level
    return None


def _git_base(folder: Path) -> Path:
    """The path Claude Code keys a project by: the main checkout of a linked worktree, else the git root, else
    `folder`."""
    root = _git_root(folder)
    if root is None:
        return folder
    try:
        pointer = _small_text(root / ".git")
    except OSError:
        return root  # a folder (a main checkout), or unreadable
    if not pointer.startswith("gitdir:"):
        return root
    gitdir = (root / pointer[len("gitdir:") :].strip()).resolve()
    try:
        common = (gitdir / _small_text(gitdir / "commondir")).resolve()
        back = (gitdir / _small_text(gitdir / "gitdir")).resolve()
    except OSError:
        return root
    # the same checks as Claude Code: the worktree's folder lies in `<common>/worktrees/`, and points back here
    if gitdir.parent != common / "worktrees" or back != root.resolve() / ".git":
        return root
    if common.name != ".git":  # a bare repository's worktree: keyed by the repository, unless it has a .git
        return root if os.path.lexists(common / ".git") else common
    return common.parent


def _small_text(path: Path) -> str:
    return _small_file(path, GIT_FILE_MAX).decode("utf-8", "replace").strip()


def _small_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; OSError for anything else (a FIFO never blocks)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, "too large", str(path))
    return data


# -- Codex and Cline -----------------------------------------------------------------------------------------


# Codex 0.169's layout, as its prompts name it and as it leaves the folder after a session with `[features]
# memories = true`: `memory_summary.md`, `MEMORY.md`, `raw_memories.md`, `rollout_summaries/*.md`,
# `skills/<name>/SKILL.md`, `extensions/ad_hoc/notes/*.md`; and its own working files, which are no memories:
# `extensions/<name>/instructions.md` (its instructions to itself), `phase2_workspace_diff.md` ("generated by
# Codex before Phase 2 memory consolidation"), and the hidden `.git` and `.codex-baseline` of that diff.
CODEX_WORKING_FILES = ("phase2_workspace_diff.md", "extensions/*/instructions.md")


def codex_memories() -> Source:
    """Codex's memories: `$CODEX_HOME/memories/`. They are not kept per project."""
    found = _source("codex", codex.home() / "memories", "Codex's memories (CODEX_HOME)")
    found.ignored = CODEX_WORKING_FILES
    return found


def cline_memory_bank(folder: Path, checkout: Path) -> Source:
    """Cline's `memory-bank/` folder: the nearest one from `folder` up to its checkout's root (the mapped
    `checkout`, or the root of the git checkout or worktree `folder` is in), recorded relative to that root."""
    levels = [folder, *folder.parents]
    root = next((level for level in levels if level == checkout or os.path.lexists(level / ".git")), None)
    for level in levels[: levels.index(root) + 1] if root is not None else [checkout]:
        if (level / "memory-bank").is_dir():
            return _source("cline", level / "memory-bank", "Cline's memory bank", relative_to=root or checkout)
    return Source("cline", (root or checkout) / "memory-bank", False, f"no memory-bank/ folder in {root or checkout}")


def folder_source(path: str, tool: str | None, checkout: Path) -> Source:
    """`import PATH`: a folder of Markdown files (UsageError if it is not one)."""
    folder = Path(path).expanduser().resolve()  # one folder, one name: however it is given, its notes match
    if not folder.is_dir():
        if folder.is_file():
            raise UsageError(
                f"{path} is a file: import takes a folder of Markdown files.",
                next_step=f"agent-memory save --file {shlex.quote(path)} (one file), or agent-memory import DIR",
            )
        raise UsageError(
            f"There is no folder {path}.", next_step="agent-memory import DIR (a folder of Markdown files)"
        )
    return _source(tool or FOLDER_TAG, folder, "the folder given", relative_to=checkout)


def _source(tool: str, folder: Path, why: str, relative_to: Path | None = None) -> Source:
    return Source(tool, folder, folder.is_dir(), why if folder.is_dir() else f"no folder {folder}", relative_to)


# -- reading a source ----------------------------------------------------------------------------------------


def read_files(source: Source) -> list[File]:
    """Every Markdown file below the source's folder, in a stable order, with its bytes or why it is refused.

    UsageError, before anything is read, if the folder holds more than FILES_MAX files or ENTRIES_MAX entries.
    """
    found: list[File] = []
    entries = 0
    stack: list[tuple[Folder, int]] = [(open_root(str(source.folder)), 0)]
    try:
        while stack:
            folder, depth = stack.pop()
            try:
                entries += _scan(source, folder, depth, stack, found)
            finally:
                folder.close()
            if entries > ENTRIES_MAX:
                raise _too_many(source, f"more than {ENTRIES_MAX} files and folders")
            if len(found) > FILES_MAX:
                raise _too_many(source, f"more than {FILES_MAX} Markdown files")
    finally:
        for folder, _depth in stack:
            folder.close()
    return sorted(found, key=lambda file: file.name)


def _scan(source: Source, folder: Folder, depth: int, stack: list[tuple[Folder, int]], found: list[File]) -> int:
    """Read the Markdown files of one folder into `found`, its subfolders onto `stack`; how many entries it has."""
    try:
        listing = folder.entries()
    except OSError as exc:
        found.append(_refused(source, folder.where, f"cannot be listed ({exc.strerror})"))
        return 0
    if len(listing) > ENTRIES_MAX:
        return len(listing)
    for entry in sorted(listing, key=lambda entry: entry.name):
        where = folder.relative(entry.name)
        if entry.name.startswith("."):
            continue  # hidden files and folders: editors' swap files, `.git`
        info = entry.stat(follow_symlinks=False)
        markdown = entry.name.lower().endswith(".md")
        if stat.S_ISDIR(info.st_mode):
            if depth + 1 >= DEPTH_MAX:
                found.append(_refused(source, where, f"is more than {DEPTH_MAX} folders deep"))
                continue
            try:
                stack.append((folder.child(entry.name), depth + 1))
            except Untrusted as exc:
                found.append(_refused(source, where, exc.why))
            except OSError as exc:
                found.append(_refused(source, where, f"cannot be opened ({exc.strerror})"))
        elif stat.S_ISLNK(info.st_mode):
            if markdown or os.path.isdir(os.path.join(folder.path, entry.name)):
                found.append(_refused(source, where, "is a symbolic link (never followed out of the folder)"))
        elif markdown and not any(fnmatch.fnmatchcase(where, pattern) for pattern in source.ignored):
            found.append(_read(source, folder, entry.name, where))
    return len(listing)


def _read(source: Source, folder: Folder, name: str, where: str) -> File:
    try:
        fd = folder.open_file(name)
    except Untrusted as exc:
        return _refused(source, where, exc.why)
    except OSError as exc:
        return _refused(source, where, f"cannot be read ({exc.strerror})")
    with open(fd, "rb") as handle:
        data = handle.read(notes.MAX_BYTES + 1)
    if len(data) > notes.MAX_BYTES:
        return _refused(source, where, f"is larger than {notes.MAX_BYTES} bytes (1 MiB), the most a note holds")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _refused(source, where, f"is not UTF-8 text (invalid byte at offset {exc.start}), so it was skipped")
    return File(source.folder / where, _recorded(source, where), data, name=where)


def _refused(source: Source, where: str, why: str) -> File:
    return File(source.folder / where, _recorded(source, where), None, why, name=where or ".")


def _recorded(source: Source, where: str) -> str:
    """The note's `source`: the file's path, relative to the checkout when it lies inside it (the same in every
    clone, on every machine), else absolute; a control character in a name is written as its visible escape."""
    path = source.folder / where
    if source.relative_to is not None:
        with contextlib.suppress(ValueError):
            return safe(path.relative_to(source.relative_to).as_posix())
    return safe(str(path))


def _too_many(source: Source, what: str) -> UsageError:
    return UsageError(
        f"{source.folder} holds {what}, more than one import reads, so nothing was imported.",
        next_step="agent-memory import DIR with a smaller folder (a subfolder of it)",
    )
