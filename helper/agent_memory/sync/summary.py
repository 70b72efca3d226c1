"""What this machine's records say of the synced folders, without the network or the runtimes' folders: for
`status`, `sync status` and the SessionStart reminder (conflicts that need a decision, and the command that shows
them)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .. import commands, paths
from .index import FolderIndex

DELETED_THERE = " (deleted there)"  # said after a kept text whose version is a deletion
MAX_ARRIVALS = 10  # files `sync status` lists as arrived since the last session, per folder
MAX_MACHINES = 3  # machines named for one file

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncArrival, SyncConflict, SyncFolderState


def folder_states(bucket: str, watched: Iterable[tuple[str, str, Path]] = ()) -> list[SyncFolderState]:
    """Every memory folder synced with `bucket` on this machine, as its record has it; then each of `watched`
    (runtime, scope, folder: those the next sync looks at) that has no record yet, none of its files in step."""
    found = _recorded(paths.state_dir() / "sync" / paths.bucket_key(bucket))
    recorded = {(state["agent"], state["scope"], state["folder"]) for state in found}
    for runtime, scope, folder in watched:
        if (runtime, scope, str(folder)) not in recorded:
            recorded.add((runtime, scope, str(folder)))
            found.append(
                {
                    "agent": runtime,
                    "scope": scope,
                    "folder": str(folder),
                    "exists": os.path.isdir(folder),  # before the runtime's first memory it has no folder
                    "files": 0,
                    "pushed": 0,
                    "pulled": 0,
                    "conflicts": [],
                    "last_sync": None,
                    "arrived": [],
                }
            )
    return found


def _recorded(root: Path) -> list[SyncFolderState]:
    """The folders that this machine's records under `root` (one bucket's) say were synced."""
    found: list[SyncFolderState] = []
    try:
        scopes = sorted((e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)), key=lambda e: e.name)
    except OSError:
        return found
    for scope_entry in scopes:
        runtime, _, scope = scope_entry.name.partition("-")
        try:
            records = sorted(os.scandir(os.path.join(scope_entry.path, "folders")), key=lambda e: e.name)
        except OSError:
            continue
        for record in records:
            if not record.name.endswith(".json"):
                continue
            index = FolderIndex.read(record.path)
            if index is None:
                continue
            conflicts = [conflict(runtime, scope, index.folder, path, entry) for path, entry in index.conflicts.items()]
            found.append(
                {
                    "agent": runtime,
                    "scope": scope,
                    "folder": str(index.folder),
                    "exists": os.path.isdir(index.folder),
                    "files": sum(1 for entry in index.files.values() if entry.get("hash") is not None),
                    "pushed": index.pushed,
                    "pulled": index.pulled,
                    "conflicts": conflicts,
                    "last_sync": index.last_sync,
                    "arrived": [arrival(entry) for entry in index.since_session()[-MAX_ARRIVALS:]],
                }
            )
    return found


def arrival(entry: dict[str, object]) -> SyncArrival:
    """A file that versions from other machines reached (the record is ours, but read as anyone's: bounded)."""
    machines = entry.get("machines") if isinstance(entry.get("machines"), list) else []
    return {
        "path": str(entry.get("path"))[:300],
        "machines": [str(name)[:100] for name in machines[:MAX_MACHINES]],
        "time": str(entry.get("time"))[:40],
    }


def from_where(found: SyncArrival | dict[str, object]) -> str:
    """`from vm-b, 2026-12-05 03:40 UTC`: whose versions reached a file, and when the newest was made."""
    names = found.get("machines")
    machines = [str(name)[:100] for name in names[:MAX_MACHINES]] if isinstance(names, list) else []
    machines = machines or ["another machine"]
    stamp = str(found.get("time", ""))
    shown = f"{stamp[:10]} {stamp[11:16]} UTC" if len(stamp) >= 16 and stamp[10] == "T" else stamp
    return f"from {', '.join(machines)}, {shown}"


def conflict(runtime: str, scope: str, folder: object, path: str, entry: dict[str, object]) -> SyncConflict:
    """How a file in conflict is told, with the command that shows its versions."""
    return {
        "agent": runtime,
        "scope": scope,
        "folder": str(folder),
        "path": path,
        "heads": list(entry.get("heads", [])),
        "kept": [str(kept) for kept in entry.get("kept", [])],
        "deleted_here": entry.get("deleted_here") is True,
        "show": commands.line("sync", "history", path, "--agent", runtime),
    }


def what_happened(item: SyncConflict) -> str:
    """What each side did to a file in conflict, in words (the side that deleted it is told so)."""
    if item["deleted_here"]:
        return "was deleted here and changed on another machine"
    if any(kept.endswith(DELETED_THERE) for kept in item["kept"]):
        return "was changed here and deleted on another machine"
    return "was changed here and on another machine on the same lines"


def keeps(item: SyncConflict) -> str:
    """What the file here holds until the user decides."""
    return "it stays deleted here" if item["deleted_here"] else "the file keeps this machine's text"
