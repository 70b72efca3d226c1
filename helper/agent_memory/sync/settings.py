"""Which runtimes' memory this machine syncs: `"sync": {"claude": true, "codex": false}` in the configuration,
set by `sync enable|disable` (and `bootstrap --sync`)."""

from __future__ import annotations

from ..agents import RUNTIMES
from ..config.settings import editing

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..config.shape import Config


def enabled(config: Config) -> list[str]:
    """The runtimes whose memory is synced (a value that is not `true` is off)."""
    found = config.get("sync")
    return [name for name in RUNTIMES if isinstance(found, dict) and found.get(name) is True]


def switch(runtimes: tuple[str, ...], on: bool) -> dict[str, bool]:
    """Turn sync on or off for `runtimes`; returns whether each was on before."""
    with editing() as config:
        return set_in(config, runtimes, on)


def set_in(config: Config, runtimes: tuple[str, ...] | list[str], on: bool) -> dict[str, bool]:
    """Turn sync on or off for `runtimes` in a configuration being edited; whether each was on before."""
    found = config.get("sync")
    found = dict(found) if isinstance(found, dict) else {}
    before = {name: found.get(name) is True for name in runtimes}
    found.update({name: on for name in runtimes})
    config["sync"] = found
    return before


def name_folder(runtime: str, folder: str, on: bool) -> dict[str, list[str]]:
    """Name `folder` (an absolute, normalised path) for sync of `runtime`'s memory, or take the name back; the
    folders named for each runtime after it."""
    with editing() as config:
        found = config.get("sync")
        found = dict(found) if isinstance(found, dict) else {}
        listed = found.get("folders")
        listed = dict(listed) if isinstance(listed, dict) else {}
        chosen = [item for item in listed.get(runtime, []) if isinstance(item, str) and item != folder]
        listed[runtime] = sorted([*chosen, folder]) if on else chosen
        found["folders"] = listed
        config["sync"] = found
        return {name: list(items) for name, items in listed.items() if isinstance(items, list)}


def folders_named(config: Config) -> dict[str, list[str]]:
    """The folders named for sync, per runtime (`sync enable --folder`)."""
    found = config.get("sync")
    listed = found.get("folders") if isinstance(found, dict) else None
    if not isinstance(listed, dict):
        return {}
    return {
        name: [item for item in items if isinstance(item, str)]
        for name, items in listed.items()
        if name in RUNTIMES and isinstance(items, list)
    }
