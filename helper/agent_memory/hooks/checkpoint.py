"""The SessionStart reminder's pointer after a compaction (`reminder`, which loads this module only then): this
session's newest checkpoint, or else the project's newest as another session's, by its id, title, date and whose
it is, never its content."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..config.context import Context
from ..display import safe, shorten
from ..errors import AgentMemoryError
from ..memory import pack
from ..memory.cache import ProjectCache
from ..memory.origin import machine_name
from ..memory.pending import pending
from ..memory.search import is_setup, search

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import Checkpoint

MAX_TITLE = 120
CHECKPOINTS = 20  # the newest checkpoints looked through first for this session's own (then every other one)


def line(helper: str, ctx: Context, agent: str, session: str | None, earlier: list[str] | None = None) -> list[str]:
    """A pointer to this session's newest checkpoint in the local cache (or pending here), never its content: its
    id, title and date. `earlier`: the sessions this one was forked from (`forks`), whose checkpoints are this
    conversation's. Without one, the project's newest checkpoint, offered plainly as another session's (another
    worktree, agent or machine), so that a session does not pick up another one's work as its own."""
    cache = ProjectCache(ctx.bucket, ctx.project)
    waiting = pending(ctx)
    found = search(cache, "", limit=CHECKPOINTS, kind="checkpoint", pending_notes=waiting)
    if not found:
        return []
    texts = {str(entry["id"]): str(entry["content"]).encode() for entry in waiting}
    ours: set[str | None] = {session, *(earlier or [])} if session else set()
    own: Checkpoint | None = next((hit for hit in found if ours and _session_of(cache, hit, texts) in ours), None)
    if own is None and ours and len(found) == CHECKPOINTS:  # more were saved since: look through every one
        own = _older_own(cache, ours, {str(hit["id"]) for hit in found})
    # display-safe already (`search`), its date checked when it was cached (`notes.fields`)
    if own is not None:
        title = shorten(own["title"], MAX_TITLE)
        saved = _session_of(cache, own, texts)
        who = "This session" if saved == session else "This conversation (in the session it was forked from)"
        return [
            f'The context was just compacted. {who} saved the checkpoint {own["id"]} "{title}" '
            f"({own['created']}) before it; to pick up from it, read it with: {helper} read {own['id']}"
        ]
    newest = found[0]
    title = shorten(newest["title"], MAX_TITLE)
    # only whether they match this session's: a note's agent and machine are anyone's text, and stay out of it
    mine = _this_machine()
    here, same_agent = bool(mine) and newest["machine"] == mine, newest["agent"] == agent
    if here and same_agent:
        by = f"by {agent} on this machine"
    elif same_agent:
        by = "on another machine"
    else:
        by = "by another agent " + ("on this machine" if here else "elsewhere")
    whose = (
        f"another session's: saved {by}, not in this session"
        if session
        else f"saved {by}; this session's id is unknown, so whether it saved it cannot be told"
    )
    return [
        f'The context was just compacted. This project\'s newest checkpoint is {newest["id"]} "{title}" '
        f"({newest['created']}), {whose}. It may be other work (another worktree, task or agent): only if this "
        f"task continues it, read it with: {helper} read {newest['id']}"
    ]


def _older_own(cache: ProjectCache, ours: set[str | None], seen: set[str]) -> Checkpoint | None:
    """This conversation's newest checkpoint among those older than the CHECKPOINTS newest (`seen`): the pack's
    headers list them, and their cached copies are read newest first, until one of `ours` saved it. Only after a
    compaction that found none of its own among the newest: as many reads as checkpoints were saved since."""

    def checkpoints(headers: Iterator[bytes]) -> list[tuple[str, str, str]]:
        found = (pack.fields(header) for header in headers)
        return [
            (f.get("created", ""), f["id"], f.get("title", ""))
            for f in found
            if f.get("kind") == "checkpoint" and not f.get("problem") and f["id"] not in seen and not is_setup(f)
        ]

    try:
        listed = cache.search_pack(b"", checkpoints)
        older = sorted(listed, reverse=True)
    except OSError:  # a damaged pack that a read-only cache cannot rebuild: the newest were all there was to see
        return None
    for created, note_id, title in older:
        hit: Checkpoint = {"id": note_id, "title": safe(title), "created": safe(created), "pending": False}
        if _session_of(cache, hit, {}) in ours:
            return hit
    return None


def _session_of(cache: ProjectCache, hit: Checkpoint, pending_texts: dict[str, bytes]) -> str | None:
    """The `session` a checkpoint was saved in, from its pending text or its checked cached copy, without parsing
    it (no YAML on a session start): the frontmatter line `session: ID` that saving writes."""
    note_id = str(hit["id"])
    data = pending_texts.get(note_id) if hit["pending"] else cache.verified([note_id]).get(note_id)
    if data is None:
        return None
    head = data[: data.find(b"\n---", 3) + 1] if data.startswith(b"---") else b""
    found = _SESSION.search(head)
    return found.group(1).decode() if found else None


_SESSION = re.compile(rb"^session: ['\"]?([A-Za-z0-9][A-Za-z0-9._:-]{0,127})['\"]?$", re.MULTILINE)


def _this_machine() -> str | None:
    """The machine name this machine's notes carry (`origin.machine_name`), None if it has none."""
    try:
        return machine_name()
    except AgentMemoryError:  # an AGENT_MEMORY_MACHINE that no note could carry: no note has it either
        return None
