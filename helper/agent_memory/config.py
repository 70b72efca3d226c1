"""The machine's configuration file: which bucket, which directories map to which projects."""

from __future__ import annotations

from typing import Any

from . import paths
from .errors import AgentMemoryError, NotSetUp
from .fsutil import read_json, write_json_atomic


def load() -> dict[str, Any]:
    """The configuration, `{}` when there is none yet."""
    try:
        value = read_json(paths.config_file(), {})
    except ValueError as exc:
        raise AgentMemoryError(
            f"The configuration file {paths.config_file()} is not valid JSON ({exc}).",
            next_step=f"fix or remove {paths.config_file()}, then run agent-memory config show",
        ) from exc
    if not isinstance(value, dict):
        raise AgentMemoryError(f"The configuration file {paths.config_file()} does not hold a JSON object.")
    return value


def save(config: dict[str, Any]) -> None:
    """Write the configuration atomically."""
    write_json_atomic(paths.config_file(), config)


def update(**changes: Any) -> dict[str, Any]:
    """Load, change top-level keys, save; returns the new configuration."""
    config = load()
    config.update(changes)
    save(config)
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
