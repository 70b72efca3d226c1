"""The outbox on disk: one folder per upload, written completely before any network call.

`<state>/outbox/<kind>-<key>/` holds `plan.json` (destination bucket, the objects in upload order with their
size and sha256, attempts, last error, and what `status` and `search` show) and `objects/<n>`, the exact bytes
of object n. A plan appears by renaming a finished temporary folder into place, so it is complete or absent.

Nothing here hides damage: a plan whose file does not parse, or whose bytes no longer match their checksum, is
listed as damaged with its folder and whatever could be read, and its bytes stay where they are.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from .. import names, paths
from ..clock import new_id, utc_now
from ..contents import sha256
from ..errors import UsageError
from ..fsutil import make_dirs, remove_tree, write_atomic

FORMAT = 1
PLAN_FILE = "plan.json"
_STALE_SECONDS = 24 * 3600  # a temporary folder this old belongs to a process that died before finishing
_DONE_KEEP_SECONDS = 7 * 24 * 3600


class Damaged(Exception):
    """A plan that cannot be executed as written: unreadable, incomplete, or bytes that changed."""


def root() -> Path:
    """The outbox folder."""
    return paths.state_dir() / "outbox"


def op_name(kind: str, key: str) -> str:
    """The folder name of one operation: `<kind>-<key>` (`note-<id>`, `skill-<revision>`); UsageError for a key
    that is not an id."""
    if not names.is_id(key):
        raise UsageError(
            f"Invalid id {key!r}: a note id or skill revision.", next_step="agent-memory pending (lists them)"
        )
    return f"{kind}-{key}"


def split(op: str) -> tuple[str, str]:
    """`(kind, key)` of an operation's folder name."""
    kind, _, key = op.partition("-")
    return kind, key


def folder(op: str) -> Path:
    """Where an operation's plan lives (it may not exist)."""
    return root() / op


def create(kind: str, key: str, bucket: str, objects: list[tuple[str, bytes]], display: dict[str, object]) -> str:
    """Persist a new plan atomically and return its operation name; FileExistsError if it exists already."""
    op = op_name(kind, key)
    final = folder(op)
    if final.exists():
        raise FileExistsError(17, "an upload with this id is already in the outbox", str(final))
    staging = root() / f".tmp-{op}-{os.urandom(4).hex()}"
    try:
        for index, (_path, data) in enumerate(objects):
            write_atomic(staging / "objects" / str(index), data)
        plan = {
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


def load(op: str) -> dict[str, object] | None:
    """The plan of `op`, None if there is none; Damaged if its file cannot be used."""
    try:
        raw = (folder(op) / PLAN_FILE).read_bytes()
    except FileNotFoundError:
        if folder(op).is_dir():
            raise Damaged(f"{folder(op) / PLAN_FILE} is missing") from None
        return None
    try:
        plan = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise Damaged(f"{folder(op) / PLAN_FILE} is not valid JSON ({exc})") from exc
    problem = _shape_problem(plan, op)
    if problem:
        raise Damaged(f"{folder(op) / PLAN_FILE}: {problem}")
    return plan


def _shape_problem(plan: object, op: str) -> str | None:
    if not isinstance(plan, dict) or plan.get("format") != FORMAT:
        return "not a plan this version of agent-memory knows"
    kind, key = plan.get("kind"), plan.get("id")
    if not (isinstance(kind, str) and isinstance(key, str) and names.is_id(key) and op_name(kind, key) == op):
        return "its kind and id do not match its folder"
    objects = plan.get("objects")
    if not isinstance(plan.get("bucket"), str) or not isinstance(objects, list) or not objects:
        return "it has no destination"
    for item in objects:
        if not (isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("sha256"), str)):
            return "an object has no path or checksum"
    return None


def contents(op: str, plan: dict[str, object]) -> list[tuple[str, bytes]]:
    """The exact `(path, bytes)` of every object, in upload order; Damaged if any is missing or changed."""
    found = []
    for index, item in enumerate(plan["objects"]):
        file = folder(op) / "objects" / str(index)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            raise Damaged(f"{file} ({item['path']}) is missing") from None
        if len(data) != item.get("size") or sha256(data) != item["sha256"]:
            raise Damaged(f"{file} ({item['path']}) no longer matches its checksum")
        found.append((item["path"], data))
    return found


def record_failure(op: str, plan: dict[str, object], reason: str, detail: str) -> dict[str, object]:
    """Keep the plan, noting one more failed attempt and why (the caller holds its claim)."""
    plan = {**plan, "attempts": plan.get("attempts", 0) + 1}
    plan["last_error"] = {"reason": reason, "detail": detail, "at": utc_now()}
    write_atomic(folder(op) / PLAN_FILE, _dump(plan))
    return plan


def finish(op: str, plan: dict[str, object]) -> None:
    """Record that the bucket confirmed the plan, then take it away (the caller holds its claim).

    The record is written first: a worker that waited for this claim reads it and reports the work done.
    The folder is renamed away in one step, so that it never looks like a half-removed plan.
    """
    write_atomic(_done_file(op), _dump(plan))
    trash = root() / f".trash-{op}-{os.urandom(4).hex()}"
    os.rename(folder(op), trash)
    remove_tree(trash)


def done_plan(op: str) -> dict[str, object] | None:
    """The plan of `op` as it was when the bucket confirmed it (kept for a week), or None."""
    with contextlib.suppress(OSError, ValueError):
        value = json.loads(_done_file(op).read_text(encoding="utf-8"))
        return value if isinstance(value, dict) and _shape_problem(value, op) is None else None
    return None


def move_aside(source: Path, name: str) -> Path:
    """Take a plan out of the outbox, bytes and all, into `<state>/discarded/`, where it is named `name` and a
    fresh id; the caller holds its claim."""
    target = paths.state_dir() / "discarded" / f"{name}-{new_id()}"
    make_dirs(target.parent)
    os.rename(source, target)
    return target


def find(key: str, kinds: set[str] | None = None) -> str | None:
    """The operation of a note id or skill revision in the outbox (of `kinds`, if given), or None; UsageError for a
    key that is not an id."""
    if not names.is_id(key):
        raise UsageError(
            f"Invalid id {key!r}: a note id or skill revision.", next_step="agent-memory pending (lists them)"
        )
    for op in operations():
        kind, found_key = split(op)
        if found_key == key and (kinds is None or kind in kinds):
            return op
    return None


def damage(op: str, problem: Exception) -> dict[str, object]:
    """How a damaged plan is listed: `{"kind", "id", "file", "problem"}`."""
    kind, key = split(op)
    return {"kind": kind, "id": key, "file": str(folder(op)), "problem": str(problem)}


def operations() -> list[str]:
    """Every operation in the outbox, oldest id first (folders only: a stray file is not a plan)."""
    base = root()
    try:
        entries = list(os.scandir(base))
    except FileNotFoundError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith("."):
            _tidy(entry)
        elif entry.name != "done":
            found.append(entry.name)
    return sorted(found, key=lambda op: (split(op)[1], op))


def _tidy(entry: os.DirEntry) -> None:
    """Remove what dead processes left: unfinished temporary plans and the remains of finished ones."""
    if not entry.name.startswith((".tmp-", ".trash-")):
        return
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


def _done_file(op: str) -> Path:
    return root() / "done" / f"{op}.json"


def _dump(value: dict[str, object]) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
