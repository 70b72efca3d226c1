"""The SessionStart reminder: a few lines put into the model's context at session start, in the one form both runtimes
take (Codex fails a SessionStart hook whose JSON lacks `hookEventName`, X4).

The project with how many notes this machine's cache holds (bootstrap's verification notes aside) and how recent the
newest is, when to search ("if this task continues earlier work ..."), and the uploads still pending (which the Stop
hook retries on its own; the command is offered only where the model can run it). After a compaction it also names
this session's newest checkpoint, or else the project's newest as another session's (`checkpoint`: its id, its
title cut short, its checked date, whose it is, and the `read` command), never anything else of a note. A
configuration that cannot be used is said, with the command that repairs it; a folder with no project is told so
once a day. Every line is made display-safe (`display.safe`): one item per line, no control characters. No network,
no model, no transcript. A resumed session that already got it gets nothing, or one line when what is pending
changed since (`reminded`).
"""

from __future__ import annotations

import os
import re
import time

from .. import clock
from ..agents import claude, codex
from ..config.context import Context
from ..display import plural, safe
from ..errors import AgentMemoryError, NotSetUp
from ..memory.cache import ProjectCache
from ..memory.notes import FUTURE_SLACK
from ..outbox.listing import summary
from ..setup.command import helper_command
from . import reminded

MAX_CONTEXT = 2000  # bytes: far below both runtimes' caps (Codex spills at 2,500 tokens)
FORK = "fork"  # the `source` of Claude Code's SessionStart in a session forked from another (`--fork-session`)
SETUP_PREFIX = "setup-"  # bootstrap's verification notes (`bootstrap.verification_id`): setup, not memory


def session_start(ctx: Context, payload: dict[str, object], agent: str) -> str | None:
    """The reminder for this session; for a resumed one that already has it (both runtimes keep it, see
    `reminded`), None, or one line when the uploads pending here changed since it was told."""
    if _runtime_s_own(payload):
        return None  # the runtime's own background work (Codex's memory consolidation): not the user's project
    session = reminded.session_id(payload)
    helper = helper_command()
    was = reminded.told(session) if session and payload.get("source") == "resume" else None
    forked = session is not None and payload.get("source") == FORK
    if forked and session:
        was = _told_before_the_fork(payload, session)
        forked = was is not None
    if was is not None:
        pending_now = _pending_lines(ctx, helper, agent)
        if was == reminded.UNKNOWN or was == reminded.digest(pending_now):
            if forked and session:  # its own resume later goes by its own id
                _remember(session, was)
            return None  # nothing at all: what it was told still holds
        text = _fit([_changed(pending_now)])
    else:
        lines, pending_now = _reminder(ctx, payload, agent, helper)
        text = _fit(lines)
    if session and text:
        _remember(session, reminded.digest(pending_now))
    return text or None  # nothing to tell (an unmapped folder told today): nothing at all


def _remember(session: str, told_digest: str) -> None:
    try:
        reminded.add(session, told_digest)
    except OSError:  # a state folder it cannot write: a resume then reminds once more
        pass


def _runtime_s_own(payload: dict[str, object]) -> bool:
    """Whether the session runs in a runtime's own folder (`$CODEX_HOME`, `$CLAUDE_CONFIG_DIR`): Codex consolidates
    its memories in a session of its own there (`memories_v2`), which a reminder or setup advice would only
    disturb; no project of the user's lives there."""
    directory = payload.get("cwd")
    here = os.path.realpath(directory if isinstance(directory, str) else os.getcwd())
    for home in (codex.home(), claude.config_dir()):
        root = os.path.realpath(home)
        if here == root or here.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _told_before_the_fork(payload: dict[str, object], session: str) -> str | None:
    """What the session this one was forked from was told (`reminded.told`), None if none of the candidates got
    the reminder: a fork holds a copy of that conversation, its reminder included, so it is told as a resumed
    session is. The candidates (`forks.siblings`): the sessions of the same folder, the most recently written
    first."""
    from .forks import siblings

    return reminded.first_told(siblings(payload, session))


