"""What this machine's records say of the synced folders, without the network or the runtimes' folders: for
`status`, `sync status` and the SessionStart reminder (conflicts that need a decision, and the command that shows
them)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from .. import agents, commands, paths
from ..display import some
from .index import ELSEWHERE, GONE, HERE, LINK, NOT_FOLDER, FolderIndex
from .versions import NOT_REGULAR, SECRET, SECRET_THERE, TOO_LARGE

DELETED_THERE = " (deleted there)"  # said after a kept text whose version is a deletion
MAX_ARRIVALS = 10  # files `sync status` lists as arrived since the last session, per folder
MAX_MACHINES = 3  # machines named for one file
MAX_NAMED = 10  # files named in a line of deletions held; the rest are counted (`sync status --json` lists all)
TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncArrival, SyncBlocked, SyncConflict, SyncFileRefused, SyncFolderState, SyncHeld


def folder_states(bucket: str, watched: Iterable[tuple[str, str, Path, str, bool]] = ()) -> list[SyncFolderState]:
    """Every memory folder synced with `bucket` on this machine, as its record has it; then each of `watched`
    (runtime, scope, folder, where its place came from, whether it is synced: those the next sync looks at) that
    has no record yet, none of its files in step."""
    found = _recorded(paths.state_dir() / "sync" / paths.bucket_key(bucket))
    by_place = {(state["agent"], state["scope"], state["folder"]): state for state in found}
    for runtime, scope, folder, source, synced in watched:
        known = by_place.get((runtime, scope, str(folder)))
        if known is not None:
            known["source"], known["synced"] = source, synced
            continue
        state: SyncFolderState = {
            "agent": runtime,
            "scope": scope,
            "folder": str(folder),
            "source": source,
            "synced": synced,
            "exists": os.path.isdir(folder),  # before the runtime's first memory it has no folder
            "files": 0,
            "pushed": 0,
            "pulled": 0,
            "conflicts": [],
            "blocked": [],
            "held": [],
            "last_sync": None,
            "arrived": [],
        }
        by_place[(runtime, scope, str(folder))] = state
        found.append(state)
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
            exists = os.path.isdir(index.folder)
            files = sum(1 for entry in index.files.values() if entry.get("hash") is not None)
            if not exists and files and not os.path.lexists(index.folder):
                index.blocked.setdefault("", GONE)  # gone since the last sync: told before the next one
            found.append(
                {
                    "agent": runtime,
                    "scope": scope,
                    "folder": str(index.folder),
                    "source": "",
                    "synced": True,
                    "exists": exists,
                    "files": files,
                    "pushed": index.pushed,
                    "pulled": index.pulled,
                    "conflicts": conflicts,
                    "blocked": [blocked(runtime, scope, index.folder, *item) for item in index.blocked.items()],
                    "held": [held(runtime, scope, index.folder, path, why) for path, why in index.holding.items()],
                    "last_sync": index.last_sync,
                    "arrived": [arrival(entry) for entry in index.since_session()[-MAX_ARRIVALS:]],
                }
            )
    return found


def arrival(entry: dict[str, object]) -> SyncArrival:
    """A file that versions from other machines reached (the record is ours, but read as anyone's: bounded)."""
    machines = listed if isinstance(listed := entry.get("machines"), list) else []
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
        "heads": list(entry.get("heads", [])),  # type: ignore[call-overload]  # unchecked: this machine's own index
        "kept": [str(kept) for kept in entry.get("kept", [])],  # type: ignore[attr-defined]  # the same
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


def blocked(runtime: str, scope: str, folder: Path, where: str, why: str) -> SyncBlocked:
    """A folder that is not synced now (`where` in the memory folder `folder`; "": itself), and what to do."""
    place = folder / where if where else folder
    quoted, again = shlex.quote(str(place)), commands.line("sync", "now")
    if why == GONE:
        fix = f"mkdir -p {quoted} && {again} (its files come back from the bucket)"
    elif why == LINK:
        fix = f"replace the link {quoted} with the folder it points to (sync never follows a link out of the folder)"
    elif why == NOT_FOLDER:
        fix = f"mv {quoted} {shlex.quote(str(place) + '.moved')} && mkdir {quoted} && {again}"
    else:
        fix = f"chmod u+rwx {quoted} && {again}"
    return {"agent": runtime, "scope": scope, "folder": str(place), "why": why, "next": fix}


def held(runtime: str, scope: str, folder: Path, path: str, why: str) -> SyncHeld:
    """A deletion held until the user confirms it."""
    fix = commands.line("sync", "now", "--allow-deletes")
    return {"agent": runtime, "scope": scope, "folder": str(folder), "path": path, "why": why, "next": fix}


def refused_next(kind: str, path: str, folder: Path) -> str:
    """What makes a file that was not synced sync (`kind`: the code of why, from `versions`)."""
    where = os.path.join(folder, path)
    again = commands.line("sync", "now")
    if kind == SECRET_THERE:
        return f"take the credential out of {path} on the machine that changed it, then run {again} there"
    if kind == SECRET:
        return f"take the credential out of {where} (or out of its name), then {again}"
    if kind == NOT_REGULAR:
        return f"put a regular file in place of {where} (sync never follows a link), then {again}"
    if kind == TOO_LARGE:
        return f"make {where} smaller, or move it out of the memory folder, then {again}"
    return f"{commands.line('sync', 'history', path)} (its versions), then fix or move {where}"


def refused_line(item: SyncFileRefused) -> str:
    """How a file that was not synced is told (`sync now`), with what makes it sync."""
    return f"Not synced: {item['path']}: {item['why']}.\nNext: {item['next']}"


def blocked_line(item: SyncBlocked) -> str:
    """How a folder that is not synced is told (`sync now`, `sync status`, `status`, the SessionStart reminder)."""
    return (
        f"Not synced: {item['folder']} ({item['agent']} {item['scope']}): {item['why']}; nothing in it is deleted, "
        f"here or elsewhere. Next: {item['next']}"
    )


def held_lines(items: Iterable[SyncHeld]) -> list[str]:
    """How deletions held are told: one line per folder and side."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for item in items:
        groups.setdefault((item["agent"], item["scope"], item["folder"], item["why"]), []).append(item["path"])
    lines = []
    for (runtime, scope, folder, why), files in groups.items():
        kept = "elsewhere" if why == HERE else "here" if why == ELSEWHERE else "anywhere"
        named = some(sorted(files), MAX_NAMED)
        lines.append(
            f"Held: {len(files)} {'file' if len(files) == 1 else 'files'} {why} ({named}) in "
            f"{folder} ({runtime} {scope}): not deleted {kept} until you confirm. Next: "
            f"{commands.line('sync', 'now', '--allow-deletes')}"
        )
    return lines


def unnamed_line(runtime: str, folder: Path, source: str) -> str:
    """How a memory folder that is synced only once the user names it is told."""
    came, label = f" ({source})" if source else "", agents.runtime(runtime).LABEL
    return (
        f"Not synced: {folder}{came} is outside {label}'s own folder, so it is synced only once you name it. "
        f"Next: {commands.line('sync', 'enable', '--agent', runtime, '--folder', str(folder))}"
    )
