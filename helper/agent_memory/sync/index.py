"""This machine's record of one memory folder: for each file, the size, time and hash it had when it was last in
step with the bucket and the version that was (so that a hook tells a change by one stat per file), the files in
conflict and where the other texts are kept, the folders not synced now and the deletions held, and what the last
syncs did.

Kept beside the scope's versions (`history`), one file per folder: `folders/<hash of the folder's path>.json`.
A record that is damaged (or not ours) is started again: every file then counts as new here, and is merged
against the bucket's versions rather than overwritten.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from ..clock import utc_now
from ..contents import sha256
from ..fsutil import read_own_or_none, write_json_atomic

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import IndexRecord

_RECORD_MAX = 16 * 1024 * 1024
MAX_ARRIVED = 20  # arrivals kept per folder: `sync status` shows a short list

# Why a folder (the memory folder itself, "", or one of its subfolders) is not synced now: what was in it is then
# neither recorded as deleted nor written over, and the user is told (`blocked`).
GONE = "it is gone"
LINK = "it is a link"
NOT_FOLDER = "it is a file, not a folder"
# Why a deletion is held until the user confirms it (`holding`).
HERE = "deleted here"
ELSEWHERE = "deleted on another machine"


class FolderIndex:
    """The record of one memory folder for one runtime and scope."""

    def __init__(self, scope_folder: Path, folder: Path) -> None:
        self.folder = folder
        self.file = self.file_of(scope_folder, folder)
        self._known = read_own_or_none(self.file, _RECORD_MAX)  # the record's bytes as last read or written
        record = _read(self._known)
        if record.get("folder") != str(folder):
            record = {}
        self.files: dict[str, dict[str, object]] = record.get("files", {})
        self.conflicts: dict[str, dict[str, object]] = record.get("conflicts", {})
        # files the secret guard keeps here, as they were when refused: unchanged, they cost the hooks nothing
        held = record.get("held")
        self.held: dict[str, dict[str, object]] = held if isinstance(held, dict) else {}
        # folders not synced now ("": the memory folder itself) and why, and deletions held until confirmed
        blocked, holding = record.get("blocked"), record.get("holding")
        self.blocked: dict[str, str] = _strings(blocked)
        self.holding: dict[str, str] = _strings(holding)
        self.pushed: int = record.get("pushed", 0)
        self.pulled: int = record.get("pulled", 0)
        self.last_sync: str | None = record.get("last_sync")
        # the last pass that pulled files: when it ended (POSIX time), which, and the runtime's index file's text
        # before it, so that a session whose hook waited for that pass is told the same
        recent = record.get("recent")
        self.recent: dict[str, object] = recent if isinstance(recent, dict) else {}
        # what reached the folder from other machines, newest last (`arrive`), and when this machine's last
        # session started (its SessionStart pull): `sync status` shows what arrived since
        arrived = record.get("arrived")
        kept = [entry for entry in arrived if isinstance(entry, dict)] if isinstance(arrived, list) else []
        self.arrived: list[dict[str, object]] = kept[-MAX_ARRIVED:]
        session = record.get("session_at")
        self.session_at: float | None = _number(session) if session is not None else None

    @staticmethod
    def file_of(scope_folder: Path, folder: Path) -> Path:
        """Where the record of `folder` is kept, in the scope's folder `scope_folder`."""
        return scope_folder / "folders" / f"{sha256(str(folder).encode('utf-8', 'surrogateescape'))[:20]}.json"

    @classmethod
    def read(cls, file: str) -> FolderIndex | None:
        """The record kept in `file` (for reports), None if it is damaged or names no folder."""
        record = _read(read_own_or_none(file, _RECORD_MAX))
        if not isinstance(folder := record.get("folder"), str):
            return None
        return cls(Path(file).parent.parent, Path(folder))

    def arrive(self, path: str, found: dict[str, object]) -> None:
        """Record that a version of `path` made on other machines (`found`: their names, when) was written here."""
        self.arrived = [*self.arrived, {"path": path, **found, "at": time.time()}][-MAX_ARRIVED:]

    def since_session(self) -> list[dict[str, object]]:
        """What arrived since this machine's last session started (all that is kept, before any session)."""
        since = self.session_at
        by_path: dict[str, dict[str, object]] = {}  # a file reached twice is one file: every machine, the newest time
        for entry in self.arrived:
            if since is not None and _number(entry.get("at")) < since:
                continue
            path = str(entry.get("path"))
            before = by_path.pop(path, None)  # listed where it last arrived
            if before is not None:
                machines = [*_names(before.get("machines")), *_names(entry.get("machines"))]
                times = [str(before.get("time", "")), str(entry.get("time", ""))]
                entry = {**entry, "machines": sorted(set(machines)), "time": max(times)}
            by_path[path] = entry
        return list(by_path.values())

    def save(self, *, synced: bool) -> None:
        """Write the record (the caller holds the scope's lock); `synced`: a sync with the bucket just ended."""
        if synced:
            self.last_sync = utc_now()
        self._known = write_json_atomic(
            self.file,
            {
                "folder": str(self.folder),
                "files": self.files,
                "conflicts": self.conflicts,
                "held": self.held,
                "blocked": self.blocked,
                "holding": self.holding,
                "pushed": self.pushed,
                "pulled": self.pulled,
                "recent": self.recent,
                "arrived": self.arrived,
                "last_sync": self.last_sync,  # last: a sync that changed nothing changes these alone
                "session_at": self.session_at,
            },
            known=self._known,
            volatile="last_sync",
        )


def _strings(value: object) -> dict[str, str]:
    """A mapping of strings to strings from a record (anything else in its place: empty)."""
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if isinstance(key, str) and isinstance(item, str)}


def _read(raw: bytes | None) -> IndexRecord:
    with contextlib.suppress(ValueError):
        value: object = json.loads(raw.decode("utf-8")) if raw is not None else None
        if _well_formed(value):
            return value  # type: ignore[return-value]  # _well_formed has just held its shape
    return {}


def _well_formed(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    files, conflicts = value.get("files"), value.get("conflicts")
    if not (isinstance(files, dict) and isinstance(conflicts, dict)):
        return False
    if not all(isinstance(value.get(key, 0), int) for key in ("pushed", "pulled")):
        return False
    return all(
        isinstance(entry, dict) and isinstance(entry.get("version"), (str, type(None))) for entry in files.values()
    ) and all(isinstance(entry, dict) and isinstance(entry.get("heads"), list) for entry in conflicts.values())


def _names(value: object) -> list[str]:
    """The machine names of an arrival (the record is ours, but read as anyone's)."""
    return [str(name) for name in value] if isinstance(value, list) else []


def _number(value: object) -> float:
    """A POSIX time from the record (anything else counts as long ago)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
