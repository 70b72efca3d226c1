"""Project names and the mapping of local directories to them.

A project is resolved from the longest configured ancestor of the canonical current directory, on
directory boundaries. Nothing is guessed: an unmapped directory is an error that says how to map it.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from .. import names
from ..errors import NotSetUp, UsageError
from . import editing, load


def canonical(directory: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free form of a directory."""
    return Path(directory).expanduser().resolve()


def map_directory(name: str, directory: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Map `directory` (default: the current one) to project `name`; returns `{"project", "root"}`."""
    names.project(name)
    root = mappable(directory)
    with editing() as config:
        add_mapping(config, name, root)
    return {"project": name, "root": str(root)}


def mappable(directory: str | os.PathLike[str] | None = None) -> Path:
    """The canonical form of `directory` (default: the current one), if it can be mapped; else UsageError."""
    root = canonical(directory if directory is not None else Path.cwd())
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory.", next_step="agent-memory project map NAME DIR")
    try:
        str(root).encode("utf-8")
    except UnicodeEncodeError:  # the configuration is UTF-8 JSON: such a path could not be recorded
        raise UsageError(
            f"The path {str(root).encode('utf-8', 'surrogateescape')!r} is not valid UTF-8, so it cannot be mapped.",
            next_step="rename the folder to a UTF-8 name, then map it again",
        ) from None
    return root


def add_mapping(config: dict[str, object], name: str, root: Path) -> None:
    """Record in `config` (being edited) that `root` belongs to project `name`."""
    config.setdefault("projects", {})[str(root)] = name  # `load` made sure that it is an object


def resolve(directory: str | os.PathLike[str] | None = None, config: dict[str, object] | None = None) -> dict[str, str]:
    """The project of `directory` (default: the current one): `{"project", "root"}`, or NotSetUp."""
    here = canonical(directory if directory is not None else Path.cwd())
    mappings = (config if config is not None else load()).get("projects", {})
    best: tuple[int, str, str] | None = None
    for root, name in mappings.items():
        root_path = Path(root)
        if (here == root_path or root_path in here.parents) and (best is None or len(root_path.parts) > best[0]):
            best = (len(root_path.parts), name, root)
    if best is None:
        raise NotSetUp(
            f"{here} is not mapped to a project on this machine.",
            next_step=_map_command(here),
        )
    return {"project": best[1], "root": best[2]}


def _map_command(path: Path) -> str:
    """The command that maps `path`; for a folder whose name is not UTF-8 (which could not be recorded), a rename."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return "rename the folder to a UTF-8 name, then run in it: agent-memory project map NAME"
    return f"agent-memory project map NAME {shlex.quote(str(path))}"
