"""Where the helper keeps its state, resolved when used (never at import) so that tests only set variables.

Precedence: `AGENT_MEMORY_HOME` (config, cache and state all below it), else the platform's conventional
folders: XDG on Linux and other Unixes, `~/Library` on macOS, `%APPDATA%`/`%LOCALAPPDATA%` on Windows.
"""

from __future__ import annotations

import os
import re
import sys
from binascii import crc32
from pathlib import Path

from .names import folder_path, hub_id

APP = "agent-memory"


def _home_override() -> Path | None:
    value = os.environ.get("AGENT_MEMORY_HOME")
    return Path(value).expanduser().absolute() if value else None


def _xdg(variable: str, default: str) -> Path:
    value = os.environ.get(variable)
    base = Path(value) if value and Path(value).is_absolute() else Path.home() / default
    return base / APP


def config_dir() -> Path:
    """Folder of `config.json`."""
    if home := _home_override():
        return home / "config"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    if os.name == "nt":
        return Path(os.environ.get("APPDATA", Path.home())) / APP
    return _xdg("XDG_CONFIG_HOME", ".config")


def cache_dir() -> Path:
    """Root of the per-bucket caches (safe to delete: it is rebuilt from the bucket)."""
    if home := _home_override():
        return home / "cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / APP / "cache"
    return _xdg("XDG_CACHE_HOME", ".cache")


def state_dir() -> Path:
    """Durable local state that must survive: pending uploads, the machine id, backups."""
    if home := _home_override():
        return home / "state"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP / "state"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / APP / "state"
    return _xdg("XDG_STATE_HOME", ".local/state")


def roots() -> tuple[Path, Path, Path]:
    """The config, cache and state roots: everything below them is the helper's own, and private."""
    return config_dir(), cache_dir(), state_dir()


def config_file() -> Path:
    """The machine's configuration: bucket, project mappings, installed core skill."""
    return config_dir() / "config.json"


def bucket_cache(uri: str) -> Path:
    """The cache folder of one bucket: `<cache>/<bucket key>`."""
    return cache_dir() / bucket_key(uri)


def bucket_key(uri: str) -> str:
    """A folder name that identifies a bucket (hub names cannot contain `--`, so this is unambiguous)."""
    if (ident := hub_id(uri)) is not None:
        return "hf--" + ident.replace("/", "--")
    folder = str(folder_path(uri))
    # readable (the last two folder names) and distinct (a checksum of the whole path)
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(folder.strip("/").split("/")[-2:]))[:60]
    return f"file--{slug}--{crc32(folder.encode()):08x}"
