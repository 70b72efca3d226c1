"""Project names and the mapping of local directories to them.

A project is resolved from the longest configured ancestor of the canonical current directory, on
directory boundaries. Nothing is guessed: an unmapped directory is an error that says how to map it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import config as config_file
from .. import names
from ..errors import NotSetUp, UsageError


def canonical(directory: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free form of a directory."""
    return Path(directory).expanduser().resolve()


def map_directory(name: str, directory: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Map `directory` (default: the current one) to project `name`; returns `{"project", "root"}`."""
    names.project(name)
    root = canonical(directory if directory is not None else Path.cwd())
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory.", next_step="agent-memory project map NAME DIR")
    config = config_file.load()
    mappings = dict(config.get("projects", {}))
    mappings[str(root)] = name
    config_file.update(projects=mappings)
    return {"project": name, "root": str(root)}


def resolve(directory: str | os.PathLike[str] | None = None, config: dict[str, Any] | None = None) -> dict[str, str]:
    """The project of `directory` (default: the current one): `{"project", "root"}`, or NotSetUp."""
    here = canonical(directory if directory is not None else Path.cwd())
    mappings = (config if config is not None else config_file.load()).get("projects", {})
    best: tuple[int, str, str] | None = None
    for root, name in mappings.items():
        root_path = Path(root)
        if (here == root_path or root_path in here.parents) and (best is None or len(root_path.parts) > best[0]):
            best = (len(root_path.parts), name, root)
    if best is None:
        raise NotSetUp(
            f"{here} is not mapped to a project on this machine.",
            next_step=f"agent-memory project map NAME {_quote(here)}",
        )
    return {"project": best[1], "root": best[2]}


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
