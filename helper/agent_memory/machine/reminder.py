"""`agent-memory hook EVENT --agent codex|claude`: what the agent runtimes run, with the event's JSON on stdin.

- `session-start` prints a short reminder in the one form both runtimes take as model context (Codex fails a
  SessionStart hook whose JSON lacks `hookEventName`, X4): the project with how many notes this machine's cache
  holds and how recent the newest is, when to search ("if this task continues earlier work ..."), and the uploads
  still pending. After a compaction it also names the project's newest checkpoint (its id, its title cut to
  MAX_TITLE characters, its checked date, whose it is: this session's agent and machine or others, and the `read`
  command), never anything else of a note. A configuration that cannot be used is said, with the command that
  repairs it. Every line is made display-safe (`display.safe`): one item per line, no control characters. No
  network. A resumed session that already got it, in a runtime that keeps it on resume, gets nothing (`reminded`).
- `stop` (every turn) and `session-end` (Claude Code) retry pending uploads within a time budget, then stop and
  leave the rest pending. They print nothing: Codex fails a Stop hook whose output is not JSON (X5). After a
  retry that left uploads pending they wait (`outbox/backoff.py`), so a hanging Hub costs one budget per wait.

A hook never starts a model, never reads the transcript, and never blocks or fails the session: whatever goes
wrong, it exits 0 with one line on stderr. It runs at every session start and every turn, so its arguments are
parsed by hand (no argparse), and network libraries load only when something is pending.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time

from . import agents, clock, outbox, reminded, uploads
from .agents import RUNTIMES
from .budget import Budget
from .context import Context
from .display import plural, safe, shorten
from .errors import AgentMemoryError, NotSetUp
from .memory.cache import ProjectCache
from .memory.note_uploads import pending
from .memory.notes import FUTURE_SLACK
from .memory.search import search
from .outbox import backoff
from .setup.command import helper_command

EVENTS = ("session-start", "stop", "session-end")
USAGE = "usage: agent-memory hook session-start|stop|session-end --agent codex|claude [--json]"
BUDGET_VARIABLE = "AGENT_MEMORY_HOOK_BUDGET"
DEFAULT_BUDGET = 5.0  # seconds for all retries of one Stop; the hooks' own timeout is 30 s
# Claude Code ends SessionEnd hooks after about 1.5 s unless CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS says more
SESSION_END_BUDGET = 1.0
MAX_CONTEXT = 2000  # bytes: far below both runtimes' caps (Codex spills at 2,500 tokens)
MAX_TITLE = 120
MAX_PAYLOAD = 1 << 20


def main(argv: list[str]) -> int:
    """Run one hook; always returns 0 (a hook must never fail or block the session)."""
    try:
        event, agent, as_json = _parse(argv)
    except ValueError as exc:
        if str(exc) == "help":
            print(USAGE)
        else:
            _warn(f"{exc} ({USAGE})")
        return 0
    try:
        payload = _payload()
        if event == "session-start":
            context = session_start(payload, agent)
            result: dict[str, object] = {"event": event, "agent": agent, "context": context or ""}
            output = None  # nothing at all: the resumed session still has its first reminder
            if context is not None:
                output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
        else:
            result = {"event": event, "agent": agent, **retry(event)}
            output = None  # Stop output must be empty or JSON of Stop's own schema (X5): say nothing
            if result["results"] or result["damaged"]:
                _warn(_retry_summary(result))
        if as_json:
            output = result
        if output is not None:
            sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    except Exception as exc:  # the session goes on whatever happens here
        if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        _warn(f"{event} failed: {type(exc).__name__}: {exc}"[:300])
    sys.stdout.flush()
    return 0


def session_start(payload: dict[str, object], agent: str) -> str | None:
    """The reminder for this session, or None when it is a resumed one that already has it (see `reminded`)."""
    session = reminded.session_id(payload)
    keeps = agents.runtime(agent).KEEPS_SESSION_START_ON_RESUME
    if session and keeps and payload.get("source") == "resume" and reminded.seen(session):
        return None
    text = reminder(payload, agent)
    if session and keeps:
        with contextlib.suppress(OSError):  # a state folder it cannot write: a resume then reminds once more
            reminded.add(session)
    return text


def reminder(payload: dict[str, object], agent: str = "codex") -> str:
    """The SessionStart context: most important line first, under MAX_CONTEXT bytes, no note content."""
    helper = helper_command()
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    ctx = Context(directory=cwd)
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
            f"If this task continues earlier work or depends on past decisions, first run: {helper} search KEYWORDS "
            "(literal text, case-insensitive: a word or an exact phrase, such as a module, file or topic name).",
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
    counts = outbox.summary()
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
    """The machine name this machine's notes carry (`saving.machine_name`), None if it has none."""
    from .memory.saving import machine_name  # loaded only after a compaction: the guard it needs is not free

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


