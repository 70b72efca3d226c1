"""A checkpoint as the reminder after a compaction points to it: for the type checker only (no command loads this
module, nor `typing` with it)."""

from __future__ import annotations

from typing import TypedDict


class Checkpoint(TypedDict):
    """A checkpoint found (a search's `NoteHit` has these keys too): its id, title, date, and whether it is pending."""

    id: str
    title: str
    created: str
    pending: bool
