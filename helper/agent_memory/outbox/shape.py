"""An upload's plan on disk (`<state>/outbox/<kind>-<key>/plan.json`): for the type checker only (no command loads
this module, nor `typing` with it).

`plans.load` holds the keys that delivery needs (format, kind, id, bucket, each object's path and checksum) and
lists a plan without them as damaged; the other keys are typed as `writing.create` writes them.
"""

from __future__ import annotations

from typing import TypedDict

from ..contract import LastError


class _PlannedObjectFields(TypedDict):
    path: str
    sha256: str


class PlannedObject(_PlannedObjectFields, total=False):
    """One object of an upload, in upload order: its bytes are `objects/<n>` beside the plan."""

    size: int  # not held by `plans.load`: a size that differs from the bytes' is damage found on reading them


class Display(TypedDict, total=False):
    """What `pending` and `status` show of an upload, by kind: a note's fields (`project` .. `machine`), a skill
    revision's `name` and `files`, a sync's `agent`, `scope` and `files`."""

    project: str
    title: str
    kind: str
    created: str
    agent: str
    machine: str | None
    name: str | None
    scope: str
    files: list[str]


class _PlanFields(TypedDict):
    format: int
    kind: str
    id: str
    bucket: str
    objects: list[PlannedObject]


class Plan(_PlanFields, total=False):
    """A plan as `writing.create` writes it and `writing.record_failure` updates it."""

    display: Display
    queued: str
    attempts: int
    last_error: LastError | None
