"""Where the memories a user already has are kept: Claude Code's auto memory for this checkout, Codex's memories,
Cline's `memory-bank/`, or any folder of Markdown files given by the user.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import commands
from ..agents import codex
from ..config import claude_memory_folder
from ..errors import UsageError

LABELS = {"claude": "Claude Code's auto memory", "codex": "Codex's memories", "cline": "Cline's memory bank"}
TOOLS = tuple(LABELS)
FOLDER_TAG = "markdown"  # the tool tag of `import PATH` without --from


@dataclass
class Source:
    """One place memories may be kept: which tool's (`tool`, the note's tag), its folder, and whether it exists."""

    tool: str
    folder: Path
    found: bool
    why: str = ""  # how the folder was found (or why it is absent), for people
    relative_to: Path | None = None  # files below this folder are recorded by their path relative to it
    ignored: tuple[str, ...] = ()  # the tool's own working files (fnmatch patterns of paths in the folder)


def claude_source(folder: Path) -> Source:
    """Claude Code's auto memory for the checkout that holds `folder` (see `config.claude_memory_folder`)."""
    memory, why = claude_memory_folder.memory_folder(folder)
    return _source("claude", memory, why)


def codex_memories() -> Source:
    """Codex's memories: `$CODEX_HOME/memories/`. They are not kept per project."""
    found = _source("codex", codex.home() / "memories", "Codex's memories (CODEX_HOME)")
    found.ignored = codex.WORKING_FILES
    return found


def cline_memory_bank(folder: Path, checkout: Path) -> Source:
    """Cline's `memory-bank/` folder: the nearest one from `folder` up to its checkout's root (the mapped
    `checkout`, or the root of the git checkout or worktree `folder` is in), recorded relative to that root."""
    levels = [folder, *folder.parents]
    root = next((level for level in levels if level == checkout or os.path.lexists(level / ".git")), None)
    for level in levels[: levels.index(root) + 1] if root is not None else [checkout]:
        if (level / "memory-bank").is_dir():
            return _source("cline", level / "memory-bank", "Cline's memory bank", relative_to=root or checkout)
    return Source("cline", (root or checkout) / "memory-bank", False, f"no memory-bank/ folder in {root or checkout}")


def folder_source(path: str, tool: str | None, checkout: Path) -> Source:
    """`import PATH`: a folder of Markdown files (UsageError if it is not one)."""
    folder = Path(path).expanduser().resolve()  # one folder, one name: however it is given, its notes match
    if not folder.is_dir():
        if folder.is_file():
            raise UsageError(
                f"{path} is a file: import takes a folder of Markdown files.",
                next_step=f"{commands.line('save', '--file', path)} (one file), or {commands.line('import', 'DIR')}",
            )
        raise UsageError(
            f"There is no folder {path}.", next_step=f"{commands.line('import', 'DIR')} (a folder of Markdown files)"
        )
    return _source(tool or FOLDER_TAG, folder, "the folder given", relative_to=checkout)


def _source(tool: str, folder: Path, why: str, relative_to: Path | None = None) -> Source:
    return Source(tool, folder, folder.is_dir(), why if folder.is_dir() else f"no folder {folder}", relative_to)
