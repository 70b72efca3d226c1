"""Uploads left pending by agent-memory 0.1, moved into the outbox on first use.

0.1 kept notes in `<state>/pending/<id>.json` (the bytes inline) and skill publications in
`<state>/pending-skills/<revision>/` (`manifest.json` and `files/`). Each intact entry becomes a plan with the
same id, bytes and destination, then the old one is removed. An entry that cannot be read stays where it is and
is reported as damaged, so it is never lost and never hidden.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from .. import paths
from ..errors import AgentMemoryError
from ..fsutil import locked
from . import plans

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

SKILL_FILE = "SKILL.md"


def _notes_dir() -> Path:
    return paths.state_dir() / "pending"


def _skills_dir() -> Path:
    return paths.state_dir() / "pending-skills"


def _lock() -> Path:
    return plans.root() / ".locks" / "legacy.lock"


def migrate() -> None:
    """Move every intact 0.1 entry into the outbox (cheap when there is none: two stat calls)."""
    if not _notes_dir().is_dir() and not _skills_dir().is_dir():
        return
    with locked(_lock()):
        for file in sorted(_notes_dir().glob("*.json")) if _notes_dir().is_dir() else []:
            with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                _move_note(file)
        for folder in sorted(_skills_dir().iterdir()) if _skills_dir().is_dir() else []:
            with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                _move_skill(folder)
        for old in (_notes_dir(), _skills_dir()):
            for lock in old.glob(".*.lock") if old.is_dir() else []:
                lock.unlink()  # 0.1's per-entry locks: no 0.1 process is expected to run beside this one
            with contextlib.suppress(OSError):
                old.rmdir()  # only once empty: anything left is a damaged entry


def _move_note(file: Path) -> None:
    entry = json.loads(file.read_text(encoding="utf-8"))
    data = entry["content"].encode("utf-8")
    if plans.sha256(data) != entry["sha256"]:
        raise ValueError("checksum mismatch")
    display = {key: entry.get(key) for key in ("title", "kind", "created", "agent")}
    _create("note", entry["id"], entry["bucket"], [(entry["path"], data)], {**display, "project": entry["project"]})
    file.unlink()


def _move_skill(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    prefix = f"skills/{manifest['name']}/{manifest['revision']}"
    files = {relative: (folder / "files" / relative).read_bytes() for relative in manifest["files"]}
    objects = [(f"{prefix}/{rel}", data) for rel, data in sorted(files.items()) if rel != SKILL_FILE]
    objects.append((f"{prefix}/{SKILL_FILE}", files[SKILL_FILE]))
    display = {"name": manifest["name"], "files": sorted(files)}
    _create("skill", manifest["revision"], manifest["bucket"], objects, display)
    import shutil

    shutil.rmtree(folder)


def _create(kind: str, key: str, bucket: str, objects: list[tuple[str, bytes]], display: dict[str, Any]) -> None:
    if not plans.folder(plans.op_name(kind, key)).exists():  # moved already by a run that died before cleaning up
        plans.create(kind, key, bucket, objects, display)


def leftover(key: str) -> Path | None:
    """The file or folder of the 0.1 entry `key` that could not be moved, if there is one."""
    for candidate in (_notes_dir() / f"{key}.json", _skills_dir() / key):
        if candidate.exists():
            return candidate
    return None


def discard(old: Path) -> tuple[str, Path]:
    """Move a 0.1 entry that could not be carried over into `<state>/discarded/`; its kind and new place."""
    kind = "note" if old.parent == _notes_dir() else "skill"
    with locked(_lock()):  # not while a migration reads it, nor beside another discard
        if not old.exists():
            raise AgentMemoryError(
                f"{old} was discarded meanwhile by another agent-memory process.", next_step="agent-memory pending"
            )
        return kind, plans.move_aside(old, f"{kind}-{old.name.removesuffix('.json')}-0.1")


def leftovers() -> list[dict[str, Any]]:
    """0.1 entries that could not be moved: damaged, reported with their file."""
    found = []
    if _notes_dir().is_dir():
        for file in sorted(_notes_dir().glob("*.json")):
            found.append({"kind": "note", "id": file.stem, "file": str(file), "problem": "unreadable 0.1 entry"})
    if _skills_dir().is_dir():
        for folder in sorted(p for p in _skills_dir().iterdir() if not p.name.startswith(".")):
            found.append({"kind": "skill", "id": folder.name, "file": str(folder), "problem": "unreadable 0.1 entry"})
    return found
