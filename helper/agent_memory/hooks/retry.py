"""What the Stop hook (every turn) and Claude Code's SessionEnd hook do: retry pending uploads within a time budget,
then stop and leave the rest pending. After a retry that left uploads pending they wait (`outbox/backoff.py`), so a
hanging Hub costs one budget per wait, not one per turn."""

from __future__ import annotations

import contextlib

from .. import commands
from ..config.context import Context
from ..display import plural
from ..outbox import backoff
from ..outbox.delivery import retry as retry_uploads
from ..outbox.listing import summary
from ..uploads import KINDS
from .budgets import budget_seconds

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Waited


def retry(ctx: Context, event: str) -> Waited:
    """Retry pending notes and skill publications within the event's budget, unless an earlier retry failed
    recently (`backoff`): `{"results", "damaged", "waiting"}`, `waiting` the seconds left of that wait."""
    counts = summary()
    if not any(count for name, count in counts.items() if name != "damaged"):
        return {"results": [], "damaged": [], "waiting": 0}  # nothing to do: no network library is loaded
    if left := backoff.waiting():
        return {"results": [], "damaged": [], "waiting": round(left)}  # this turn costs nothing
    ctx.budget.reset(budget_seconds(event))
    result = retry_uploads(KINDS, ctx, by_user=False)
    if any(item.get("status") == "pending" for item in result["results"]):
        with contextlib.suppress(OSError):  # a state folder it cannot write (a sandbox): the next turn tries again
            backoff.failed()
    return {"results": result["results"], "damaged": result["damaged"], "waiting": 0}


def user_message(result: Waited) -> str | None:
    """What the user is told after a turn: what was retried, or what still waits and when it is tried again; None
    when there was nothing to retry (nothing pending, or only damaged uploads, which `status` and the reminder name)."""
    if result["results"] or result["damaged"]:
        return f"agent-memory: {summary_line(result)}"
    if result["waiting"]:
        total = sum(count for name, count in summary().items() if name != "damaged")
        minutes = max(1, round(result["waiting"] / 60))
        return (
            f"agent-memory: {plural(total, 'upload')} not shared yet; the next retry is in about "
            f"{plural(minutes, 'minute')} (to retry now: {commands.line('pending', 'retry')})"
        )
    return None


def summary_line(result: Waited) -> str:
    """What a retry did, in one line."""
    statuses = [item.get("status") for item in result["results"]]
    shared = len(statuses) - statuses.count("pending")
    tried, waiting = plural(len(statuses), "pending upload"), statuses.count("pending")
    text = f"retried {tried}: {shared} shared, {waiting} still pending"
    if result["damaged"]:
        text += f", {len(result['damaged'])} damaged"
    return text + ("" if shared == len(statuses) and not result["damaged"] else f" (see: {commands.line('pending')})")
