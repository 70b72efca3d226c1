"""Every change to the outbox on disk: a new plan, written whole before any network call; a failed attempt
recorded; a confirmed plan taken away (its record kept a week); a discarded one moved aside; and what dead processes
left behind, tidied."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from .. import paths
from ..clock import new_id, utc_now
from ..contents import sha256
from ..fsutil import make_dirs, remove_tree, write_atomic
from .plans import FORMAT, PLAN_FILE, done_file, folder, op_name, root

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import Display, Plan

_STALE_SECONDS = 24 * 3600  # a temporary folder this old belongs to a process that died before finishing
_DONE_KEEP_SECONDS = 7 * 24 * 3600


def create(kind: str, key: str, bucket: str, objects: list[tuple[str, bytes]], display: Display) -> str:
    """Persist a new plan atomically and return its operation name; FileExistsError if it exists already."""
    op = op_name(kind, key)
    tidy()
    final = folder(op)
    if final.exists():
        raise FileExistsError(17, "an upload with this id is already in the outbox", str(final))
    staging = root() / f".tmp-{op}-{os.urandom(4).hex()}"
    try:
        for index, (_path, data) in enumerate(objects):
            write_atomic(staging / "objects" / str(index), data)
        plan: Plan = {
            "format": FORMAT,
            "kind": kind,
            "id": key,
            "bucket": bucket,
            "objects": [{"path": path, "size": len(data), "sha256": sha256(data)} for path, data in objects],
            "display": display,
            "queued": utc_now(),
            "attempts": 0,
            "last_error": None,
        }
        write_atomic(staging / PLAN_FILE, _dump(plan))
        os.rename(staging, final)  # the plan appears complete or not at all; fails if `final` appeared meanwhile
    except BaseException:
        remove_tree(staging)
        raise
    return op


def record_failure(op: str, plan: Plan, reason: str, detail: str) -> Plan:
    """Keep the plan, noting one more failed attempt and why (the caller holds its claim)."""
    plan = {**plan, "attempts": plan.get("attempts", 0) + 1}
    plan["last_error"] = {"reason": reason, "detail": detail, "at": utc_now()}
    write_atomic(folder(op) / PLAN_FILE, _dump(plan))
    return plan


def finish(op: str, plan: Plan) -> None:
    """Record that the bucket confirmed the plan, then take it away (the caller holds its claim).

    The record is written first: a worker that waited for this claim reads it and reports the work done.
    The folder is renamed away in one step, so that it never looks like a half-removed plan.
    """
    write_atomic(done_file(op), _dump(plan))
    trash = root() / f".trash-{op}-{os.urandom(4).hex()}"
    os.rename(folder(op), trash)
    remove_tree(trash)


def move_aside(source: Path, name: str) -> Path:
    """Take a plan out of the outbox, bytes and all, into `<state>/discarded/`, where it is named `name` and a
    fresh id; the caller holds its claim."""
    target = paths.state_dir() / "discarded" / f"{name}-{new_id()}"
    make_dirs(target.parent)
    os.rename(source, target)
    return target


def tidy() -> None:
    """Remove what dead processes left: unfinished temporary plans and the remains of finished ones."""
    try:
        entries = list(os.scandir(root()))
    except FileNotFoundError:
        return
    for entry in entries:
        if not entry.name.startswith((".tmp-", ".trash-")):
            continue
        with contextlib.suppress(OSError):
            if entry.name.startswith(".trash-") or time.time() - entry.stat().st_mtime > _STALE_SECONDS:
                remove_tree(Path(entry.path))


def prune_done(keep_seconds: float = _DONE_KEEP_SECONDS) -> list[str]:
    """Forget results older than `keep_seconds`; returns their operations (whose locks may go too)."""
    done = root() / "done"
    old = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(done):
            with contextlib.suppress(OSError):
                if time.time() - entry.stat().st_mtime > keep_seconds:
                    os.unlink(entry.path)
                    old.append(entry.name.removesuffix(".json"))
    return old


def _dump(value: Plan) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
