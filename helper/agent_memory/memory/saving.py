"""Saving notes: check, persist as pending, upload, confirm; and retries of what stayed pending.

The order is the guarantee: the finished bytes and their destination are on disk before any network call,
and the pending entry goes away only when the bucket has confirmed the object.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .. import agents, names, pending
from .. import config as config_file
from ..deadline import Budget
from ..errors import AgentMemoryError, UsageError
from ..store import StoreError, landed_anyway, open_store
from . import notes
from .cache import ProjectCache
from .projects import resolve

TAG_MAX = 64
SOURCE_MAX = 500
WHY = {
    "offline": "the bucket could not be reached (offline or timed out)",
    "auth": "authentication or access to the bucket failed",
    "error": "the upload failed",
    "busy": "another agent-memory process is uploading it right now",
}


def save(
    raw: bytes,
    *,
    title: str | None = None,
    kind: str = "note",
    tags: list[str] | None = None,
    sources: list[str] | None = None,
    corrects: str | None = None,
    agent: str | None = None,
    note_id: str | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """Save a note (of the current directory's project unless given); the contract's result, `saved` or `pending`.

    Every check runs before anything is written: a refused note leaves nothing behind, not even a pending entry.
    """
    config = config_file.load()
    bucket = config_file.bucket(config)
    project = project or resolve(config=config)["project"]
    if kind not in notes.KINDS:
        raise UsageError(f"Unknown kind {kind!r}: use one of {', '.join(notes.KINDS)}.")
    body = notes.decode_body(raw)
    tags = [notes.single_line(tag, "tag", TAG_MAX) for tag in tags or []]
    sources = [notes.single_line(source, "source", SOURCE_MAX) for source in sources or []]
    detected, session = agents.detect()
    agent = notes.single_line(agent or detected, "agent name", TAG_MAX)
    if corrects is not None:
        names.note_id(corrects)
    title = notes.derive_title(body, title)
    notes.check_secrets(body, {"--title": [title], "--tag": tags, "--source": sources})
    note_id = note_id or notes.new_id()
    meta = {
        "id": note_id,
        "title": title,
        "kind": kind,
        "project": project,
        "created": notes.utc_now(),
        "agent": agent,
        "session": session,
        "sources": sources,
        "tags": tags,
        "corrects": corrects,
    }
    shown = {key: meta[key] for key in ("title", "kind", "created", "agent")}
    entry = pending.add(
        note_id,
        bucket=bucket,
        path=notes.object_path(project, note_id),
        project=project,
        content=notes.render(meta, body),
        meta=shown,
    )
    with pending.claimed(note_id):
        return _upload(entry, Budget(), check_first=False)


def retry(note_id: str, budget: Budget | None = None) -> dict[str, Any]:
    """Upload one pending note again: same id, bytes and destination as when it was saved."""
    entry = pending.get(names.note_id(note_id))
    if entry is None:
        raise AgentMemoryError(
            f"No pending note {note_id} on this machine (it may already be saved).",
            next_step="agent-memory status (lists pending notes), or agent-memory read " + note_id,
        )
    with pending.claimed(note_id) as ours:
        if not ours:
            return _result(entry, "pending", "check again in a moment with agent-memory status", reason="busy")
        return _upload(entry, budget or Budget(), check_first=True)


def retry_all() -> dict[str, Any]:
    """Retry every pending note within one time budget; `{"results": [...]}`."""
    budget = Budget()
    return {"results": [retry(entry["id"], budget) for entry in pending.entries()]}


def _upload(entry: dict[str, Any], budget: Budget, *, check_first: bool) -> dict[str, Any]:
    """Upload and confirm; on a retry, first ask whether an earlier attempt already landed."""
    try:
        data = pending.content(entry)
    except ValueError as exc:
        return _result(entry, "pending", str(exc), reason="error")
    store = open_store(entry["bucket"], deadline=budget)
    try:
        if not (check_first and store.holds(entry["path"], data)):
            store.put(entry["path"], data)
    except StoreError as exc:
        if not landed_anyway(store, exc, entry["path"], data):
            pending.record_failure(entry, exc.reason, exc.detail)
            return _result(entry, "pending", exc.detail, reason=exc.reason)
    with contextlib.suppress(OSError):  # the cache is a convenience: a failure here must not fail the save
        ProjectCache(entry["bucket"], entry["project"]).add({entry["id"]: data})
    pending.remove(entry["id"])
    return _result(entry, "saved")


def _result(entry: dict[str, Any], status: str, detail: str = "", reason: str = "error") -> dict[str, Any]:
    note_id = entry["id"]
    if status == "saved":
        message = f"Saved {note_id} to {entry['bucket']}: it is shared."
    else:
        message = (
            f"Not shared yet: {note_id} is kept on this machine only, because {WHY.get(reason, WHY['error'])}"
            f" ({detail}). Do not save it again; run `agent-memory save --retry {note_id}` once that is fixed."
        )
    return {
        "id": note_id,
        "project": entry["project"],
        "bucket": entry["bucket"],
        "path": entry["path"],
        "status": status,
        "message": message,
    }
