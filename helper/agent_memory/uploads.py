"""The kinds of upload that the outbox carries, as their own domains describe them: notes, skill publications, and
the versions of the runtimes' own memory files that sync pushes.

What retries or lists every upload (`pending`, `status`, the Stop hook) takes them from here; and how `status` lists
a note waiting, with its age.
"""

from __future__ import annotations

from .clock import age_seconds
from .memory.pending import NOTES
from .skills.pending import SKILLS
from .sync.uploads import SYNC

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .contract import NoteWaiting, PendingNote

KINDS = (NOTES, SKILLS, SYNC)


def note_summary(entry: PendingNote) -> NoteWaiting:
    """A note waiting in the outbox (`NOTES.entry`) as `status` lists it: where it goes, how many seconds ago it was
    queued, how its attempts went."""
    return {
        "id": entry.get("id"),
        "bucket": entry.get("bucket"),
        "path": entry.get("path"),
        "age_seconds": age_seconds(queued) if (queued := entry.get("queued")) else None,
        "attempts": entry.get("attempts", 0),
        "last_error": entry.get("last_error"),
    }
