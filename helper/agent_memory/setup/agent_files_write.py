"""The writing half of the agent files pair (they are read as text by `agent_files_read`).

The agents' own files that setup edits (instruction files, hook settings, Codex's config.toml): changed under one
lock, backed up first, written back atomically through symlinks with their mode kept (less any group or other
write). They are read as text by `agent_files_read`.

One way for all of them, because they belong to the user: a file we could not write back unchanged is refused
before anything changes, and a backup never sits beside the original, where the agent could read it as
configuration.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from .. import paths
from ..clock import new_id
from ..errors import AgentMemoryError
from ..fsutil import locked, write_atomic
from .agent_files_read import read_text


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
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    backup = paths.state_dir() / "backups" / runtime / f"{path.name}-{new_id()}"
    write_atomic(backup, data, mode=0o600)
    return str(backup)


def edit(path: Path, runtime: str, change: Callable[[str | None], str | None]) -> dict[str, object]:
    """Change one of `runtime`'s files: `change` gets its text (None: there is no file) and gives the new text
    (None: no file). Under one lock for all the agents' files, so that two commands at once lose neither change;
    the previous file is backed up first, and a file with nothing to change is not written. `{"changed", "backup"}`.
    """
    target = Path(os.path.realpath(path))  # dotfile repositories link these files: edit through the link
    with locked(paths.state_dir() / "agent-files.lock"):
        before = read_text(target)
        after = change(before)
        if after == before:
            return {"changed": False, "backup": None}  # no write: the mtime stays
        backup = back_up(target, runtime)
        if after is None:
            _delete(target)  # through the link: a link of the user's stays, as it was before the file existed
        else:
            write_text(target, after)
    return {"changed": True, "backup": backup}


def _delete(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise AgentMemoryError(
            f"Cannot delete {path}: {exc.strerror}.",
            next_step=f"make the folder of {path} writable by you, then run the command again",
        ) from exc
