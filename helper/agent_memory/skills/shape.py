"""What installing a skill gives back to the command that asked: for the type checker only (no command loads this
module, nor `typing` with it)."""

from __future__ import annotations

from typing import TypedDict


class InstalledFiles(TypedDict):
    """`install_files`: every destination, which now holds the files, and the backup of what was there."""

    installed: list[str]
    backup: str | None


class FoundFile(TypedDict):
    """One file of a published revision (`catalog.read_file`), its exact bytes."""

    name: str
    revision: str
    file: str
    content: bytes
