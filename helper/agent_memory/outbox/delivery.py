"""Delivering one operation of the outbox: claim it, read its plan, upload, confirm, and say what happened.

One path for notes and skill publications alike. The last object of a plan is the one that makes the upload
visible (a note, or a skill's SKILL.md), so it goes last, and it alone answers "is it there already?" and "did
it land although the answer was lost?".
"""

from __future__ import annotations

import contextlib

from ..store import StoreError, landed_anyway, open_store
from . import claims, plans

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from ..budget import Budget

DONE = {"note": "saved", "skill": "published"}
RETRY = {"note": "agent-memory save --retry {id}", "skill": "agent-memory publish-skill --retry {id}"}
WHY = {
    "offline": "the bucket could not be reached (offline or timed out)",
    "auth": "authentication or access to the bucket failed",
    "error": "the upload failed",
    "busy": "another agent-memory process is uploading it right now",
    "budget": "the time budget ran out before it was tried",
}


def deliver(op: str, budget: Budget, *, check_first: bool = True) -> dict[str, Any] | None:
    """Upload `op` unless it is done; its result, or None if the outbox never had it (or it was discarded).

    Raises plans.Damaged if the plan cannot be executed as written.
    """
    with claims.claimed(op, budget.remaining()) as ours:
        if not ours:
            plan = peek(op)
            return result(plan, "pending", "", "busy") if plan else None
        plan = plans.load(op)
        if plan is None:
            return plans.done_result(op)  # another worker confirmed it while we waited
        return _execute(op, plan, plans.contents(op, plan), budget, check_first)


def _execute(
    op: str, plan: dict[str, Any], objects: list[tuple[str, bytes]], budget: Budget, check_first: bool
) -> dict[str, Any]:
    store = open_store(plan["bucket"], deadline=budget)
    last_path, last_data = objects[-1]
    try:
        if not (check_first and store.holds(last_path, last_data)):
            if len(objects) > 1:
                store.put_many(objects[:-1])
            store.put(last_path, last_data)  # last: once it is there, the whole upload is
    except StoreError as exc:
        if not landed_anyway(store, exc, last_path, last_data):
            plan = plans.record_failure(op, plan, exc.reason, exc.detail)
            return result(plan, "pending", exc.detail, exc.reason)
    done = result(plan, DONE[plan["kind"]])
    plans.finish(op, done)
    claims.forget(plans.prune_done())
    if plan["kind"] == "note":
        _keep_in_cache(plan, last_data)
    return done


def _keep_in_cache(plan: dict[str, Any], data: bytes) -> None:
    """Put a delivered note in the project's cache: it has left the outbox, and offline search must still find
    it before the next online refresh. The cache is a convenience, so a failure here fails nothing."""
    from ..memory.cache import ProjectCache

    project = (plan.get("display") or {}).get("project")
    if project:
        with contextlib.suppress(OSError):
            ProjectCache(plan["bucket"], project).add({plan["id"]: data})


def peek(op: str) -> dict[str, Any] | None:
    """The plan of `op` read without claiming it (for messages only), None if absent or unreadable."""
    try:
        return plans.load(op)
    except plans.Damaged:
        return None


def result(plan: dict[str, Any], status: str, detail: str = "", reason: str = "error") -> dict[str, Any]:
    """The command contract's result for a note (`save`) or a skill publication (`publish-skill`)."""
    kind, key = plan["kind"], plan["id"]
    if status == "pending":
        because = WHY.get(reason, WHY["error"]) + (f" ({detail})" if detail else "")
        retry = RETRY[kind].format(id=key)
        if kind == "note":
            message = (
                f"Not shared yet: {key} is kept on this machine only, because {because}. "
                f"Do not save it again; run `{retry}` once that is fixed."
            )
        else:
            message = (
                f"Not published yet: revision {key} is frozen on this machine and invisible to others, because "
                f"{because}. Run `{retry}` once that is fixed."
            )
    else:
        message = f"Saved {key} to {plan['bucket']}: it is shared." if kind == "note" else ""
    display = plan.get("display") or {}
    if kind == "note":
        return {
            "id": key,
            "project": display.get("project"),
            "bucket": plan["bucket"],
            "path": plan["objects"][-1]["path"],
            "status": status,
            "message": message,
        }
    found = {"name": display.get("name"), "revision": key, "status": status, "files": display.get("files", [])}
    return {**found, "message": message} if message else found
