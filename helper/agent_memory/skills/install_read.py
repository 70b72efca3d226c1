"""The reading half of the install pair (`install_write` installs; `status` loads only this half).

The inventory of the agents' user skill folders: which skills agent-memory installed there and at which
revision, read from its install markers (`installed_skills`, for `status`, which reads no file that nothing
touched since), and the edits made in a folder since (`local_changes`, which install and uninstall check before
they replace or remove anything). Installing itself (copies, swaps, backups) is `install_write`'s.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from .. import agents
from ..contents import compare, sha256
from ..fsutil import read_own
from . import layout

MARKER_MAX = 1 << 20  # bytes of an install marker read at most: the checksums of a thousand files


def skill_roots(agent: str) -> dict[str, Path]:
    """The user skill folders of `agent` (`codex`, `claude`, or `both`/`all`)."""
    return {name: agents.runtime(name).skills_dir() for name in agents.selected(agent)}


def folder_files(folder: Path) -> dict[str, bytes | None]:
    """Files of an installed folder (relative path -> bytes; None for anything that is not a regular file)."""
    found: dict[str, bytes | None] = {}
    for entry in sorted(folder.rglob("*")) if folder.is_dir() else []:
        relative = entry.relative_to(folder).as_posix()
        if relative == layout.MARKER or (entry.is_dir() and not entry.is_symlink()):
            continue
        found[relative] = _bounded(entry)
    return found


def _bounded(file: Path) -> bytes | None:
    """The bytes of a regular file of the user's, at most a skill file's limit; None for anything else (a FIFO, a
    link, a file too large): it differs from what we installed, and is never waited on nor read whole."""
    try:
        return read_own(file, layout.FILE_MAX)
    except OSError:
        return None


def read_marker(folder: Path) -> dict[str, object] | None:
    """The install marker of a folder we installed, or None."""
    try:
        value = json.loads(read_own(folder / layout.MARKER, MARKER_MAX))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def local_changes(folder: Path) -> dict[str, list[str]] | None:
    """How an installed folder differs from what we installed in it (None if it has no marker)."""
    marker = read_marker(folder)
    if marker is None:
        return None
    current = {p: (sha256(d) if d is not None else None) for p, d in folder_files(folder).items()}
    return compare(dict(marker.get("files") or {}), current)


def installed_skills() -> list[dict[str, object]]:
    """Every skill folder we installed, per agent, with its revision and whether it was edited locally."""
    found = []
    for agent, root in skill_roots("both").items():
        for folder in sorted(root.iterdir()) if root.is_dir() else []:
            marker = read_marker(folder)
            if marker is None:
                continue
            found.append(
                {
                    "agent": agent,
                    "name": marker.get("name"),
                    "revision": marker.get("revision"),
                    "path": str(folder),
                    "modified": not _untouched(folder, marker) and any((local_changes(folder) or {}).values()),
                }
            )
    return found


def _untouched(folder: Path, marker: dict[str, object]) -> bool:
    """Whether `folder` still holds just the regular files its marker lists, none changed since: each one's status
    change time (ctime, which a write, a rename or a chmod sets and no one can set back) is not later than the
    marker's, written after them. Cheap (no file read, no digest: `status` runs it on every installed skill); when
    it cannot tell, `local_changes` compares the digests."""
    listed = marker.get("files")
    try:
        since = (folder / layout.MARKER).lstat().st_ctime_ns
        stats = _entries(folder)
    except OSError:
        return False
    stats.pop(layout.MARKER, None)  # the marker itself (one of that name further down is a file like any other)
    files = {path: found for path, found in stats.items() if not stat.S_ISDIR(found.st_mode)}
    return (
        isinstance(listed, dict)
        and set(files) == set(listed)
        and all(stat.S_ISREG(found.st_mode) and found.st_ctime_ns <= since for found in files.values())
    )


def _entries(folder: Path) -> dict[str, os.stat_result]:
    """Everything below `folder` (links not followed, a link to a folder not entered), by its path relative to it with
    `/` between names, with its `lstat`: one `scandir` per folder, no path object per entry (status runs this on
    every installed skill)."""
    found: dict[str, os.stat_result] = {}
    folders = [("", str(folder))]
    while folders:
        prefix, path = folders.pop()
        with os.scandir(path) as listing:
            for entry in listing:
                relative = prefix + entry.name
                found[relative] = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(found[relative].st_mode):
                    folders.append((relative + "/", entry.path))
    return found
