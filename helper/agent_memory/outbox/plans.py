"""The outbox on disk: one folder per upload, written completely before any network call.

The folder and the plans as they are read (`writing` changes them).
`<state>/outbox/<kind>-<key>/` holds `plan.json` (destination bucket, the objects in upload order with their
size and sha256, attempts, last error, and what `status` and `search` show) and `objects/<n>`, the exact bytes
of object n. A plan appears by renaming a finished temporary folder into place, so it is complete or absent.

Nothing here hides damage: a plan whose file does not parse, or whose bytes no longer match their checksum, is
listed as damaged with its folder and whatever could be read, and its bytes stay where they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import commands, names, paths
from ..contents import sha256
from ..errors import UsageError
from ..fsutil import UnsafeLocalFile, read_own

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Damage
    from .shape import Plan, PlannedObject

FORMAT = 1
PLAN_FILE = "plan.json"
PLAN_MAX = 1 << 20  # bytes of a plan read at most: a thousand objects' paths and checksums
OBJECT_MAX = 8 << 20  # bytes of one object read at most: more than a note (1 MiB) or a skill's file (5 MiB)


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
            f"Invalid id {key!r}: a note id or skill revision.", next_step=f"{commands.line('pending')} (lists them)"
        )
    return f"{kind}-{key}"


def split(op: str) -> tuple[str, str]:
    """`(kind, key)` of an operation's folder name."""
    kind, _, key = op.partition("-")
    return kind, key


def folder(op: str) -> Path:
    """Where an operation's plan lives (it may not exist)."""
    return root() / op


def load(op: str) -> Plan | None:
    """The plan of `op`, None if there is none; Damaged if its file cannot be used."""
    try:
        raw = read_own(folder(op) / PLAN_FILE, PLAN_MAX)
    except FileNotFoundError:
        if folder(op).is_dir():
            raise Damaged(f"{folder(op) / PLAN_FILE} is missing") from None
        return None
    except UnsafeLocalFile as exc:  # a FIFO, a link, a huge file: never waited on, never read whole
        raise Damaged(f"{exc.path} {exc.why}") from None
    except OSError as exc:
        raise Damaged(f"{folder(op) / PLAN_FILE} cannot be read ({exc.strerror or exc})") from None
    try:
        plan: object = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise Damaged(f"{folder(op) / PLAN_FILE} is not valid JSON ({exc})") from exc
    problem = _shape_problem(plan, op)
    if problem:
        raise Damaged(f"{folder(op) / PLAN_FILE}: {problem}")
    return plan  # type: ignore[return-value]  # _shape_problem has just held the keys that delivery reads


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
    # what a retry updates and `pending` shows: a plan edited by hand must be told as damaged, never crash them
    attempts = plan.get("attempts", 0)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
        return "its count of attempts is not a whole number"
    if not isinstance(plan.get("last_error"), (dict, type(None))) or not isinstance(
        plan.get("display"), (dict, type(None))
    ):
        return "its last error or its display is not an object"
    return None


def contents(op: str, plan: Plan) -> list[tuple[str, bytes]]:
    """The exact `(path, bytes)` of every object, in upload order; Damaged if any is missing or changed."""
    found = []
    for index, item in enumerate(plan["objects"]):
        file = folder(op) / "objects" / str(index)
        try:
            data = read_own(file, object_bound(item))
        except FileNotFoundError:
            raise Damaged(f"{file} ({item['path']}) is missing") from None
        except UnsafeLocalFile as exc:
            raise Damaged(f"{file} ({item['path']}) {exc.why}") from None
        except OSError as exc:
            raise Damaged(f"{file} ({item['path']}) cannot be read ({exc.strerror or exc})") from None
        if len(data) != item.get("size") or sha256(data) != item["sha256"]:
            raise Damaged(f"{file} ({item['path']}) no longer matches its checksum")
        found.append((item["path"], data))
    return found


def object_bound(item: PlannedObject) -> int:
    """How many bytes of one planned object are read at most: its recorded size (more is damage), within
    OBJECT_MAX."""
    size = item.get("size")
    return size if type(size) is int and 0 <= size <= OBJECT_MAX else OBJECT_MAX


def done_plan(op: str) -> Plan | None:
    """The plan of `op` as it was when the bucket confirmed it (kept for a week), or None."""
    try:
        value: object = json.loads(read_own(done_file(op), PLAN_MAX))
        if _shape_problem(value, op) is None:
            return value  # type: ignore[return-value]  # _shape_problem has just held the keys that delivery reads
        return None
    except (OSError, ValueError):
        return None


def find(key: str, kinds: set[str] | None = None) -> str | None:
    """The operation of a note id or skill revision in the outbox (of `kinds`, if given), or None; UsageError for a
    key that is not an id."""
    if not names.is_id(key):
        raise UsageError(
            f"Invalid id {key!r}: a note id or skill revision.", next_step=f"{commands.line('pending')} (lists them)"
        )
    for op in operations():
        kind, found_key = split(op)
        if found_key == key and (kinds is None or kind in kinds):
            return op
    return None


def damage(op: str, problem: Exception) -> Damage:
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
    found = [entry.name for entry in entries if not entry.name.startswith(".") and entry.name != "done"]
    return sorted(found, key=lambda op: (split(op)[1], op))


def done_file(op: str) -> Path:
    """Where the plan of a confirmed upload is kept for a week."""
    return root() / "done" / f"{op}.json"
