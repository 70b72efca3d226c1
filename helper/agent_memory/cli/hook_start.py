"""`agent-memory hook session-start --agent codex|claude`: the SessionStart hook, a short reminder put into the
model's context (see `machine.reminder`)."""

from __future__ import annotations

import argparse
import json

from ..config.context import Context
from ..contract import SessionStart
from ..errors import OK, AgentMemoryError
from ..machine import usage
from ..machine.reminder import session_start
from .parsing import Rendered, hook_options
from .render import read_event


def declare(parser: argparse.ArgumentParser) -> None:
    hook_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    event = read_event()
    context = session_start(ctx, event, args.agent)
    usage.session_started(_project(ctx), args.agent, event)
    result = SessionStart(event="session-start", agent=args.agent, context=context or "")
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
