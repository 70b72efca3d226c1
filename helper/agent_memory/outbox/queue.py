"""The outbox: every upload (a note, a skill publication) is planned on disk before any network call, and the
plan is removed only once the bucket has confirmed the upload.

Persist, claim, act, confirm: a retry sends the same bytes to the same place whatever the configuration says by
then; two workers never upload one plan at once, and the second reports the first one's success; a damaged
plan is listed, never skipped, and its bytes are kept. No credential is ever written here.

The outbox knows plans, not notes or skills: each kind of upload is described by its own domain (`Kind`), and
what the outbox returns is a neutral `Outcome` that the kind turns into its command's result.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..context import Context
from ..errors import AgentMemoryError, UsageError
from ..names import is_id
from . import backoff, claims, plans
from .delivery import deliver as _attempt
from .delivery import peek
from .kinds import RETRY, Kind, Outcome, not_waiting, progress
from .plans import Damaged

__all__ = [
    "RETRY",
    "Damaged",
    "Kind",
    "Outcome",
    "add",
    "damaged_error",
    "deliver",
    "discard",
    "entries",
    "export",
    "progress",
    "retry",
    "summary",
    "waiting",
]

_MIN_SECONDS = 0.5  # less than this left of a budget is not enough to start an upload


def add(kind: Kind, key: str, bucket: str, objects: list[tuple[str, bytes]], display: dict[str, object]) -> str:
    """Persist the plan of a new upload (objects in upload order, the one that makes it visible last)."""
    return plans.create(kind.name, key, bucket, objects, display)


def _deliver(kind: Kind, op: str, ctx: Context, *, check_first: bool = True) -> Outcome | None:
    """Deliver one plan; a confirmed upload ends the hooks' wait (`backoff`): the bucket answers again."""
    outcome = _attempt(kind, op, ctx, check_first=check_first)
    if outcome is not None and outcome.done:
        backoff.reset()
    return outcome


def deliver(kind: Kind, key: str, ctx: Context, *, check_first: bool = True) -> dict[str, object] | None:
    """Upload one planned upload now: its kind's result, or None if the outbox does not hold it.

    Raises Damaged if its plan cannot be executed as written.
    """
    outcome = _deliver(kind, plans.op_name(kind.name, key), ctx, check_first=check_first)
    return kind.result(outcome) if outcome is not None else None


def retry(kinds: Sequence[Kind], ctx: Context, key: str | None = None, *, by_user: bool = True) -> dict[str, object]:
    """Retry the uploads of `kinds`, within the command's one budget; asked `by_user`, it also ends the hooks'
    wait (`backoff`), whatever comes of it, so that the next turn tries again too.

    With `key`, that one upload: its result (an error saying how to list them if it is not there, unless the
    bucket has it already, which is then reported as done). Without, every one: `{"results", "damaged"}`, what
    the budget does not reach staying pending, reported as such.
    """
    if by_user:
        backoff.reset()
    if key is not None:
        return _retry_one(kinds, ctx, key)
    results, damaged = [], []
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
                outcome = _deliver(kind, op, ctx)
        except Damaged as exc:
            damaged.append(_damaged(op, exc))
            continue
        except AgentMemoryError as exc:  # its store refused to open (a folder store opened to others): the rest go on
            plan = peek(op)
            outcome = Outcome(plan, done=False, reason="auth", detail=f"{exc.message} Next: {exc.next_step}")
            outcome = outcome if plan else None
        if outcome is not None:
            results.append(kind.result(outcome))
    return {"results": results, "damaged": damaged}


def _retry_one(kinds: Sequence[Kind], ctx: Context, key: str) -> dict[str, object]:
    op = _lookup(key, kinds)
    if op is not None:
        kind = next(kind for kind in kinds if kind.name == plans.split(op)[0])
        try:
            outcome = _deliver(kind, op, ctx)
        except Damaged as exc:
            raise damaged_error(key, str(exc)) from exc
        if outcome is not None:
            return kind.result(outcome)
    for kind in kinds:
        if (shared := kind.shared_already(key, ctx)) is not None:
            return shared
    raise kinds[0].not_waiting(key) if len(kinds) == 1 else not_waiting(key)


def entries(kinds: Sequence[Kind]) -> dict[str, list[dict[str, object]]]:
    """Everything in the outbox, for `status` and `pending`: a list per kind's group, and `damaged`."""
    by_name = {kind.name: kind for kind in kinds}
    found: dict[str, list[dict[str, object]]] = {kind.group: [] for kind in kinds}
    found["damaged"] = []
    for op in plans.operations():
        kind = by_name.get(plans.split(op)[0])
        try:
            plan = plans.load(op)
            if plan is None:
                continue  # finished while we listed
            plans.contents(op, plan)
        except Damaged as exc:
            found["damaged"].append(_damaged(op, exc))
            continue
        if kind is not None:
            found[kind.group].append(kind.entry(plan))
    return found


