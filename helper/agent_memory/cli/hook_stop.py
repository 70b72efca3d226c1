"""`agent-memory hook stop|session-end --agent codex|claude`: after each turn (and at Claude Code's session end),
retry pending uploads within a few seconds (see `machine.retry`).

Stop runs at every turn and usually finds nothing to do: it then looks at the outbox's folder and leaves. It prints
nothing on stdout (Codex fails a Stop hook whose output is not JSON, X5); after a retry, one line on stderr.
"""

from __future__ import annotations

import argparse
from types import ModuleType

from ..config.context import Context
from ..contract import Stop
from ..errors import OK, AgentMemoryError
from ..outbox import plans
from ..sync.settings import enabled
from .parsing import Rendered, hook_options
from .render import hook_line, read_event


def declare(parser: argparse.ArgumentParser) -> None:
    hook_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    event = args.command.partition(" ")[2]
    payload = read_event()
    if synced := _push(ctx, payload, args.agent, event):
        hook_line(synced)
    if not plans.operations():  # nothing waits: the usual turn
        return Stop(event=event, agent=args.agent, results=[], damaged=[], waiting=0), "", OK
    retry = _retry()
    done = retry.retry(ctx, event)
    if done["results"] or done["damaged"]:
        hook_line(retry.summary_line(done))
    return Stop(event=event, agent=args.agent, **done), "", OK


def _retry() -> ModuleType:
    """`machine.retry`, loaded only when something waits: delivering an upload brings the outbox's delivery, the
    stores and the note cache, which the Stop hook, run at every turn, must not load when it has nothing to do."""
    from ..machine import retry

    return retry


def _push(ctx: Context, payload: dict[str, object], agent: str, event: str) -> str | None:
    """Sync's push, when this agent's memory is synced: `sync.hooks` (and `machine.retry` for its budget), loaded
    only then; with nothing changed here it costs one stat per file and no network."""
    try:
        if agent not in enabled(ctx.config):
            return None
    except AgentMemoryError:
        return None
    from ..machine.retry import budget_seconds
    from ..sync import hooks

    return hooks.push(ctx, payload, agent, budget_seconds(event))
