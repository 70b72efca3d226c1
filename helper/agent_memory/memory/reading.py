"""Reading one note by id: from the cache, the outbox (notes pending upload), or the bucket."""

from __future__ import annotations

from .. import commands, names
from ..config.context import Context
from ..errors import AgentMemoryError
from ..outbox.kinds import RETRY, damaged_error
from ..outbox.plans import Damaged
from ..store.base import StoreError
from .cache import NOTE_FILE_MAX, ProjectCache
from .notes import object_path
from .pending import pending_copy

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..outbox.shape import Plan
    from .shape import FoundNote


def read(ctx: Context, note_id: str, *, fresh: bool = False) -> FoundNote:
    """`{"id", "path", "content" (bytes), "source": "cache"|"bucket"|"pending"}` for a note of the command's
    project."""
    names.note_id(note_id)
    bucket, project = ctx.bucket, ctx.project
    cache = ProjectCache(bucket, project)
    path = object_path(project, note_id)
    damaged = False
    if not fresh:
        if (data := cache.verified([note_id])[note_id]) is not None:
            return _found(note_id, path, data, "cache")
        damaged = cache.note_file(note_id).exists()  # never shown: the bucket's copy replaces it
        waiting = _pending(note_id)
        if waiting is not None and waiting[0]["bucket"] == bucket and waiting[0]["objects"][-1]["path"] == path:
            return _found(note_id, path, waiting[1], "pending")
    try:
        data = ctx.store.read(path, NOTE_FILE_MAX)  # never downloaded if larger than any note
    except StoreError as exc:
        if damaged:
            exc.during(f"The cached copy of {path} is damaged (not shown), and reading it from {bucket} failed")
            raise
        exc.during(f"Could not read {path} from {bucket}")
        raise
    if data is None and fresh and _pending(note_id) is not None:
        raise AgentMemoryError(
            f"Note {note_id} is pending on this machine: it is not in the bucket yet.",
            next_step=f"{RETRY} {note_id}",
        )
    if data is None:
        raise AgentMemoryError(
            f"No note {note_id} in project {project} of {bucket}.",
            next_step=f"{commands.line('search', 'QUERY')} (lists matching notes and their ids)",
        )
    try:
        cache.add({note_id: data})
    except OSError:  # the cache is a convenience: the note was read all the same
        pass
    return _found(note_id, path, data, "bucket")


def known(ctx: Context, note_id: str) -> bool | None:
    """Whether the command's project has note `note_id` (cached, pending on this machine for this bucket, or in the
    bucket); None when the bucket could not say (offline, say): then nobody can tell that it does not exist."""
    bucket, path = ctx.bucket, object_path(ctx.project, note_id)
    if ProjectCache(bucket, ctx.project).verified([note_id])[note_id] is not None:
        return True
    waiting = _pending(note_id)
    if waiting is not None and waiting[0]["bucket"] == bucket and waiting[0]["objects"][-1]["path"] == path:
        return True
    try:
        return ctx.store.read(path, NOTE_FILE_MAX) is not None
    except StoreError:
        return None


def _pending(note_id: str) -> tuple[Plan, bytes] | None:
    try:
        return pending_copy(note_id)
    except Damaged as exc:
        raise damaged_error(note_id, str(exc)) from exc


def _found(note_id: str, path: str, content: bytes, source: str) -> FoundNote:
    return {"id": note_id, "path": path, "content": content, "source": source}
