"""The writing half of the agent files pair (they are read as text by `agent_files_read`).

The agents' own files that setup edits (instruction files, hook settings, Codex's config.toml): changed under one
lock, backed up first, written back atomically through symlinks with their mode kept (less any group or other
write). They are read as text by `agent_files_read`.

One way for all of them, because they belong to the user: a file we could not write back unchanged is refused
before anything changes, and a backup never sits beside the original, where the agent could read it as
configuration.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .. import paths
from ..clock import new_id
from ..errors import AgentMemoryError
from ..fsutil import locked, write_atomic
from .agent_files_read import read_text

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import FileEdit


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


_left: list[str] = []  # this command's files reached through a link whose target cannot be written (`left_alone`)


def left_alone() -> list[str]:
    """Why each file that this command meant to change was left as it is, since the last call: a link into a
    folder that cannot be written (home-manager links into its read-only store). A notice, not an error: the
    file is the user's, and so is the way they manage it."""
    found = list(_left)
    _left.clear()
    return found


def edit(path: Path, runtime: str, change: Callable[[str | None], str | None], *, empty: str = "") -> FileEdit:
    """Change one of `runtime`'s files: `change` gets its text (None: there is no file) and gives the new text
    (None: no file). Under one lock for all the agents' files, so that two commands at once lose neither change;
    the previous file is backed up first, and a file with nothing to change is not written. `{"changed", "backup"}`.

    Dotfiles managers (stow, chezmoi, home-manager) link these files into a folder of theirs: the file is edited
    where the link leads and the link stays. A file reached through a link is never deleted: where `change` would
    delete it, it is left holding `empty` (the format's empty document). A target that cannot be written (a
    read-only store) is left as it is and told by `left_alone`.
    """
    target = Path(os.path.realpath(path))
    linked = target != Path(os.path.abspath(path))
    with locked(paths.state_dir() / "agent-files.lock"):
        before = read_text(target)
        after = change(before)
        if after == before:
            return {"changed": False, "backup": None}  # no write: the mtime stays
        if after is None and linked:
            after = empty  # the link, and the file it leads to, are the user's: emptied, never deleted
            if after == before:
                return {"changed": False, "backup": None}
        backup = back_up(target, runtime)
        if after is None:
            _delete(target)
            return {"changed": True, "backup": backup}
        try:
            write_text(target, after)
        except AgentMemoryError as exc:
            if not linked or not isinstance(exc.__cause__, OSError) or exc.__cause__.errno not in _READ_ONLY:
                raise
            _left.append(
                f"{path} links to {target}, which cannot be written ({exc.__cause__.strerror}), so it was left as "
                "it is: change it where your dotfiles are managed (for example home-manager's configuration)."
            )
            return {"changed": False, "backup": None}
    return {"changed": True, "backup": backup}


_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


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
