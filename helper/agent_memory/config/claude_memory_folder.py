"""Where Claude Code keeps its auto memory for a checkout, by the rules of its installed bundle.

Everything read here (settings, `.git` files) is the user's, from outside the process: regular files of
bounded size only, so a FIFO or a huge file in their place never blocks or floods the command.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
import unicodedata
from pathlib import Path

from ..agents import claude
from . import repository

SETTINGS_MAX = 1024 * 1024  # a settings.json larger than this is not read for autoMemoryDirectory
GIT_FILE_MAX = 4096  # a worktree's `gitdir` file holds one path
GLOBAL_CONFIG_MAX = 64 * 1024 * 1024  # ~/.claude.json keeps every project's state: it grows, but within this

# The rules below are read from Claude Code 2.1.328's bundle (node_modules/@anthropic-ai/claude-code/bin/
# claude.exe, a compiled binary whose JavaScript is searchable as text: around `autoMemoryDirectory`, the class
# whose `resolveEntry` builds `<root>/projects/<key>/memory/`, and the function that makes the key; names there
# are minified, so they are named here by what they do):
# - the config folder is `$CLAUDE_CONFIG_DIR` else `~/.claude` (NFC-normalised);
# - `autoMemoryDirectory` is taken from the first of policy, --settings, local and project (trusted folders
#   only: `projects[<folder or one above it, up to the git root>].hasTrustDialogAccepted` in `.claude.json`, in
#   $CLAUDE_CONFIG_DIR or the home folder; a session without a terminal (`-p`) counts as trusted, which this
#   helper cannot know, so it takes the untrusted side), then user settings that sets it; `~/` means the home
#   folder; a value that is not an absolute path of at least 3 characters (or holds NUL) is ignored. Its
#   description says a checked-in `.claude/settings.json` is ignored "for security": so we never read that one;
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
    """Claude Code's folder name for a project path."""
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


def memory_folder(folder: Path) -> tuple[Path, str]:
    """Claude Code's auto memory folder for the checkout that holds `folder` (see the rules above), and how it
    was found."""
    configured, where = _configured_memory_dir(folder)
    if configured is not None:
        return configured, f"autoMemoryDirectory in {where}"
    remote = os.environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    root = Path(remote) if remote else claude.config_dir()
    base = _git_base(folder)
    name = os.environ.get("CLAUDE_CODE_PROJECT_DIR_NAME", "")
    valid = _KEY_NAME.fullmatch(name) and not _RESERVED.fullmatch(name)
    by_name = valid and not remote and os.environ.get("CLAUDE_CONFIG_DIR")
    key = name if by_name else claude_key(str(base))  # the path as it is: only the whole folder is NFC-normalised
    memory = Path(unicodedata.normalize("NFC", str(root / "projects" / key / "memory")))
    return memory, f"Claude Code's folder for {base}"


def _configured_memory_dir(folder: Path) -> tuple[Path | None, str]:
    """`autoMemoryDirectory` from the settings Claude Code trusts for it, in its order: managed, local, user."""
    managed = (
        Path("/Library/Application Support/ClaudeCode/managed-settings.json")
        if sys.platform == "darwin"
        else Path("/etc/claude-code/managed-settings.json")
    )
    repo = repository.find(folder)
    user = claude.config_dir() / "settings.json"
    local = [repo.top / ".claude" / "settings.local.json"] if repo and trusted(folder, repo.top) else []
    candidates = [managed, *local, user]
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


def trusted(folder: Path, top: Path | None) -> bool:
    """Whether the user trusted `folder` in Claude Code, as it tells before it applies a project's own settings:
    `projects[<path>].hasTrustDialogAccepted` in its global configuration file, for the folder or one above it up
    to the repository's top folder `top` (without a repository: up to the root)."""
    try:
        record = json.loads(_small_file(global_config_file(), GLOBAL_CONFIG_MAX))
    except (OSError, ValueError, RecursionError):
        return False
    projects = record.get("projects") if isinstance(record, dict) else None
    if not isinstance(projects, dict):
        return False
    place = Path(os.path.normpath(folder))
    while True:
        entry = projects.get(str(place))
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
        if place == top or place.parent == place:
            return False
        place = place.parent


def global_config_file() -> Path:
    """Claude Code's global configuration file (trust, per project): `.claude.json` in `$CLAUDE_CONFIG_DIR`, else
    in the home folder."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(value).expanduser() if value else Path.home()) / ".claude.json"


def _setting(path: Path, key: str) -> str | None:
    """A string setting of a JSON settings file, None if the file is missing, unreadable or does not set it."""
    try:
        value = json.loads(_small_file(path, SETTINGS_MAX))
    except (OSError, ValueError, RecursionError):
        return None
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _git_base(folder: Path) -> Path:
    """The path Claude Code keys a project by: the main checkout of a linked worktree, else the checkout's top
    folder, else `folder` (the repository is read as `config.repository` reads it, without running git)."""
    repo = repository.find(folder)
    if repo is None:
        return folder
    if not repo.is_linked_worktree:
        return repo.top
    # Claude Code's own checks: the worktree's folder lies in `<common>/worktrees/`, and points back here
    try:
        back = (repo.git_dir / _small_text(repo.git_dir / "gitdir")).resolve()
    except OSError:
        return repo.top
    common = repo.common_dir.resolve()
    if repo.git_dir.resolve().parent != common / "worktrees" or back != repo.top.resolve() / ".git":
        return repo.top
    if repo.main_checkout is None:  # a bare repository's worktree: keyed by the repository, unless it has a .git
        return repo.top if os.path.lexists(common / ".git") else repo.common_dir
    return repo.main_checkout


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
