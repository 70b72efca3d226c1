"""What waits in the outbox, read without claiming anything: every upload by kind (for `status` and `pending`), how
many (for reminders), and the plans and exact bytes of one kind (pending notes, for search and read)."""

from __future__ import annotations

from collections.abc import Sequence

from . import plans
from .kinds import Kind

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Damage, Pending, Waiting
    from .shape import Plan


def entries(kinds: Sequence[Kind]) -> Pending:
    """Everything in the outbox, for `status` and `pending`: a list per kind's group, and `damaged`."""
    by_name = {kind.name: kind for kind in kinds}
    found: dict[str, list[Waiting | Damage]] = {kind.group: [] for kind in kinds}
    found["damaged"] = []
    for op in plans.operations():
        kind = by_name.get(plans.split(op)[0])
        try:
            plan = plans.load(op)
            if plan is None:
                continue  # finished while we listed
            plans.contents(op, plan)
        except plans.Damaged as exc:
            found["damaged"].append(plans.damage(op, exc))
            continue
        if kind is not None:
            found[kind.group].append(kind.entry(plan))
    return found  # type: ignore[return-value]  # a list per kind's group (notes, skills, sync) and "damaged"


def summary() -> dict[str, int]:
    """How many uploads wait, by kind, and how many are damaged, without network or checksums (for reminders)."""
    counts = {"damaged": 0}
    for op in plans.operations():
        name, _key = plans.split(op)
        try:
            plan = plans.load(op)
        except plans.Damaged:
            counts["damaged"] += 1
            continue
        if plan is not None:
            counts[name] = counts.get(name, 0) + 1
    return counts


def waiting(kind: Kind, key: str | None = None) -> list[tuple[Plan, list[tuple[str, bytes]]]]:
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
        except plans.Damaged:
            if key is not None:
                raise
    return found