def reminder(ctx: Context, payload: dict[str, object], agent: str = "codex") -> str:
    """The SessionStart context: most important line first, under MAX_CONTEXT bytes, no note content."""
    return _fit(_reminder(ctx, payload, agent, helper_command())[0])


def _reminder(ctx: Context, payload: dict[str, object], agent: str, helper: str) -> tuple[list[str], list[str]]:
    """The reminder's lines, and those of them that tell what is pending (what a resume compares)."""
    directory = cwd if isinstance(cwd := payload.get("cwd"), str) else os.getcwd()
    ctx.use(directory=directory)
    project: str | None = None
    try:
        if not ctx.config.get("bucket"):
            return [
                "agent-memory is not set up on this machine, so this session has no memory. "
                f"The user can set it up with: {helper} bootstrap --project NAME"
            ], []
        project = ctx.project
    except NotSetUp as exc:
        lines = []
        if _first_today(str(directory)):  # every session there would be told again: once a day is enough to know
            lines.append(
                f"agent-memory: {_redacted(exc.message)} Do not save memory from here. To use memory in this folder, "
                f"ask the user to run: {helper} {_redacted(exc.next_step).removeprefix('agent-memory ')}"
            )
    except AgentMemoryError as exc:  # a configuration that cannot be used: say so, and how to repair it
        return [_unusable(helper, exc)], []
    else:
        lines = [
            f"agent-memory: this session's memory project is {project} ({_held(ProjectCache(ctx.bucket, project))}).",
            f"If this task continues earlier work or depends on past decisions, first run: {helper} search 'KEYWORDS' "
            '(notes holding every word, in any order, any case; "quote" an exact phrase: a module, file or topic).',
        ]
    pending_lines = _pending_lines(ctx, helper, agent)
    lines += pending_lines
    if project and payload.get("source") == "compact":  # a fresh session never gets a pointer to earlier work
        lines += _checkpoint_line(helper, ctx, agent, reminded.session_id(payload), payload)
    return lines, pending_lines


def _first_today(directory: str) -> bool:
    """Whether `directory` is told today for the first time that it has no project (True when that cannot be kept)."""
    try:
        return reminded.first_today(directory)
    except OSError:  # a state folder it cannot write: told each time, as before
        return True


def _changed(pending_now: list[str]) -> str:
    """The one line for a resumed session whose reminder named other pending uploads than there are now."""
    if not pending_now:
        return (
            "agent-memory: update to this session's earlier reminder: the uploads it named as not shared yet have "
            "been shared since, and nothing is pending on this machine now."
        )
    return (
        "agent-memory: update to this session's earlier reminder (this replaces its line about pending uploads): "
        + " ".join(pending_now)
    )


def _held(cache: ProjectCache) -> str:
    """How many notes this machine's cache holds for the project, and how recent the newest is (from its id, which
    sorts by creation time: see `clock.new_id`), cheaply: one read of the cache's checksums file."""
    try:
        ids = {note_id for note_id in cache.note_ids() if not note_id.startswith(SETUP_PREFIX)}
    except OSError:  # a record that is not ours to read: nothing is counted (the next search replaces it)
        ids = set()
    if not ids:
        return "no notes in this machine's cache yet; a search also fetches what other machines saved"
    text = f"{plural(len(ids), 'note')} in this machine's cache"
    now = time.time()
    ceiling = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now + FUTURE_SLACK))  # an id from later is not believed
    newest: str | None = max(ids)
    if newest is None or newest[:15] > ceiling or clock.id_time(newest) is None:  # later, or another shape: slowly
        dated = (note_id for note_id in ids if note_id[:15] <= ceiling and clock.id_time(note_id) is not None)
        newest = max(dated, default=None)
    if newest is None or (saved := clock.id_time(newest)) is None:  # (dated: never None)
        return text
    return f"{text}, the newest saved {_ago(now - saved)} ({newest[:4]}-{newest[4:6]}-{newest[6:8]})"


def _ago(seconds: float) -> str:
    if seconds < 3600:
        return "within the last hour"
    if seconds < 2 * 86400:
        return f"{plural(int(seconds // 3600), 'hour')} ago"
    return f"{plural(int(seconds // 86400), 'day')} ago"


