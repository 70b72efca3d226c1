"""What an import keeps of each file and of each note imported before: for the type checker only (no command loads
this module, nor `typing` with it)."""

from __future__ import annotations

from typing import TypedDict

from ..contract import ImportOutcome, ImportRow, ImportSource
from ..store.base import Freshness
from .files import File


class Row(ImportOutcome):
    """One file as the import plans and saves it (`_shown` makes the contract's `ImportRow` of it)."""

    file: File


class ImportedNote(TypedDict):
    """A note imported before, as an import compares it: `body` is the SHA-256 of its body."""

    id: str
    created: str
    corrects: str | None
    body: str


class ImportRun(TypedDict):
    """What `run` gives the command: the contract's `Import`, with the refresh's `Freshness` still to tell."""

    project: str
    dry_run: bool
    sources: list[ImportSource]
    files: list[ImportRow]
    counts: dict[str, int]
    freshness: Freshness
