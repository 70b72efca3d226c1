"""Saving notes: check, hand the finished bytes to the outbox, upload, confirm.

The order is the guarantee: the finished bytes and their destination are on disk (the outbox's plan) before any
network call, and the plan goes away only when the bucket has confirmed the note.
"""

from __future__ import annotations

import os

from .. import agents, commands, guard, names
from ..clock import new_id, utc_now
from ..config.context import Context
from ..display import is_safe
from ..errors import AgentMemoryError, ContentRefused, UsageError
from ..outbox import writing
from ..outbox.delivery import deliver
from ..store.bucket import check_private
from . import notes, reading
from .origin import MACHINE_VARIABLE, home_suffix, machine_name
from .pending import NOTES

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..contract import NoteUpload
    from ..outbox.shape import Display

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
) -> NoteUpload:
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
    created = utc_now()
    meta: dict[str, object] = {
        "id": note_id,
        "title": title,
        "kind": kind,
        "project": project,
        "created": created,
        "agent": agent,
        "machine": machine,
        "session": session if session and len(session) <= notes.SESSION_MAX and is_safe(session) else None,
        "sources": sources,
        "tags": tags,
        "corrects": corrects,
    }
    check_secrets(body, meta, ORIGINS)  # every field, whatever its source: the environment's too
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
            next_step=f"{commands.line('search', 'QUERY')} (lists this project's notes and their ids), then save again",
        )
    display: Display = {
        "project": project,
        "title": title,
        "kind": kind,
        "created": created,
        "agent": agent,
        "machine": machine,
    }
    writing.create(NOTES.name, note_id, bucket, [(notes.object_path(project, note_id), data)], display)
    if machine is not None and not os.environ.get(MACHINE_VARIABLE):
        home_suffix(keep=True)  # the name a kept note carries stays this home's when the home moves
    outcome = deliver(NOTES, note_id, ctx, check_first=False)
    if outcome is None:  # discarded by hand in the instant between the two calls
        raise AgentMemoryError(
            f"Note {note_id} was discarded from the outbox before it was uploaded.",
            next_step=f"{commands.line('save')} again, with the same text",
        )
    return NOTES.result(outcome)


def check_secrets(body: str, meta: Mapping[str, object], origins: dict[str, str] | None = None) -> None:
    """ContentRefused naming the body line or field and the rule (never the value) if the note holds a credential.

    Every string of `meta` is scanned, lists included, so a field added later is covered without a change here;
    `origins` says where a field's value came from (an option, an environment variable), for the message.
    """

    problems = [f"body line {f.line}: {f.label} (rule {f.rule})" for f in guard.scan(body)]
    for key, value in meta.items():
        texts = [item for item in (value if isinstance(value, list) else [value]) if isinstance(item, str)]
        found = {(f.label, f.rule): None for text in texts for f in guard.scan(text)}  # once per field, in order
        origin = f" (from {origins[key]})" if origins and key in origins else ""
        problems += [f"field {key}{origin}: {label} (rule {rule})" for label, rule in found]
    if problems:
        raise ContentRefused(
            "The note looks like it contains a credential, so it was not saved: " + "; ".join(problems) + ".",
            next_step="remove the secret (describe where it is kept instead) and save again",
        )


def _bounded(values: list[str] | None, limit: int, option: str) -> list[str]:
    values = values or []
    if len(values) > limit:
        raise UsageError(f"A note takes at most {limit} {option} values.", next_step=f"give at most {limit} {option}")
    return values
