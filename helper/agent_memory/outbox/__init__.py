"""The outbox: every upload (a note, a skill publication) is planned on disk before any network call, and the
plan is removed only once the bucket has confirmed the upload.

Persist, claim, act, confirm: a retry sends the same bytes to the same place whatever the configuration says by
then; two workers never upload one plan at once, and the second reports the first one's success; a damaged
plan is listed, never skipped, and its bytes are kept. No credential is ever written here.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import AgentMemoryError, UsageError
from ..names import is_id
from . import legacy, plans
from .delivery import deliver, peek, result
from .plans import Damaged

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # deadline loads threading: what only counts or lists (the hooks' reminder) does without it
    from ..budget import Budget

__all__ = [
    "Damaged",
    "add",
    "damaged_error",
    "deliver",
    "discard",
    "entries",
    "export",
    "pending_note",
    "pending_notes",
    "result",
    "retry_all",
    "summary",
]

_MIN_SECONDS = 0.5  # less than this left of a budget is not enough to start an upload


def add(kind: str, key: str, bucket: str, objects: list[tuple[str, bytes]], display: dict[str, Any]) -> str:
    """Persist the plan of a new upload (objects in upload order, the one that makes it visible last)."""
    legacy.migrate()
    return plans.create(kind, key, bucket, objects, display)


def retry_all(budget: Budget | None = None, kind: str | None = None) -> dict[str, Any]:
    """Retry every operation (of `kind`, if given) within one time budget; `{"results": [...], "damaged": [...]}`.

    What the budget does not reach stays pending, reported as such.
    """
    from ..budget import Budget

    budget = budget or Budget()
    legacy.migrate()
    results, damaged = [], []
    for op in plans.operations():
        op_kind, key = plans.split(op)
        if kind is not None and op_kind != kind:
            continue
        try:
            if budget.remaining() < _MIN_SECONDS:
                plan = peek(op)
                found = result(plan, "pending", "", "budget") if plan else None
            else:
                found = deliver(op, budget)
        except Damaged as exc:
            damaged.append({"kind": op_kind, "id": key, "file": str(plans.folder(op)), "problem": str(exc)})
            continue
        except AgentMemoryError as exc:  # its store refused to open (a folder store opened to others): the rest go on
            plan = peek(op)
            found = result(plan, "pending", f"{exc.message} Next: {exc.next_step}", "auth") if plan else None
        if found is not None:
            results.append(found)
    damaged += [item for item in legacy.leftovers() if kind is None or item["kind"] == kind]
    return {"results": results, "damaged": damaged}


def entries() -> dict[str, list[dict[str, Any]]]:
    """Everything in the outbox, for `status` and `pending`: `{"notes", "skills", "damaged"}`."""
    legacy.migrate()
    found: dict[str, list[dict[str, Any]]] = {"notes": [], "skills": [], "damaged": list(legacy.leftovers())}
    for op in plans.operations():
        kind, key = plans.split(op)
        try:
            plan = plans.load(op)
            if plan is None:
                continue  # finished while we listed
            plans.contents(op, plan)
        except Damaged as exc:
            found["damaged"].append({"kind": kind, "id": key, "file": str(plans.folder(op)), "problem": str(exc)})
            continue
        found["notes" if kind == "note" else "skills"].append(_summary(plan))
    return found


def summary() -> dict[str, int]:
    """How many uploads wait, without network or checksums (for reminders): `{"notes", "skills", "damaged"}`."""
    counts = {"notes": 0, "skills": 0, "damaged": len(legacy.leftovers())}
    for op in plans.operations():
        kind, _key = plans.split(op)
        try:
            plan = plans.load(op)
        except Damaged:
            counts["damaged"] += 1
            continue
        if plan is not None:
            counts["notes" if kind == "note" else "skills"] += 1
    return counts


def _summary(plan: dict[str, Any]) -> dict[str, Any]:
    display = plan.get("display") or {}
    common = {
        "bucket": plan["bucket"],
        "queued": plan.get("queued"),
        "attempts": plan.get("attempts", 0),
        "last_error": plan.get("last_error"),
    }
    if plan["kind"] == "note":
        return {"id": plan["id"], "path": plan["objects"][-1]["path"], "project": display.get("project"), **common}
    return {"name": display.get("name"), "revision": plan["id"], "files": display.get("files", []), **common}


def pending_notes(bucket: str, project: str) -> list[dict[str, Any]]:
    """The notes of `project` in `bucket` waiting for upload, with their displayed fields and text."""
    found = []
    for op in plans.operations():
        if plans.split(op)[0] != "note":
            continue
        try:
            plan = plans.load(op)
            if plan is None or plan["bucket"] != bucket or (plan.get("display") or {}).get("project") != project:
                continue
            (_path, data), *_ = plans.contents(op, plan)
        except Damaged:
            continue  # listed by status and --retry-all; never shown as if it were intact
        found.append({**plan["display"], "id": plan["id"], "path": _path, "content": data.decode("utf-8")})
    return found


def pending_note(note_id: str) -> tuple[dict[str, Any], bytes] | None:
    """The plan and exact bytes of one pending note, None if it is not pending."""
    op = plans.op_name("note", note_id)
    plan = plans.load(op)
    if plan is None:
        return None
    return plan, plans.contents(op, plan)[0][1]


def _find(key: str) -> str | Path:
    """The operation of a note id or skill revision in the outbox, or the file or folder of a 0.1 entry that
    could not be carried over (damaged), else an error saying how to list them."""
    if not is_id(key):
        raise UsageError(
            f"Invalid id {key!r}: a note id or skill revision.", next_step="agent-memory pending (lists them)"
        )
    for kind in plans.KINDS:
        if plans.folder(op := f"{kind}-{key}").is_dir():
            return op
    old = legacy.leftover(key)
    if old is not None:
        return old
    raise AgentMemoryError(
        f"Nothing with the id {key!r} is waiting in the outbox.", next_step="agent-memory pending (lists what waits)"
    )


def export(key: str, destination: str) -> list[str]:
    """Write the exact bytes of a pending upload, never over an existing file; the paths written.

    A note goes to the file `destination`; a skill publication into the folder `destination`, each object at its
    bucket path. A damaged plan still gives every object file that exists, named by its number; a damaged 0.1
    entry, its file (the note's text is inside, in JSON) or its folder's files, as they are.
    """
    op = _find(key)
    if isinstance(op, Path):
        return _export_leftover(op, Path(destination).expanduser())
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
    if plans.split(op)[0] == "note" and len(items) == 1:
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


def _export_leftover(old: Path, target: Path) -> list[str]:
    if old.is_file():
        return [_write_new(target, old.read_bytes())]
    files = sorted(file for file in old.rglob("*") if file.is_file())
    return [_write_new(target / file.relative_to(old), file.read_bytes()) for file in files]


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


def discard(key: str, budget: Budget | None = None) -> dict[str, Any]:
    """Take an upload out of the outbox on purpose; its plan and bytes move to a folder that is returned."""
    from ..budget import Budget
    from . import claims

    op = _find(key)
    if isinstance(op, Path):  # a damaged 0.1 entry: nothing uploads it
        kind, kept = legacy.discard(op)
        return {"id": key, "kind": kind, "kept": str(kept)}
    with claims.claimed(op, (budget or Budget()).remaining()) as ours:
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
