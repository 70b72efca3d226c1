"""`agent-memory hook stop|session-end --agent codex|claude`: after each turn (and at Claude Code's session end),
retry pending uploads within a few seconds (see `hooks.retry`).

Stop runs at every turn and usually finds nothing to do: it then looks at the outbox's folder and leaves, printing
nothing. When something was retried or is still pending, it tells the user where both runtimes show a hook's
messages: `{"systemMessage": ...}` on stdout, the one output a Stop hook may print besides a decision (Codex fails a
Stop hook whose stdout is other text, X5; the message is shown to the user, never to the model).
"""

from __future__ import annotations

import argparse
import json

from ..config.context import Context
from ..errors import OK, AgentMemoryError
from ..outbox import plans
from ..sync.settings import enabled
from .parsing import Rendered, hook_options
from .render import hook_line, read_event

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Stop


def declare(parser: argparse.ArgumentParser) -> None:
    hook_options(parser)


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.hook = True  # a store in an outage is never waited on here (see store.probe)
    event = args.command.partition(" ")[2]
    payload = read_event()
    if synced := _push(ctx, payload, args.agent, event):
        hook_line(synced)
    if not plans.operations():  # nothing waits: the usual turn
        quiet: Stop = {"event": event, "agent": args.agent, "results": [], "damaged": [], "waiting": 0}
        return quiet, "", OK
    # loaded only when something waits: delivering an upload brings the outbox's delivery, the stores and the note
    # cache, which the Stop hook, run at every turn, must not load when it has nothing to do
    from ..hooks import retry

    done = retry.retry(ctx, event)
    message = retry.user_message(done)
    stop: Stop = {"event": event, "agent": args.agent, **done}
    return stop, _system_message(message) if message else "", OK


def _system_message(text: str) -> str:
    return json.dumps({"systemMessage": text}, ensure_ascii=False)


def _push(ctx: Context, payload: dict[str, object], agent: str, event: str) -> str | None:
    """Sync's push, when this agent's memory is synced: `hooks.memory_push` (and `hooks.budgets`), loaded only then;
    with nothing changed here it costs one stat per file and no network."""
    try:
        if agent not in enabled(ctx.config):
            return None
    except AgentMemoryError:
        return None
    from ..hooks import memory_push
    from ..hooks.budgets import budget_seconds

    return memory_push.push(ctx, payload, agent, budget_seconds(event))
