"""The reading half of the install pair (`install_write` installs; `status` loads only this half).

The inventory of the agents' user skill folders: which skills agent-memory installed there and at which
revision, read from its install markers (`installed_skills`, for `status`, which reads no file that nothing
touched since), and the edits made in a folder since (`local_changes`, which install and uninstall check before
they replace or remove anything). Installing itself (copies, swaps, backups) is `install_write`'s.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from .. import agents
from ..contents import compare, sha256
from ..fsutil import read_own
from . import layout

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import InstalledSkill

MARKER_MAX = 1 << 20  # bytes of an install marker read at most: the checksums of a thousand files


def skill_roots(agent: str) -> dict[str, Path]:
    """The user skill folders of `agent` (`codex`, `claude`, or `both`/`all`)."""
    return {name: agents.runtime(name).skills_dir() for name in agents.selected(agent)}


def folder_files(folder: Path) -> dict[str, bytes | None]:
    """Files of an installed folder (`layout.skill_files`: relative path -> bytes; None for anything that is not a
    regular file, a link included)."""
    if not folder.is_dir() or folder.is_symlink():
        return {}
    return {relative: _bounded(folder / relative) for relative in layout.skill_files(folder)}


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
    return compare(dict(marker.get("files") or {}), current)  # type: ignore[call-overload]  # we wrote it: an object


def installed_skills() -> list[InstalledSkill]:
    """Every skill folder we installed, per agent, with its revision and whether it was edited locally."""
    found: list[InstalledSkill] = []
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
        files = layout.skill_files(folder)
    except OSError:
        return False
    return (
        isinstance(listed, dict)
        and set(files) == set(listed)
        and all(stat.S_ISREG(found.st_mode) and found.st_ctime_ns <= since for found in files.values())
    )
