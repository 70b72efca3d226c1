"""What `status` keeps of the outbox: for the type checker only (no command loads this module, nor `typing`)."""

from __future__ import annotations

from typing import TypedDict

from ..contract import Damage, NoteWaiting, PendingPublication, PendingSync


class Waiting(TypedDict):
    """Every upload in the outbox by its kind's group, notes as `status` lists them, and the damaged ones."""

    notes: list[NoteWaiting]
    skills: list[PendingPublication]
    sync: list[PendingSync]
    damaged: list[Damage]
