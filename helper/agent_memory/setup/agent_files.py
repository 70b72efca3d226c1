"""The agents' own files that setup edits (instruction files, hook settings, Codex's config.toml): read as UTF-8
text, changed under one lock, backed up first, written back atomically through symlinks with their mode kept (less
any group or other write); and the marked blocks that agent-memory keeps in some of them.

One way for all of them, because they belong to the user: a file we could not write back unchanged is refused
before anything changes, and a backup never sits beside the original, where the agent could read it as
configuration.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from .. import paths
from ..clock import new_id
from ..errors import AgentMemoryError
from ..fsutil import locked, write_atomic


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


def lines_of(text: str) -> list[str]:
    """The text's lines with their endings, split at LF only: as TOML and Markdown count lines, not at the other
    separators `str.splitlines` knows, which may stand in a user's text."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def marked_blocks(
    lines: list[str], eligible: Iterable[int], begin: str, end: str, malformed: Callable[[str], AgentMemoryError]
) -> list[tuple[int, int]]:
    """The numbers (from 0) of each marked block's `begin` and `end` lines, in order.

    Only the `eligible` lines can be markers: those that the file's own syntax reads as plain lines of its own
    (not code in a Markdown file, not a string in a TOML file), so that a user's example of the markers stays
    theirs. Markers that do not pair up are refused (`malformed(why)`): guessing would lose the user's lines.
    """
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    for number in eligible:
        text = lines[number].strip()
        if text == begin:
            if start is not None:
                raise malformed("a begin marker follows another begin marker without an end marker")
            start = number
        elif text == end:
            if start is None:
                raise malformed("an end marker comes before any begin marker")
            blocks.append((start, number))
            start = None
    if start is not None:
        raise malformed("a begin marker has no end marker")
    return blocks
