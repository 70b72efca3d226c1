"""Delivering one operation of the outbox: claim it, read its plan, upload, confirm, and say what happened.

One path for every kind of upload. The last object of a plan is the one that makes the upload visible (a note,
or a skill's SKILL.md), so it goes last, and it alone answers "is it there already?" and "did it land although
the answer was lost?".
"""

from __future__ import annotations

from ..context import Context
from ..store import StoreError, landed_anyway
from . import claims, plans
from .kinds import Kind, Outcome


def deliver(kind: Kind, op: str, ctx: Context, *, check_first: bool = True) -> Outcome | None:
    """Upload `op` unless it is done: its outcome, or None if the outbox never had it (or it was discarded).

    Raises plans.Damaged if the plan cannot be executed as written.
    """
    with claims.claimed(op, ctx.budget.remaining()) as ours:
        if not ours:
            plan = peek(op)
            return Outcome(plan, done=False, reason="busy") if plan else None
        plan = plans.load(op)
        if plan is None:
            done = plans.done_plan(op)  # another worker confirmed it while we waited
            return Outcome(done, done=True) if done else None
        return _execute(kind, op, plan, plans.contents(op, plan), ctx, check_first)


def _execute(
    kind: Kind, op: str, plan: dict[str, object], objects: list[tuple[str, bytes]], ctx: Context, check_first: bool
) -> Outcome:
    store = ctx.store_for(plan["bucket"])  # where it was planned to go, whatever the configuration says now
    last_path, last_data = objects[-1]
    try:
        if not (check_first and store.holds(last_path, last_data)):
            if len(objects) > 1:
                store.put_many(objects[:-1])
            store.put(last_path, last_data)  # last: once it is there, the whole upload is
    except StoreError as exc:
        if not landed_anyway(store, exc, last_path, last_data):
            plan = plans.record_failure(op, plan, exc.reason, exc.detail)
            return Outcome(plan, done=False, reason=exc.reason, detail=exc.detail)
    plans.finish(op, plan)
    claims.forget(plans.prune_done())
    kind.delivered(plan, objects, ctx)
    return Outcome(plan, done=True)


def peek(op: str) -> dict[str, object] | None:
    """The plan of `op` read without claiming it (for messages only), None if absent or unreadable."""
    try:
        return plans.load(op)
    except plans.Damaged:
        return None
