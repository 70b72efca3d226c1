"""What a directory's git repository says about it, read from the files git keeps, without running git.

Two facts let a directory that is not mapped find its project: the main checkout of the linked worktree it is
in (`.git` is then a file, `gitdir: ...`, and that folder's `commondir` leads to the main checkout's `.git`),
and the repository's `origin` URL (the `[remote "origin"]` section of the common `config`), which two clones of
the same repository share. Git is not needed on the PATH, and nothing is run.

These are the user's files: each is read only if it is a regular file, at most `MAX_FILE` bytes of it, and
an origin is kept only in its normalised form, which drops any user name or token written into the URL.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import urlsplit

MAX_FILE = 64 * 1024  # a `.git` file or `commondir` is one line, a repository's config a few KB
MAX_DEPTH = 256  # folders walked up from the start, at most (deeper is not a real checkout)


class Repository:
    """The git checkout holding a directory: its top folder, git folder, common git folder and origin."""

    __slots__ = ("top", "git_dir", "common_dir")

    def __init__(self, top: Path, git_dir: Path, common_dir: Path) -> None:
        self.top = top
        self.git_dir = git_dir
        self.common_dir = common_dir

    @property
    def is_linked_worktree(self) -> bool:
        """Whether this checkout is a worktree added to another repository (`git worktree add`)."""
        return self.git_dir != self.common_dir

    @property
    def main_checkout(self) -> Path | None:
        """The main checkout of the repository (None for a bare repository, whose worktrees have no main one)."""
        if self.common_dir.name != ".git":
            return None
        return self.common_dir.parent

    def origin(self) -> str | None:
        """The normalised URL of the `origin` remote, or None if there is none (or it cannot be read)."""
        text = _read_small(self.common_dir / "config")
        url = _origin_url(text) if text is not None else None
        if url and url.startswith("."):  # a path relative to the checkout, as `git clone ../other` writes it
            url = str(self.top / url)
        return normalise_url(url) if url else None


def find(directory: Path) -> Repository | None:
    """The checkout that holds `directory` (canonical), found by walking up to the nearest `.git`; else None."""
    for depth, folder in enumerate((directory, *directory.parents)):
        if depth >= MAX_DEPTH:
            return None
        dot_git = folder / ".git"
        try:
            info = dot_git.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            return Repository(folder, dot_git, _common_dir(dot_git))
        if stat.S_ISREG(info.st_mode):
            git_dir = _linked_git_dir(dot_git)
            return Repository(folder, git_dir, _common_dir(git_dir)) if git_dir else None
        return None  # a link or anything else named .git: not a checkout we read
    return None


def _linked_git_dir(dot_git: Path) -> Path | None:
    """The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder), if it is a folder."""
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    if not target or "\n" in target:
        return None
    git_dir = Path(os.path.normpath(dot_git.parent / target))
    return git_dir if git_dir.is_dir() else None


def _common_dir(git_dir: Path) -> Path:
    """The repository's common git folder: `commondir` (relative to `git_dir`) in a linked worktree, else itself."""
    text = _read_small(git_dir / "commondir")
    target = text.strip() if text else ""
    if not target or "\n" in target:
        return git_dir
    common = Path(os.path.normpath(git_dir / target))
    return common if common.is_dir() else git_dir


def _read_small(path: Path) -> str | None:
    """The text of a regular file of at most MAX_FILE bytes (a FIFO or device is never opened); else None."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE:
        return None
    return data.decode("utf-8", "replace")


_SECTION = re.compile(r'(?i)^\s*\[\s*remote\s+"origin"\s*\]\s*(?:[#;].*)?$')
_URL = re.compile(r"(?i)^\s*url\s*=\s*(.*)$")


def _origin_url(config: str) -> str | None:
    """The first `url` of `[remote "origin"]` in a git config's text (git's own rule for fetching)."""
    inside = False
    for line in config.splitlines():
        if line.lstrip().startswith("["):
            inside = bool(_SECTION.match(line))
            continue
        if inside and (match := _URL.match(line)):
            return _config_value(match.group(1))
    return None


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, a comment outside quotes cut off, surrounding blanks stripped."""
    out, quoted = [], False
    for char in raw:
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


_SCP_LIKE = re.compile(
    r"^([^/:]+):(?!//)(.*)$"
)  # [user@]host:owner/repo (git's "scp-like" form: no slash before the colon)
_URL_FORM = re.compile(r"(?i)^[a-z][a-z0-9+.-]*://")


def normalise_url(url: str) -> str | None:
    """One form for every way of writing a repository's address: `host/path`, without scheme, user name, password
    or token, port, query string, fragment, `.git` suffix or trailing slash, the host in lower case
    (`git@github.com:o/r.git` and `https://github.com/o/r/?x=1` are both `github.com/o/r`); a local path stays a
    path. None if it is not one. What a URL carries besides the repository (a token in its user part or its
    query, `?access_token=…`) never reaches a claim, a message or the bucket."""
    url = url.strip()
    if not url or any(ord(c) < 32 or ord(c) == 127 for c in url) or len(url) > 2048:
        return None
    if _URL_FORM.match(url):
        try:
            parts = urlsplit(url)
            host = parts.hostname  # the part after the last `@`, without the port, in lower case
        except ValueError:  # a bracketed host that is no IPv6 address
            return None
        if parts.scheme.lower() == "file":
            return _strip_repo_suffix(os.path.normpath(parts.path)) if parts.path else None
        return f"{host}{_strip_repo_suffix(parts.path)}" if host else None
    if url.startswith(("/", ".", "~")) or (len(url) > 1 and url[1] == ":"):  # a local path (or C:\ on Windows)
        return _strip_repo_suffix(os.path.normpath(os.path.expanduser(url)))
    if match := _SCP_LIKE.match(url):
        host = match.group(1).rpartition("@")[2].lower()
        path = re.split(r"[?#]", match.group(2), maxsplit=1)[0]
        return f"{host}{_strip_repo_suffix('/' + path.lstrip('/'))}" if host else None
    return None


def _strip_repo_suffix(path: str) -> str:
    """`path` without trailing slashes and one `.git` suffix (`/o/r.git/` -> `/o/r`)."""
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    return path
