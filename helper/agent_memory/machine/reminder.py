"""The SessionStart reminder: a few lines put into the model's context at session start, in the one form both runtimes
take (Codex fails a SessionStart hook whose JSON lacks `hookEventName`, X4).

The project with how many notes this machine's cache holds and how recent the newest is, when to search ("if this
task continues earlier work ..."), and the uploads still pending. After a compaction it also names the project's
newest checkpoint (its id, its title cut to MAX_TITLE characters, its checked date, whose it is: this session's agent
and machine or others, and the `read` command), never anything else of a note. A configuration that cannot be used
is said, with the command that repairs it. Every line is made display-safe (`display.safe`): one item per line, no
control characters. No network, no model, no transcript. A resumed session that already got it, in a runtime that
keeps it on resume, gets nothing (`reminded`).
"""

from __future__ import annotations

import contextlib
import os
import re
import time

from .. import agents, clock
from ..config.context import Context
from ..display import plural, safe, shorten
from ..errors import AgentMemoryError, NotSetUp
from ..memory.cache import ProjectCache
from ..memory.notes import FUTURE_SLACK
from ..memory.origin import machine_name
from ..memory.pending import pending
from ..memory.search import search
from ..outbox.listing import summary
from ..setup.command import helper_command
from . import reminded

MAX_CONTEXT = 2000  # bytes: far below both runtimes' caps (Codex spills at 2,500 tokens)
MAX_TITLE = 120


def session_start(ctx: Context, payload: dict[str, object], agent: str) -> str | None:
    """The reminder for this session, or None when it is a resumed one that already has it (see `reminded`)."""
    session = reminded.session_id(payload)
    keeps = agents.runtime(agent).KEEPS_SESSION_START_ON_RESUME
    if session and keeps and payload.get("source") == "resume" and reminded.seen(session):
        return None
    text = reminder(ctx, payload, agent)
    if session and keeps:
        with contextlib.suppress(OSError):  # a state folder it cannot write: a resume then reminds once more
            reminded.add(session)
    return text


def reminder(ctx: Context, payload: dict[str, object], agent: str = "codex") -> str:
    """The SessionStart context: most important line first, under MAX_CONTEXT bytes, no note content."""
    helper = helper_command()
    ctx.use(directory=payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd())
    project: str | None = None
    try:
        if not ctx.config.get("bucket"):
            return (
                "agent-memory is not set up on this machine, so this session has no memory. "
                f"The user can set it up with: {helper} bootstrap --project NAME"
            )
        project = ctx.project
    except NotSetUp as exc:
        lines = [
            f"agent-memory: {exc.message} Do not save memory from here. To use memory in this folder, "
            f"ask the user to run: {helper} {exc.next_step.removeprefix('agent-memory ')}"
        ]
    except AgentMemoryError as exc:  # a configuration that cannot be used: say so, and how to repair it
        return _fit([_unusable(helper, exc)])
    else:
        lines = [
            f"agent-memory: this session's memory project is {project} ({_held(ProjectCache(ctx.bucket, project))}).",
            f"If this task continues earlier work or depends on past decisions, first run: {helper} search 'KEYWORDS' "
            '(notes holding every word, in any order, any case; "quote" an exact phrase: a module, file or topic).',
        ]
    lines += _pending_lines(helper)
    if project and payload.get("source") == "compact":  # a fresh session never gets a pointer to earlier work
        lines += _checkpoint_line(helper, ctx, agent)
    return _fit(lines)


def _held(cache: ProjectCache) -> str:
    """How many notes this machine's cache holds for the project, and how recent the newest is (from its id, which
    sorts by creation time: see `clock.new_id`), cheaply: one read of the cache's checksums file."""
    try:
        ids = cache.note_ids()
    except OSError:  # a record that is not ours to read: nothing is counted (the next search replaces it)
        ids = set()
    if not ids:
        return "no notes in this machine's cache yet; a search also fetches what other machines saved"
    text = f"{plural(len(ids), 'note')} in this machine's cache"
    now = time.time()
    ceiling = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now + FUTURE_SLACK))  # an id from later is not believed
    newest: str | None = max(ids)
    if newest[:15] > ceiling or clock.id_time(newest) is None:  # from later, or of another shape: the slow way
        dated = (note_id for note_id in ids if note_id[:15] <= ceiling and clock.id_time(note_id) is not None)
        newest = max(dated, default=None)
    if newest is None:
        return text
    return f"{text}, the newest saved {_ago(now - clock.id_time(newest))} ({newest[:4]}-{newest[4:6]}-{newest[6:8]})"


