"""The helper's three roots (configuration, cache, state) as plain strings, from the environment and the platform
alone, with os-level calls: `paths` builds its paths on them, and the first code of a process (`start`) uses them
before anything else is loaded.

Precedence: `AGENT_MEMORY_HOME` (config, cache and state all below it), else the platform's conventional
folders: XDG on Linux and other Unixes, `~/Library` on macOS, `%APPDATA%`/`%LOCALAPPDATA%` on Windows.
Resolved when asked (never at import), so that tests only set variables.
"""

from __future__ import annotations

import os
import sys

APP = "agent-memory"


def config_root() -> str:
    """Folder of `config.json`."""
    if home := _home_override():
        return os.path.join(home, "config")
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support", APP)
    if os.name == "nt":
        return os.path.join(os.environ.get("APPDATA", _home()), APP)
    return _xdg("XDG_CONFIG_HOME", ".config")


def cache_root() -> str:
    """Root of the per-bucket caches (safe to delete: it is rebuilt from the bucket)."""
    if home := _home_override():
        return os.path.join(home, "cache")
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Caches", APP)
    if os.name == "nt":
        return os.path.join(os.environ.get("LOCALAPPDATA", _home()), APP, "cache")
    return _xdg("XDG_CACHE_HOME", ".cache")


def state_root() -> str:
    """Durable local state that must survive: pending uploads, the machine id, backups."""
    if home := _home_override():
        return os.path.join(home, "state")
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support", APP, "state")
    if os.name == "nt":
        return os.path.join(os.environ.get("LOCALAPPDATA", _home()), APP, "state")
    return _xdg("XDG_STATE_HOME", ".local/state")


def _home() -> str:
    return os.path.expanduser("~")


def _home_override() -> str | None:
    value = os.environ.get("AGENT_MEMORY_HOME")
    if not value:
        return None
    value = os.path.expanduser(value)
    return value if os.path.isabs(value) else os.path.join(os.getcwd(), value)


def _xdg(variable: str, default: str) -> str:
    value = os.environ.get(variable)
    base = value if value and os.path.isabs(value) else os.path.join(_home(), default)
    return os.path.join(base, APP)