def retry(event: str) -> dict[str, object]:
    """Retry pending notes and skill publications within the event's budget, unless an earlier retry failed
    recently (`backoff`): `{"results", "damaged", "waiting"}`, `waiting` the seconds left of that wait."""
    counts = outbox.summary()
    if not any(count for name, count in counts.items() if name != "damaged"):
        return {"results": [], "damaged": [], "waiting": 0}  # nothing to do: no network library is loaded
    if left := backoff.waiting():
        return {"results": [], "damaged": [], "waiting": round(left)}  # this turn costs nothing
    result = outbox.retry(uploads.KINDS, Context(budget=Budget(budget_seconds(event))), by_user=False)
    if any(item.get("status") == "pending" for item in result["results"]):
        with contextlib.suppress(OSError):  # a state folder it cannot write (a sandbox): the next turn tries again
            backoff.failed()
    return {**result, "waiting": 0}


def _retry_summary(result: dict[str, object]) -> str:
    statuses = [item.get("status") for item in result["results"]]
    shared = len(statuses) - statuses.count("pending")
    tried, waiting = plural(len(statuses), "pending upload"), statuses.count("pending")
    text = f"retried {tried}: {shared} shared, {waiting} still pending"
    if result["damaged"]:
        text += f", {len(result['damaged'])} damaged"
    return text + ("" if shared == len(statuses) and not result["damaged"] else " (see: agent-memory pending)")


def budget_seconds(event: str) -> float:
    """The time budget for all retries of one hook: `AGENT_MEMORY_HOOK_BUDGET` seconds, default 5."""
    try:
        seconds = float(os.environ.get(BUDGET_VARIABLE, DEFAULT_BUDGET))
    except ValueError:
        seconds = DEFAULT_BUDGET
    seconds = seconds if seconds > 0 else DEFAULT_BUDGET
    if event == "session-end":
        try:
            allowed = float(os.environ["CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"]) / 1000 - 0.5
        except (KeyError, ValueError):
            allowed = SESSION_END_BUDGET
        seconds = min(seconds, max(allowed, SESSION_END_BUDGET))
    return seconds


def _parse(argv: list[str]) -> tuple[str, str, bool]:
    """`(event, agent, as_json)` from `EVENT --agent NAME [--json]`; ValueError on anything else."""
    if any(arg in ("-h", "--help") for arg in argv):
        raise ValueError("help")
    rest = list(argv)
    as_json = "--json" in rest
    rest = [arg for arg in rest if arg != "--json"]
    agent = None
    for index, arg in enumerate(rest):
        if arg.startswith("--agent="):
            agent = arg.partition("=")[2]
            del rest[index]
            break
        if arg == "--agent" and index + 1 < len(rest):
            agent = rest[index + 1]
            del rest[index : index + 2]
            break
    if len(rest) != 1 or rest[0] not in EVENTS:
        raise ValueError(f"unknown hook event {' '.join(rest) or '(none)'}")
    if agent not in RUNTIMES:
        raise ValueError(f"--agent must be one of {', '.join(RUNTIMES)}, not {agent}")
    return rest[0], agent, as_json


def _payload() -> dict[str, object]:
    """The event JSON on stdin; `{}` when there is none or it is not an object (the hook still does its work)."""
    if sys.stdin is None or sys.stdin.isatty():  # run by hand in a terminal: do not wait for an event
        return {}
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD)
        value = json.loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        _warn("the event on stdin is not JSON; carrying on without it")
        return {}
    return value if isinstance(value, dict) else {}


def _warn(text: str) -> None:
    print(f"agent-memory hook: {safe(text)}", file=sys.stderr)
