"""Reading one note by id: from the cache, the outbox (notes pending upload), or the bucket."""

from __future__ import annotations

from contextlib import suppress

from .. import config as config_file
from .. import names, outbox
from ..config.projects import resolve
from ..errors import AgentMemoryError
from .cache import ProjectCache
from .notes import object_path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any


def read(note_id: str, *, fresh: bool = False, project: str | None = None) -> dict[str, Any]:
    """`{"id", "path", "content" (bytes), "source": "cache"|"bucket"|"pending"}` for a note of this project
    (the current directory's, unless `project` is given)."""
    names.note_id(note_id)
    config = config_file.load()
    bucket = config_file.bucket(config)
    project = project or resolve(config=config)["project"]
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
    data = _from_bucket(bucket, path, damaged)
    if data is None and fresh and _pending(note_id) is not None:
        raise AgentMemoryError(
            f"Note {note_id} is pending on this machine: it is not in the bucket yet.",
            next_step=f"agent-memory save --retry {note_id}",
        )
    if data is None:
        raise AgentMemoryError(
            f"No note {note_id} in project {project} of {bucket}.",
            next_step="agent-memory search QUERY (lists matching notes and their ids)",
        )
    with suppress(OSError):  # the cache is a convenience: the note was read all the same
        cache.add({note_id: data})
    return _found(note_id, path, data, "bucket")


def _pending(note_id: str) -> tuple[dict[str, Any], bytes] | None:
    try:
        return outbox.pending_note(note_id)
    except outbox.Damaged as exc:
        raise outbox.damaged_error(note_id, str(exc)) from exc


def _from_bucket(bucket: str, path: str, damaged: bool) -> bytes | None:
    from ..store import StoreError, open_store, user_error

    try:
        return open_store(bucket).read(path)
    except StoreError as exc:
        what = f"Could not read {path} from {bucket}"
        if damaged:
            what = f"The cached copy of {path} is damaged (not shown), and reading it from {bucket} failed"
        raise user_error(exc, what, "agent-memory status (then check the network or credentials it names)") from exc


def _found(note_id: str, path: str, content: bytes, source: str) -> dict[str, Any]:
    return {"id": note_id, "path": path, "content": content, "source": source}