def _unusable(helper: str, exc: AgentMemoryError) -> str:
    """The line for a configuration that cannot be used: what is wrong, and the user's command that repairs it."""
    # the absolute command: the runtime's PATH may not have the helper
    repair = re.sub(r"(?<![\w./-])agent-memory (?=[a-z])", lambda _match: f"{helper} ", _redacted(exc.next_step))
    return (
        f"agent-memory: memory is not usable on this machine: {_redacted(exc.message)} Do not search or save memory "
        f"until it is repaired. The user can repair it: {repair}"
    )


def _redacted(text: str) -> str:
    """`text` with every credential in it replaced (`guard.redact`), the guard loaded only here: an error is told
    (a folder with no project, a configuration that cannot be used) in few sessions, and loading the guard's rules
    costs every other session start about half a millisecond."""
    from ..guard import redact

    return redact(text)


def _pending_lines(ctx: Context, helper: str, agent: str) -> list[str]:
    """What is pending on this machine: the Stop hook retries it after each turn, outside any sandbox, so the model
    is offered the command only where it can run it."""
    counts = summary()
    lines = []
    notes, skills = counts.get("note", 0), counts.get("skill", 0)
    if total := notes + skills:
        kinds = [plural(n, word) for n, word in ((notes, "note"), (skills, "skill publication")) if n]
        it = "it" if total == 1 else "them"
        line = (
            f"{plural(total, 'upload')} saved on this machine {'is' if total == 1 else 'are'} not shared yet "
            f"({', '.join(kinds)}); the Stop hook retries {it} after each turn on its own"
        )
        if _can_retry_here(ctx, agent):
            line += f"; to retry {it} now: {helper} pending retry"
        lines.append(line)
    if damaged := counts["damaged"]:
        state = "is damaged and needs" if damaged == 1 else "are damaged and need"
        lines.append(f"{plural(damaged, 'pending upload')} {state} the user: {helper} pending")
    return lines


def _can_retry_here(ctx: Context, agent: str) -> bool:
    """Whether the model's own commands can upload: not in Codex's sandbox without the user's consent (X7), where
    `pending retry` could neither write the outbox nor reach the bucket."""
    if agent != "codex":
        return True
    try:
        bucket = ctx.config.get("bucket")
    except AgentMemoryError:
        return False
    return _codex_consent_state(bucket) in ("allowed", "outdated")  # outdated: all it needs, and more


def _codex_consent_state(bucket: str | None) -> str:
    """The state of the user's consent for Codex's sandbox (`setup.sandbox_consent_read.status`), loaded only when
    something is pending: the module edits Codex's files (`agent_files_write`, `json_edits`) and reading its config.toml
    brings tomllib, none of which a session start with nothing pending needs."""
    from ..setup import sandbox_consent_read

    try:
        return sandbox_consent_read.status(bucket)["state"]
    except AgentMemoryError:  # a config.toml that cannot be read: `status` says so; here, no command is offered
        return "unreadable"


def _checkpoint_line(
    helper: str, ctx: Context, agent: str, session: str | None, payload: dict[str, object]
) -> list[str]:
    """The pointer to the newest checkpoint after a compaction (`checkpoint`), loaded only then: it searches the
    cache (`memory.search`, the pending notes) and reads the machine's name (`memory.origin`), which a session that
    starts or resumes, every session of every agent, never needs. The sessions a fork came from (`forks`) are
    this conversation's: their checkpoints are its own."""
    from . import checkpoint
    from .forks import earlier_sessions

    return checkpoint.line(helper, ctx, agent, session, earlier_sessions(payload, session))


def _fit(lines: list[str]) -> str:
    """Join the lines, dropping the least important (the last) until the text fits MAX_CONTEXT bytes."""
    lines = [safe(line) for line in lines]  # paths and messages can hold anything; one line stays one line
    while len(lines) > 1 and len("\n".join(lines).encode()) > MAX_CONTEXT:
        lines = lines[:-1]
    text = "\n".join(lines)
    return text.encode()[:MAX_CONTEXT].decode(errors="ignore")
