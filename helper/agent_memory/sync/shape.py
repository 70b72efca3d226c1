"""What this machine records of the versions of the runtimes' memory files: for the type checker only (no command
loads this module, nor `typing` with it)."""

from __future__ import annotations

from typing import TypedDict


class VersionMeta(TypedDict):
    """A version without its text (`Version.meta`): `hash` None for a deletion."""

    id: str
    path: str
    bases: list[str]
    hash: str | None
    machine: str
    time: str


class HistoryRecord(TypedDict, total=False):
    """`versions.json` of one scope, as `history._well_formed` holds it: the versions by id, each object of the
    bucket's folder (its version id, "" if refused), why objects were refused, and how new the listing was."""

    versions: dict[str, VersionMeta]
    objects: dict[str, str]
    refused: dict[str, str]
    updated_at: str | None
    checked_at: float | None


class IndexRecord(TypedDict, total=False):
    """A memory folder's record (`index.FolderIndex`), as `index._well_formed` holds it: its files and conflicts
    (objects), the counts (integers); the other keys are read as anyone's, each where it is read."""

    folder: object
    files: dict[str, dict[str, object]]
    conflicts: dict[str, dict[str, object]]
    pushed: int
    pulled: int
    last_sync: str | None  # as this machine writes it (not held by `_well_formed`)
    held: object
    blocked: object
    holding: object
    recent: object
    arrived: object
    session_at: object
