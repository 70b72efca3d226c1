"""`agent-memory hook session-start --agent codex|claude`: the SessionStart hook, a short reminder put into the
model's context (see `hooks.reminder`)."""

from __future__ import annotations

import argparse
import json

from ..config.context import Context
from ..display import safe
from ..errors import OK, AgentMemoryError
from ..hooks.reminder import session_start
from ..report import usage
from ..setup.command import helper_command
from ..sync.settings import enabled
from .parsing import Rendered, hook_options
from .render import read_event

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SessionStart


def declare(parser: argparse.ArgumentParser) -> None:
    hook_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.hook = True  # a store in an outage is never waited on here (see store.probe)
    event = read_event()
    synced = _pull(ctx, event, args.agent)  # first: the reminder then says what changed
    context = session_start(ctx, event, args.agent)
    usage.session_started(_project(ctx), args.agent, event)
    if synced:
        context = "\n".join([context or "", *fit(synced)]).strip()
    result: SessionStart = {"event": "session-start", "agent": args.agent, "context": context or ""}
    if context is None:  # nothing at all: the resumed session still has its first reminder
        return result, "", OK
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}
    return result, json.dumps(output, ensure_ascii=False), OK


def _project(ctx: Context) -> str | None:
    """The project of the session's folder (the reminder made the event's `cwd` the command's), None if none."""
    try:
        return ctx.project
    except AgentMemoryError:  # not set up, not mapped: no project's use to count
        return None


def _pull(ctx: Context, event: dict[str, object], agent: str) -> list[str]:
    """Sync's pull, when this agent's memory is synced: `hooks.memory_sync` (and `hooks.budgets`), loaded
    only then (they bring the stores and the outbox, which a session start without sync must not load)."""
    try:
        if agent not in enabled(ctx.config):
            return []
    except AgentMemoryError:  # a configuration that cannot be used: the reminder says so
        return []
    from ..hooks import memory_sync, quiet
    from ..hooks.budgets import budget_seconds

    lines = memory_sync.pull(ctx, event, agent, helper_command(), budget_seconds("session-start"))
    quiet.after_pull(ctx, agent, event)  # the session's first Stop, if nothing changes by then, is answered by `idle`
    return lines


MAX_SYNC = 2400  # bytes of sync's lines in the reminder: with it, far below both runtimes' caps


def fit(lines: list[str]) -> list[str]:
    """Sync's lines, display-safe (they carry memory text from the bucket), the last dropped until they fit."""
    lines = [safe(line) for line in lines]
    while lines and len("\n".join(lines).encode()) > MAX_SYNC:
        lines = lines[:-1]
    return lines
