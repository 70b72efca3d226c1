"""What a change to one of the agents' files gives back: for the type checker only (no command loads this module,
nor `typing` with it)."""

from __future__ import annotations

from typing import TypedDict


class FileEdit(TypedDict):
    """Whether a file was changed, and the backup of what it held before (None: there was no file, or no change)."""

    changed: bool
    backup: str | None


class OriginEvent(TypedDict):
    """The newest claim or withdrawal of an origin by one project, as its object in the bucket is named."""

    action: str
    stamp: str
    path: str
    size: int


class HookSettings(TypedDict, total=False):
    """A runtime's hook file as `hook_config_read.parse` holds it: an object whose `hooks` maps each event to a list
    of groups (objects; a group's `hooks`, if any, a list). Its other keys are the user's, kept as they are."""

    hooks: dict[str, list[dict[str, object]]]


class HookHandler(TypedDict):
    """The one handler install writes for an event."""

    type: str
    command: str
    timeout: int