def summary() -> dict[str, int]:
    """How many uploads wait, by kind, and how many are damaged, without network or checksums (for reminders)."""
    counts = {"damaged": 0}
    for op in plans.operations():
        name, _key = plans.split(op)
        try:
            plan = plans.load(op)
        except Damaged:
            counts["damaged"] += 1
            continue
        if plan is not None:
            counts[name] = counts.get(name, 0) + 1
    return counts


def waiting(kind: Kind, key: str | None = None) -> list[tuple[dict[str, object], list[tuple[str, bytes]]]]:
    """The plans and exact objects of the uploads of `kind` (only `key`'s, if given) that wait; a damaged one is
    left out here (`entries` and `retry` report it), never shown as if it were intact."""
    ops = [plans.op_name(kind.name, key)] if key is not None else plans.operations()
    found = []
    for op in ops:
        if plans.split(op)[0] != kind.name:
            continue
        try:
            plan = plans.load(op)
            if plan is not None:
                found.append((plan, plans.contents(op, plan)))
        except Damaged:
            if key is not None:
                raise
    return found


def _damaged(op: str, problem: Exception) -> dict[str, object]:
    kind, key = plans.split(op)
    return {"kind": kind, "id": key, "file": str(plans.folder(op)), "problem": str(problem)}


def _lookup(key: str, kinds: Sequence[Kind] | None = None) -> str | None:
    """The operation of a note id or skill revision in the outbox (of `kinds`, if given), or None."""
    if not is_id(key):
        raise UsageError(
            f"Invalid id {key!r}: a note id or skill revision.", next_step="agent-memory pending (lists them)"
        )
    names = None if kinds is None else {kind.name for kind in kinds}
    for op in plans.operations():
        name, found_key = plans.split(op)
        if found_key == key and (names is None or name in names):
            return op
    return None


def _find(key: str) -> str:
    """The operation of `key` in the outbox, else an error saying how to list what waits."""
    op = _lookup(key)
    if op is None:
        raise AgentMemoryError(
            f"Nothing with the id {key!r} is waiting in the outbox.",
            next_step="agent-memory pending (lists what waits)",
        )
    return op


def export(key: str, destination: str) -> list[str]:
    """Write the exact bytes of a pending upload, never over an existing file; the paths written.

    An upload of one object (a note) goes to the file `destination`; one of several (a skill publication) into the
    folder `destination`, each object at its bucket path. A damaged plan still gives every object file that
    exists, named by its number.
    """
    op = _find(key)
    objects = plans.folder(op) / "objects"
    try:
        plan = plans.load(op)
    except Damaged:
        plan = None
    if plan is not None:
        items = [(item["path"], objects / str(index)) for index, item in enumerate(plan["objects"])]
    else:
        items = [(f"object-{name}", objects / name) for name in sorted(os.listdir(objects))] if objects.is_dir() else []
    if not items:
        raise AgentMemoryError(
            f"The outbox entry {plans.folder(op)} holds no readable bytes.",
            next_step=f"look inside {plans.folder(op)} yourself, then agent-memory pending discard {key}",
        )
    target = Path(destination).expanduser()
    if plan is not None and len(items) == 1:
        return [_write_new(target, items[0][1].read_bytes())]
    written = []
    for path, file in items:
        if path.startswith("/") or ".." in path.split("/"):
            raise AgentMemoryError(
                f"The plan in {plans.folder(op)} names an unsafe path {path!r}; nothing more written.",
                next_step=f"look inside {plans.folder(op)} yourself, then agent-memory pending discard {key}",
            )
        written.append(_write_new(target / path, file.read_bytes()))
    return written


def _write_new(path: Path, data: bytes) -> str:
    """Write a file that must not exist yet: an export never overwrites anything."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(path, "xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise UsageError(
            f"{path} already exists; an export never overwrites a file.", next_step="choose a new path with --to"
        ) from None
    return str(path)


def discard(key: str, ctx: Context) -> dict[str, object]:
    """Take an upload out of the outbox on purpose; its plan and bytes move to a folder that is returned."""
    op = _find(key)
    with claims.claimed(op, ctx.budget.remaining()) as ours:
        if not ours:
            raise AgentMemoryError(
                f"{key} is being uploaded by another agent-memory process right now; nothing was discarded.",
                next_step="agent-memory pending (check again in a moment)",
            )
        if not plans.folder(op).is_dir():
            raise AgentMemoryError(
                f"{key} left the outbox meanwhile (it was uploaded or discarded).", next_step="agent-memory pending"
            )
        kept = plans.move_aside(plans.folder(op), op)
    return {"id": key, "kind": plans.split(op)[0], "kept": str(kept)}


def damaged_error(key: str, problem: str) -> AgentMemoryError:
    """The error for an outbox entry that cannot be uploaded as written."""
    return AgentMemoryError(
        f"The pending upload {key} is damaged, so it was not uploaded: {problem}. Its bytes are kept.",
        next_step=f"agent-memory pending export {key} --to PATH (then save or publish it again), "
        f"or agent-memory pending discard {key}",
    )