def _ago(seconds: float) -> str:
    if seconds < 3600:
        return "within the last hour"
    if seconds < 2 * 86400:
        return f"{plural(int(seconds // 3600), 'hour')} ago"
    return f"{plural(int(seconds // 86400), 'day')} ago"


def _unusable(helper: str, exc: AgentMemoryError) -> str:
    """The line for a configuration that cannot be used: what is wrong, and the user's command that repairs it."""
    # the absolute command: the runtime's PATH may not have the helper
    repair = re.sub(r"(?<![\w./-])agent-memory (?=[a-z])", lambda _match: f"{helper} ", exc.next_step)
    return (
        f"agent-memory: memory is not usable on this machine: {exc.message} Do not search or save memory until it is "
        f"repaired. The user can repair it: {repair}"
    )


def _pending_lines(helper: str) -> list[str]:
    counts = summary()
    lines = []
    notes, skills = counts.get("note", 0), counts.get("skill", 0)
    if total := notes + skills:
        kinds = [plural(n, word) for n, word in ((notes, "note"), (skills, "skill publication")) if n]
        lines.append(
            f"{plural(total, 'upload')} saved on this machine {'is' if total == 1 else 'are'} not shared yet "
            f"({', '.join(kinds)}); retry {'it' if total == 1 else 'them'} with: {helper} pending retry"
        )
    if damaged := counts["damaged"]:
        state = "is damaged and needs" if damaged == 1 else "are damaged and need"
        lines.append(f"{plural(damaged, 'pending upload')} {state} the user: {helper} pending")
    return lines


def _checkpoint_line(helper: str, ctx: Context, agent: str) -> list[str]:
    """A pointer to the project's newest checkpoint in the local cache (or pending here), never its content: its
    id, title and date, and whose it is, so that a session does not pick up another one's work as its own."""
    cache = ProjectCache(ctx.bucket, ctx.project)
    found = search(cache, "", limit=1, kind="checkpoint", pending_notes=pending(ctx))
    if not found:
        return []
    newest = found[0]  # display-safe already (`search`), its date checked when it was cached (`notes.fields`)
    title = shorten(newest["title"], MAX_TITLE)
    # only whether they match this session's: a note's agent and machine are anyone's text, and stay out of it
    mine = _this_machine()
    here, same_agent = bool(mine) and newest["machine"] == mine, newest["agent"] == agent
    if here and same_agent:
        whose, then = f"saved by {agent} on this machine, as this session is", "to pick up from it"
    else:
        by = "on another machine" if same_agent else "by another agent " + ("on this machine" if here else "elsewhere")
        whose = f"saved {by}, not by this session ({agent} on this machine)"
        then = "it may be another session's work: to see whether it is this one's"
    return [
        f'The context was just compacted. This project\'s newest checkpoint is {newest["id"]} "{title}" '
        f"({newest['created']}), {whose}; {then}, read it with: {helper} read {newest['id']}"
    ]


def _this_machine() -> str | None:
    """The machine name this machine's notes carry (`origin.machine_name`), None if it has none."""
    try:
        return machine_name()
    except AgentMemoryError:  # an AGENT_MEMORY_MACHINE that no note could carry: no note has it either
        return None


def _fit(lines: list[str]) -> str:
    """Join the lines, dropping the least important (the last) until the text fits MAX_CONTEXT bytes."""
    lines = [safe(line) for line in lines]  # paths and messages can hold anything; one line stays one line
    while len(lines) > 1 and len("\n".join(lines).encode()) > MAX_CONTEXT:
        lines = lines[:-1]
    text = "\n".join(lines)
    return text.encode()[:MAX_CONTEXT].decode(errors="ignore")
