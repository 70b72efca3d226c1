"""Reading one note by id: from the cache, the outbox (notes pending upload), or the bucket."""

from __future__ import annotations

import contextlib
from typing import Any

from .. import config as config_file
from .. import names, outbox
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
    if not fresh:
        with contextlib.suppress(FileNotFoundError):
            return _found(note_id, path, cache.note_file(note_id).read_bytes(), "cache")
        waiting = _pending(note_id)
        if waiting is not None and waiting[0]["bucket"] == bucket and waiting[0]["objects"][-1]["path"] == path:
            return _found(note_id, path, waiting[1], "pending")
    data = _from_bucket(bucket, path)
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
    with contextlib.suppress(OSError):
        cache.add({note_id: data})
    return _found(note_id, path, data, "bucket")


def _pending(note_id: str) -> tuple[dict[str, Any], bytes] | None:
    try:
        return outbox.pending_note(note_id)
    except outbox.Damaged as exc:
        raise outbox.damaged_error(note_id, str(exc)) from exc


def _from_bucket(bucket: str, path: str) -> bytes | None:
    from ..errors import AccessError
    from ..store import StoreError, open_store

    try:
        return open_store(bucket).read(path)
    except StoreError as exc:
        error = AccessError if exc.reason == "auth" else AgentMemoryError
        raise error(
            f"Could not read {path} from {bucket}: {exc.detail}.",
            next_step="agent-memory status (and check the network or credentials)",
        ) from exc


def _found(note_id: str, path: str, content: bytes, source: str) -> dict[str, Any]:
    return {"id": note_id, "path": path, "content": content, "source": source}
