"""Delivering uploads: claim one, read its plan, upload, confirm, and say what happened; or every one that waits,
within the command's budget.

One path for every kind of upload. The last object of a plan is the one that makes the upload visible (a note,
or a skill's SKILL.md), so it goes last, and it alone answers "is it there already?" and "did it land although
the answer was lost?". A confirmed upload ends the hooks' wait (`backoff`): the bucket answers again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config.context import Context
from ..errors import AgentMemoryError
from ..store.base import StoreError
from ..store.bucket import landed_anyway
from . import backoff, claims, plans, writing
from .kinds import Kind, Outcome, damaged_error, not_waiting

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Damage, Delivered, Retries
    from .shape import Plan

_MIN_SECONDS = 0.5  # less than this left of a budget is not enough to start an upload


def deliver(kind: Kind, key: str, ctx: Context, *, check_first: bool = True) -> Outcome | None:
    """Upload the planned upload `key` of `kind` unless it is done: its outcome, or None if the outbox never had it
    (or it was discarded).

    Raises plans.Damaged if the plan cannot be executed as written.
    """
    op = plans.op_name(kind.name, key)
    with claims.claimed(op, ctx.budget.remaining()) as ours:
        if not ours:
            plan = peek(op)
            return Outcome(plan, done=False, reason="busy") if plan else None
        plan = plans.load(op)
        if plan is None:
            done = plans.done_plan(op)  # another worker confirmed it while we waited
            return Outcome(done, done=True) if done else None
        outcome = _execute(kind, op, plan, plans.contents(op, plan), ctx, check_first)
    if outcome.done:
        backoff.reset()
    return outcome


def retry(kinds: Sequence[Kind], ctx: Context, *, by_user: bool = True) -> Retries:
    """Retry every upload of `kinds`, within the command's one budget: `{"results", "damaged"}`, what the budget does
    not reach staying pending, reported as such. Asked `by_user`, it tries even during an outage (`store.outage`) and
    ends the hooks' wait (`backoff`), whatever comes of it, so that the next turn tries again too.
    """
    _start(ctx, by_user)
    results: list[Delivered] = []
    damaged: list[Damage] = []
    by_name = {kind.name: kind for kind in kinds}
    for op in plans.operations():
        name, found_key = plans.split(op)
        kind = by_name.get(name)
        if kind is None:
            continue
        try:
            if ctx.budget.remaining() < _MIN_SECONDS:
                plan = peek(op)
                outcome = Outcome(plan, done=False, reason="budget") if plan else None
            else:
                outcome = deliver(kind, found_key, ctx)
        except plans.Damaged as exc:
            damaged.append(plans.damage(op, exc))
            continue
        except AgentMemoryError as exc:  # its store refused to open (a folder store opened to others): the rest go on
            plan = peek(op)
            detail, fix = exc.message.rstrip("."), exc.next_step
            outcome = Outcome(plan, done=False, reason="auth", detail=detail, fix=fix) if plan else None
        if outcome is not None:
            results.append(kind.result(outcome))
    return {"results": results, "damaged": damaged}


def retry_one(kinds: Sequence[Kind], ctx: Context, key: str, *, by_user: bool = True) -> Delivered:
    """Retry the upload `key` of `kinds` as `retry` does: its result (an error saying how to list them if it is not
    there, unless the bucket has it already, which is then reported as done)."""
    _start(ctx, by_user)
    op = plans.find(key, {kind.name for kind in kinds})
    if op is not None:
        kind = next(kind for kind in kinds if kind.name == plans.split(op)[0])
        try:
            outcome = deliver(kind, key, ctx)
        except plans.Damaged as exc:
            raise damaged_error(key, str(exc)) from exc
        if outcome is not None:
            return kind.result(outcome)
    for kind in kinds:
        if (shared := kind.shared_already(key, ctx)) is not None:
            return shared
    raise kinds[0].not_waiting(key) if len(kinds) == 1 else not_waiting(key)


def _start(ctx: Context, by_user: bool) -> None:
    if by_user:
        backoff.reset()
        ctx.go_online()  # an explicit retry always tries, whatever outage was recorded
    writing.tidy()


def _execute(
    kind: Kind, op: str, plan: Plan, objects: list[tuple[str, bytes]], ctx: Context, check_first: bool
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
            plan = writing.record_failure(op, plan, exc.reason, exc.detail)
            return Outcome(plan, done=False, reason=exc.reason, detail=exc.detail, fix=exc.fix)
    writing.finish(op, plan)
    claims.forget(writing.prune_done())
    kind.delivered(plan, objects, ctx)
    return Outcome(plan, done=True)


def peek(op: str) -> Plan | None:
    """The plan of `op` read without claiming it (for messages only), None if absent or unreadable."""
    try:
        return plans.load(op)
    except plans.Damaged:
        return None
