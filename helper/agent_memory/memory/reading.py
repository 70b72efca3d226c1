"""Reading one note by id: from the cache, the pending queue, or the bucket."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from .. import config as config_file
from .. import names, pending
from ..errors import AgentMemoryError
from .cache import ProjectCache
from .notes import object_path
from .projects import resolve


def read(note_id: str, *, fresh: bool = False) -> dict[str, Any]:
    """`{"id", "path", "content" (bytes), "source": "cache"|"bucket"|"pending"}` for a note of this project."""
    names.note_id(note_id)
    config = config_file.load()
    bucket = config_file.bucket(config)
    project = resolve(config=config)["project"]
    cache = ProjectCache(bucket, project)
    path = object_path(project, note_id)
    damaged = False
    if not fresh:
        if (data := cache.verified([note_id])[note_id]) is not None:
            return _found(note_id, path, data, "cache")
        damaged = cache.note_file(note_id).exists()  # never shown: the bucket's copy replaces it
        entry = pending.get(note_id)
        if entry is not None and entry["bucket"] == bucket and entry["path"] == path:
            return _found(note_id, path, pending.content(entry), "pending")
    data = _from_bucket(bucket, path, damaged)
    if data is None and fresh and pending.get(note_id) is not None:
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


def _from_bucket(bucket: str, path: str, damaged: bool) -> bytes | None:
    from ..errors import AccessError
    from ..store import StoreError, open_store

    try:
        return open_store(bucket).read(path)
    except StoreError as exc:
        error = AccessError if exc.reason == "auth" else AgentMemoryError
        message = f"Could not read {path} from {bucket}: {exc.detail}."
        if damaged:
            message = (
                f"The cached copy of {path} is damaged (not shown), and reading it from {bucket} failed: {exc.detail}."
            )
        raise error(message, next_step="agent-memory status (and check the network or credentials)") from exc


def _found(note_id: str, path: str, content: bytes, source: str) -> dict[str, Any]:
    return {"id": note_id, "path": path, "content": content, "source": source}
