"""What a project's cache keeps of its last listings: for the type checker only (no command loads this module, nor
`typing` with it)."""

from __future__ import annotations

from typing import TypedDict

from ..contract import Gone, Skipped
from ..outbox.shape import Display


class CacheReport(TypedDict):
    """What the last listings skipped, and the notes they found gone from the bucket (for `status`)."""

    skipped: list[Skipped]
    gone: list[Gone]


class WaitingNote(Display):
    """A note of the command's project waiting in the outbox, with its displayed fields and its exact text."""

    id: str
    path: str
    content: str


class FoundNote(TypedDict):
    """A note read (`reading.read`): its exact bytes, and where they came from (`cache`, `pending`, `bucket`)."""

    id: str
    path: str
    content: bytes
    source: str


class PendingCandidate(TypedDict):
    """A pending note as the pack would hold it (`search`): its fields, its lowercased title line and body, and
    where the body starts."""

    fields: dict[str, str]
    entry: WaitingNote
    text: bytes
    body: int


class Candidate(TypedDict):
    """A note that a search ranks: its fields, how many terms it holds (`found`) and which (`has`), and, pending,
    the waiting note itself."""

    id: str
    fields: dict[str, str]
    found: int
    has: frozenset[bytes]
    pending: bool
    entry: WaitingNote | None


class HasId(TypedDict):
    """Anything listed by note id (`search._in_chains` puts chains of corrections together in any such list)."""

    id: str
