"""Giving up on an upload is explicit: `export` writes out its exact bytes (never over a file), `discard` stops
retrying it and moves its plan and bytes aside, never deleting them."""

from __future__ import annotations

import os
from pathlib import Path

from .. import commands
from ..config.context import Context
from ..errors import AgentMemoryError, UsageError
from ..fsutil import read_own
from . import claims, plans, writing

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Discarded


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
    except plans.Damaged:
        plan = None
    if plan is not None:
        items = [(item["path"], objects / str(index)) for index, item in enumerate(plan["objects"])]
    else:
        items = [(f"object-{name}", objects / name) for name in sorted(os.listdir(objects))] if objects.is_dir() else []
    if not items:
        raise AgentMemoryError(
            f"The outbox entry {plans.folder(op)} holds no readable bytes.",
            next_step=f"look inside {plans.folder(op)} yourself, then {commands.line('pending', 'discard', key)}",
        )
    target = Path(destination).expanduser()
    if plan is not None and len(items) == 1:
        return [_write_new(target, read_own(items[0][1], plans.OBJECT_MAX))]
    written = []
    for path, file in items:
        if path.startswith("/") or ".." in path.split("/"):
            raise AgentMemoryError(
                f"The plan in {plans.folder(op)} names an unsafe path {path!r}; nothing more written.",
                next_step=f"look inside {plans.folder(op)} yourself, then {commands.line('pending', 'discard', key)}",
            )
        written.append(_write_new(target / path, read_own(file, plans.OBJECT_MAX)))
    return written


def discard(key: str, ctx: Context) -> Discarded:
    """Take an upload out of the outbox on purpose; its plan and bytes move to a folder that is returned."""
    op = _find(key)
    with claims.claimed(op, ctx.budget.remaining()) as ours:
        if not ours:
            raise AgentMemoryError(
                f"{key} is being uploaded by another agent-memory process right now; nothing was discarded.",
                next_step=f"{commands.line('pending')} (check again in a moment)",
            )
        if not plans.folder(op).is_dir():
            raise AgentMemoryError(
                f"{key} left the outbox meanwhile (it was uploaded or discarded).", next_step=commands.line("pending")
            )
        kept = writing.move_aside(plans.folder(op), op)
    return {"id": key, "kind": plans.split(op)[0], "kept": str(kept)}


def _find(key: str) -> str:
    """The operation of `key` in the outbox, else an error saying how to list what waits."""
    op = plans.find(key)
    if op is None:
        raise AgentMemoryError(
            f"Nothing with the id {key!r} is waiting in the outbox.",
            next_step=f"{commands.line('pending')} (lists what waits)",
        )
    return op


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
