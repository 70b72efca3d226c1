"""The agents' own files that setup edits (instruction files, hook settings, Codex's config.toml): read as UTF-8
text, written back atomically through symlinks with their mode kept (less any group or other write), and backed
up first.

One way for all of them, because they belong to the user: a file we could not write back unchanged is refused
before anything changes, and a backup never sits beside the original, where the agent could read it as
configuration.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import paths
from ..errors import AgentMemoryError
from ..fsutil import write_atomic


def read_text(path: Path) -> str | None:
    """The file's text, None if it does not exist; refuses (nothing changed) a file that is unreadable or not UTF-8."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AgentMemoryError(
            f"Cannot read {path}: {exc.strerror}; nothing was changed.",
            next_step=f"make {path} readable by you, then run the command again",
        ) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentMemoryError(
            f"{path} cannot be edited safely: it is not valid UTF-8 (invalid byte at offset {exc.start}). "
            "Nothing was changed.",
            next_step=f"fix {path} by hand (save it as UTF-8), then run the command again",
        ) from exc


def write_text(path: Path, text: str) -> None:
    """Replace the file's text atomically, through a symlink (dotfiles repositories link these files), keeping its
    mode but never writable by group or others; a new file is owner-only, and a missing folder 0755."""
    target = Path(os.path.realpath(path))
    try:
        # these files say which commands the agents run (hooks) and what they are told: a file that others could
        # change is a way into the user's account, so their write bits go, whatever made them (a umask of 000)
        mode = stat.S_IMODE(target.stat().st_mode) & ~0o022
    except FileNotFoundError:
        mode = 0o600
    try:
        write_atomic(target, text.encode("utf-8"), mode=mode)
    except OSError as exc:
        raise AgentMemoryError(
            f"Cannot write {path}: {exc.strerror}; it was not changed.",
            next_step=f"make {path} and its folder writable by you, then run the command again",
        ) from exc


def back_up(path: Path, runtime: str) -> str | None:
    """Copy `path` to `<state>/backups/<runtime>/<name>-<id>` (owner-only); its path, or None if `path` is absent."""
    from ..clock import new_id

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    backup = paths.state_dir() / "backups" / runtime / f"{path.name}-{new_id()}"
    write_atomic(backup, data, mode=0o600)
    return str(backup)
