"""The machine's configuration file: which bucket, which directories map to which projects.

Every change goes through `editing()`: load, change and save happen under a lock (a file beside config.json),
and the save is atomic, so concurrent commands (several agents mapping projects at once) never lose an update
and a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import paths
from .errors import AgentMemoryError, NotSetUp
from .fsutil import locked, read_json, write_json_atomic

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any


def load() -> dict[str, Any]:
    """The configuration, `{}` when there is none yet."""
    try:
        value = read_json(paths.config_file(), {})
    except ValueError as exc:
        raise _unusable(f"is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise _unusable("does not hold a JSON object")
    return value


def _unusable(problem: str) -> AgentMemoryError:
    file = paths.config_file()
    return AgentMemoryError(
        f"The configuration file {file} {problem}.",
        next_step=f"fix or remove {file}, then run agent-memory config show",
    )


@contextlib.contextmanager
def editing() -> Iterator[dict[str, Any]]:
    """The configuration, to change in place; saved atomically when the block ends without an error.

    The lock is held from the load to the save: two editors never both start from the same old file.
    """
    file = paths.config_file()
    with locked(file.with_name(file.name + ".lock")):
        config = load()
        yield config
        write_json_atomic(file, config)


def update(**changes: Any) -> dict[str, Any]:
    """Change top-level keys (under the lock); returns the new configuration."""
    with editing() as config:
        config.update(changes)
    return config


def bucket(config: dict[str, Any] | None = None) -> str:
    """The configured bucket URI, or NotSetUp with the command that fixes it."""
    value = (config if config is not None else load()).get("bucket")
    if not value:
        raise NotSetUp(
            "No bucket is configured on this machine.",
            next_step="agent-memory bootstrap --project NAME (or: agent-memory config set bucket OWNER/NAME)",
        )
    return value
