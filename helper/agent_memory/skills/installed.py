"""What is installed in the agents' skill folders: where those folders are, and our install markers.

Kept apart from `installing` so that `status` can answer without loading the install machinery.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from .. import agents
from ..contents import compare, sha256
from . import layout


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
        found[relative] = entry.read_bytes() if entry.is_file() and not entry.is_symlink() else None
    return found


def read_marker(folder: Path) -> dict[str, object] | None:
    """The install marker of a folder we installed, or None."""
    with contextlib.suppress(OSError, ValueError):
        value = json.loads((folder / layout.MARKER).read_text(encoding="utf-8"))
        return value if isinstance(value, dict) else None
    return None


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
            changes = local_changes(folder) or {}
            found.append(
                {
                    "agent": agent,
                    "name": marker.get("name"),
                    "revision": marker.get("revision"),
                    "path": str(folder),
                    "modified": any(changes.values()),
                }
            )
    return found
