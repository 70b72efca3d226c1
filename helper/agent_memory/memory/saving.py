"""Saving notes: check, hand the finished bytes to the outbox, upload, confirm.

The order is the guarantee: the finished bytes and their destination are on disk (the outbox's plan) before any
network call, and the plan goes away only when the bucket has confirmed the note.
"""

from __future__ import annotations

import os
import re

from .. import agents, guard, names, outbox
from ..clock import new_id, utc_now
from ..context import Context
from ..display import is_safe
from ..errors import AgentMemoryError, UsageError
from ..store import check_private
from . import notes, reading
from .note_uploads import NOTES

MACHINE_VARIABLE = "AGENT_MEMORY_MACHINE"
# where the fields that do not come from the note itself are given, for the secret guard's message
ORIGINS = {
    "title": "--title or the first heading",
    "tags": "--tag",
    "sources": "--source",
    "agent": "--agent or AGENT_MEMORY_AGENT",
    "session": "the agent's session id in the environment",
    "machine": MACHINE_VARIABLE + " or the host name",
}


def save(
    ctx: Context,
    raw: bytes,
    *,
    title: str | None = None,
    kind: str = "note",
    tags: list[str] | None = None,
    sources: list[str] | None = None,
    corrects: str | None = None,
    agent: str | None = None,
    note_id: str | None = None,
) -> dict[str, object]:
    """Save a note of the command's project; the contract's result, `saved` or `pending`.

    Every check runs before anything is written: a refused note leaves nothing behind, not even a pending entry.
    """
    bucket, project = ctx.bucket, ctx.project
    check_private(bucket)  # a folder store that others can open is refused before the note is kept anywhere
    if kind not in notes.KINDS:
        raise UsageError(
            f"Unknown kind {kind!r}: use one of {', '.join(notes.KINDS)}.", next_step="add --kind note (the default)"
        )
    body = notes.decode_body(raw)
    tags = [notes.single_line(tag, "tag", notes.TAG_MAX, "--tag") for tag in _bounded(tags, notes.TAGS_MAX, "--tag")]
    sources = [
        notes.single_line(source, "source", notes.SOURCE_MAX, "--source")
        for source in _bounded(sources, notes.SOURCES_MAX, "--source")
    ]
    detected, session = agents.detect()
    if session is not None and not names.is_id(session):
        session = None  # the runtimes' ids are UUIDs: anything else in that variable is not worth a refusal
    agent = notes.single_line(agent or detected, "agent name", notes.NAME_MAX, "--agent (or AGENT_MEMORY_AGENT)")
    machine = machine_name()
    if corrects is not None:
        names.note_id(corrects)
    title = notes.derive_title(body, title)
    note_id = note_id or new_id()
    meta = {
        "id": note_id,
        "title": title,
        "kind": kind,
        "project": project,
        "created": utc_now(),
        "agent": agent,
        "machine": machine,
        "session": session if session and len(session) <= notes.SESSION_MAX and is_safe(session) else None,
        "sources": sources,
        "tags": tags,
        "corrects": corrects,
    }
    notes.check_secrets(body, meta, ORIGINS)  # every field, whatever its source: the environment's too
    data = notes.render(meta, body)
    problem = notes.fields(note_id, data)[1]
    if problem is not None:  # never store a note that readers would list as damaged
        raise UsageError(
            f"The note's fields would not be readable ({problem}).",
            next_step="save it again with fewer or shorter --tag and --source values",
        )
    if corrects is not None and reading.known(ctx, corrects) is False:  # last: it may cost a read of the bucket
        raise UsageError(
            f"--corrects {corrects}: project {project} has no such note (not in {bucket}, the cache or this "
            "machine's pending notes), so nothing was saved.",
            next_step="agent-memory search QUERY (lists this project's notes and their ids), then save again",
        )
    display = {key: meta[key] for key in ("project", "title", "kind", "created", "agent", "machine")}
    outbox.add(NOTES, note_id, bucket, [(notes.object_path(project, note_id), data)], display)
    result = outbox.deliver(NOTES, note_id, ctx, check_first=False)
    if result is None:  # discarded by hand in the instant between the two calls
        raise AgentMemoryError(
            f"Note {note_id} was discarded from the outbox before it was uploaded.",
            next_step="agent-memory save again, with the same text",
        )
    return result


def machine_name() -> str | None:
    """This machine's short name, recorded in each note it saves so that readers can tell whose notes are whose:
    `$AGENT_MEMORY_MACHINE`, else the first label of the host name, in plain letters.

    A host name that looks like a credential is not recorded at all; a given name is checked like the other
    fields (refused if it looks like one).
    """
    value = os.environ.get(MACHINE_VARIABLE)
    if value:
        return notes.single_line(value, "machine name", notes.NAME_MAX, MACHINE_VARIABLE)
    import socket  # several milliseconds to load: only a save pays for it, not the commands that import this

    host = re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname().split(".")[0]).strip("-")[: notes.NAME_MAX]
    return host if host and not guard.scan(host) else None


def _bounded(values: list[str] | None, limit: int, option: str) -> list[str]:
    values = values or []
    if len(values) > limit:
        raise UsageError(f"A note takes at most {limit} {option} values.", next_step=f"give at most {limit} {option}")
    return values
