"""Copies of the agents' files we are about to change, kept in agent-memory's state folder.

Never beside the original: a copy inside the agent's own folder could be read as configuration by the agent.
"""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..fsutil import write_atomic


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
