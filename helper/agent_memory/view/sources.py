"""Everything the view shows, read from this machine's own records and nothing else: the cache and its search pack,
the notes pending upload, the receipts of use, the sync's records of versions and conflicts, the outage memory and
what `status` finds damaged. Read-only: nothing here writes, refreshes or reaches the network.

All of the reading is in this one module, through the public functions of the modules that own each record, so that a
change to one of them (the sync's records are moving) is adapted here alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from .. import commands, paths
from ..display import plural
from ..errors import NotSetUp
from ..memory import pack
from ..memory.cache import ProjectCache
from ..memory.checksums import Checksum
from ..memory.notes import SETUP_ID_PREFIX, SETUP_TITLE, object_path
from ..memory.pending import NOTES, pending_candidate  # a pending note's fields exactly as search takes them
from ..names import is_project
from ..outbox.kinds import RETRY
from ..outbox.listing import entries, waiting
from ..report import usage
from ..report.status import damaged_state
from ..store import outage
from ..sync.history import History
from ..sync.index import FolderIndex
from ..sync.summary import folder_states
from ..sync.versions import Refused

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import NoteWaiting
    from ..memory.shape import WaitingNote

MAX_SYNC_FILES = 1000  # files of one synced folder shown (`sync.history` tracks at most as many)


class Note:
    """One note as the timeline lists it: its checked fields (the search pack's header, exactly what `search` shows),
    and where its bytes are (the cache, or the outbox for a note pending upload)."""

    __slots__ = ("id", "project", "fields", "pending", "content")

    def __init__(self, project: str, fields: dict[str, str], pending: bytes | None = None) -> None:
        self.id = fields["id"]
        self.project = project
        self.fields = fields
        self.pending = pending is not None
        self.content = pending  # a pending note's bytes; a cached note's are read when its chunk is written

    @property
    def setup(self) -> bool:
        """Whether it is bootstrap's verification note (left out unless asked for, as `search` does)."""
        return self.id.startswith(SETUP_ID_PREFIX) and self.fields.get("title") == SETUP_TITLE


def projects(bucket: str, mapped: dict[str, object]) -> list[str]:
    """The projects this machine holds notes of in `bucket` (cached or pending), and those mapped here, sorted."""
    found = {str(name) for name in mapped.values() if isinstance(name, str) and is_project(name)}
    try:
        with os.scandir(paths.bucket_cache(bucket) / "projects") as listed:
            found |= {e.name for e in listed if is_project(e.name) and e.is_dir(follow_symlinks=False)}
    except OSError:
        pass
    for plan, _objects in waiting(NOTES):
        project = (plan.get("display") or {}).get("project")
        if plan.get("bucket") == bucket and isinstance(project, str) and is_project(project):
            found.add(project)
    return sorted(found)


def unknown_project(project: str, known: list[str]) -> NotSetUp:
    """The error for a project this machine holds nothing of."""
    listed = f" (it knows {', '.join(known[:10])})" if known else ""
    return NotSetUp(
        f"This machine holds no notes of project {project!r}{listed}.",
        next_step=commands.line("view", "--all-projects"),
    )


def cached_notes(bucket: str, project: str) -> list[Note]:
    """The verified notes of a project's cache, from its search pack's headers (one pass, bounded memory)."""
    cache = ProjectCache(bucket, project)

    def headers(found: Iterator[bytes]) -> list[Note]:
        return [Note(project, pack.fields(header)) for header in found]

    try:
        return cache.search_pack(b"", headers)
    except OSError:  # a damaged pack that a read-only cache cannot rebuild: the next search will
        return []


def pending_notes(bucket: str, wanted: set[str]) -> list[Note]:
    """The notes of `wanted` projects waiting in the outbox for `bucket`, with the fields `search` gives them."""
    found = []
    for plan, objects in waiting(NOTES):
        display = plan.get("display") or {}
        if plan.get("bucket") != bucket or display.get("project") not in wanted:
            continue
        path, data = objects[-1]
        text = data.decode("utf-8", errors="replace")
        entry: WaitingNote = {**display, "id": plan["id"], "path": path, "content": text}
        fields = pending_candidate(entry)["fields"]
        found.append(Note(str(display["project"]), fields, data))
    return found


class NoteTexts:
    """The exact bytes of notes, the cache's checked against what was verified when it was cached (the record of
    each project's checksums read once, not once per batch)."""

    def __init__(self, bucket: str) -> None:
        self.bucket = bucket
        self._caches: dict[str, tuple[ProjectCache, dict[str, Checksum]]] = {}

    def of(self, note: Note) -> bytes | None:
        """A note's bytes; None if its cached copy no longer matches what was verified."""
        if note.pending:
            return note.content
        if note.project not in self._caches:
            cache = ProjectCache(self.bucket, note.project)
            self._caches[note.project] = (cache, cache.verified_checksums())
        cache, known = self._caches[note.project]
        return cache.matching(note.id, known.get(note.id))


def note_path(note: Note) -> str:
    """Where the note lives (or will) in the bucket."""
    return object_path(note.project, note.id)


# -- receipts of use ------------------------------------------------------------------------------------------


def receipts() -> tuple[dict[str, list[int]], list[int]]:
    """`({note id: [last time a search returned it, last time it was read]}, [time of each search])`, POSIX seconds,
    from this machine's receipts of use (kept usage.KEEP_DAYS days)."""
    last: dict[str, list[int]] = {}
    searches = []
    for event in usage.read(time.time() - usage.KEEP_DAYS * usage.DAY):
        if event.event == "search":
            searches.append(event.time)
        slot = {"search": 0, "read": 1}.get(event.event)
        if slot is None:
            continue
        for note_id in event.ids:
            times = last.setdefault(note_id, [0, 0])
            times[slot] = max(times[slot], event.time)
    return last, searches


# -- the sync of the runtimes' own memory ---------------------------------------------------------------------


def sync_files(bucket: str) -> list[dict[str, Any]]:
    """Every synced file of each runtime this machine has records of: its versions (oldest id first, with their
    texts: None for a deletion, or why the kept text cannot be shown), its heads, and its conflict if it has one."""
    conflicts = {
        (item["agent"], item["scope"], item["path"]): item
        for state in folder_states(bucket)
        for item in state["conflicts"]
    }
    found = []
    for history in _histories(bucket):
        runtime, scope = history.runtime, history.scope
        here = _here(history)
        for path in sorted(history.paths())[:MAX_SYNC_FILES]:
            versions = []
            for meta in history.of(path):
                try:
                    text, problem = history.text(str(meta["id"])), None
                except Refused as exc:
                    text, problem = None, str(exc)
                versions.append({**meta, "text": text, "problem": problem})
            found.append(
                {
                    "agent": runtime,
                    "scope": scope,
                    "path": path,
                    "versions": versions,
                    "heads": history.heads(path),
                    "here": here.get(path),
                    "conflict": conflicts.get((runtime, scope, path)),
                }
            )
    return found


def _here(history: History) -> dict[str, str]:
    """The version each file of this machine's folder matches (as `sync history` marks it "here"), by path."""
    here: dict[str, str] = {}
    try:
        records = sorted(e.path for e in os.scandir(history.folder / "folders") if e.name.endswith(".json"))
    except OSError:
        return here
    for record in records:
        index = FolderIndex.read(record)
        for path, entry in (index.files if index is not None else {}).items():
            if isinstance(version := entry.get("version"), str):
                here.setdefault(path, version)
    return here


def sync_refused(bucket: str) -> list[dict[str, str]]:
    """The objects of the bucket's sync folders that this machine refused, and why (each scope's record)."""
    return [
        {"path": path, "why": why, "next": commands.line("sync", "status")}
        for history in _histories(bucket)
        for path, why in sorted(history.refused.items())
    ]


def _histories(bucket: str) -> list[History]:
    """What this machine knows of each runtime's scope synced with `bucket` (one record folder each)."""
    root = paths.state_dir() / "sync" / paths.bucket_key(bucket)
    try:
        scopes = sorted(e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [History(bucket, *name.partition("-")[::2]) for name in scopes]


# -- health ---------------------------------------------------------------------------------------------------


def health(bucket: str, projects: list[str], damaged_notes: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    """What needs a person: uploads waiting and damaged ones, damaged notes, objects skipped as oversized or unsafe,
    the outage the commands remember, this machine's damaged records; each item with the command that deals with
    it (`next`)."""
    from ..uploads import KINDS, note_summary  # the kinds of upload: loaded by `view` and `status` alone

    waiting_now = entries(KINDS)
    items: dict[str, list[dict[str, str]]] = {
        "pending": [
            {"what": f"{entry['id']} -> {entry['path']}", "detail": _attempts(note_summary(entry)), "next": RETRY}
            for entry in waiting_now["notes"]
        ]
        + [
            {"what": f"skill {entry['name']} {entry['revision']}", "detail": "publication pending", "next": RETRY}
            for entry in waiting_now["skills"]
        ]
        + [{"what": "sync uploads", "detail": f"{len(waiting_now['sync'])} waiting", "next": RETRY}]
        * bool(waiting_now["sync"]),
        "damaged": [
            {"what": f"upload {item['id']}", "detail": str(item["problem"]), "next": commands.line("pending")}
            for item in waiting_now["damaged"]
        ]
        + damaged_notes,
        "skipped": [],
        "outage": [],
        "state": [
            {"what": item["file"], "detail": item["problem"], "next": item["next"]}
            for item in damaged_state(bucket, ProjectCache(bucket, projects[0]) if projects else None)
        ],
    }
    for project in projects:
        for item in ProjectCache(bucket, project).report()["skipped"]:
            items["skipped"].append({"what": item["path"], "detail": item["detail"], "next": item["next"]})
    items["skipped"] += [
        {"what": item["path"], "detail": item["why"], "next": item["next"]} for item in sync_refused(bucket)
    ]
    found = outage.current(bucket)
    if found is not None:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(found.since))
        until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(found.until))
        detail = f"not answering since {since} ({found.detail}); tried again from {until}"
        items["outage"].append({"what": bucket, "detail": detail, "next": commands.line("search", "--online")})
    return items


def _attempts(entry: NoteWaiting) -> str:
    error = entry["last_error"]
    told = plural(entry["attempts"], "attempt")
    return f"{told}, last error: {error.get('reason')}: {error.get('detail')}" if error else told
