"""Receipts of use: what the agents did with memory on this machine, counted per session (`agent-memory usage`).

One line per event in one file of the state folder (`usage`), appended under a lock: when (POSIX seconds), what
(EVENTS), the agent and the runtime's session id (`agents.detect`: CODEX_THREAD_ID, CLAUDE_CODE_SESSION_ID; the
SessionStart hook's event for `session`), the project, whether a search found something, and the ids of the notes a
search returned, or a read or save was about. Never a query's text nor a note's content: nothing typed or written
by anyone is kept, only counts and ids. Nothing leaves the machine.

The file is ours to bound and to distrust: it is opened without following links, read at most READ_MAX bytes (its
end), and a line that is not exactly what `record` writes is skipped. Lines older than KEEP_DAYS are dropped by the
SessionStart hook once the oldest line is that old, and by any append that takes the file past MAX_BYTES (which then
keeps the newest half). Recording never fails a command: a state folder that cannot be written counts nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .. import agents, names, paths
from ..fsutil import UnsafeLocalFile, locked, open_own, open_private, write_atomic
from ..memory.notes import SETUP_ID_PREFIX

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import AgentUse, UsageProject, UsageReport, UsageTotals

EVENTS = ("session", "search", "read", "save")
KEEP_DAYS = 90
MAX_BYTES = 1 << 20
READ_MAX = 2 * MAX_BYTES  # more than an append can add past MAX_BYTES before it is pruned
IDS_MAX = 1000  # note ids on one line: a search's largest --limit
SESSION_MAX = 128
_SESSION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
_AGENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
DAY = 86400


class Event:
    """One line of the record."""

    __slots__ = ("time", "event", "agent", "session", "project", "found", "ids")

    def __init__(self, when: int, event: str, agent: str, session: str, project: str, found: bool, ids: list[str]):
        self.time, self.event, self.agent, self.session = when, event, agent, session
        self.project, self.found, self.ids = project, found, ids


def _file() -> Path:
    return paths.state_dir() / "usage"


def _lock() -> Path:
    return paths.state_dir() / "usage.lock"


def session_id(value: object) -> str:
    """`value` if it has the shape of a runtime's session id (the runtimes use UUIDs), else ""."""
    if isinstance(value, str) and 0 < len(value) <= SESSION_MAX and _SESSION_CHARS.issuperset(value):
        return value
    return ""


def _agent(value: str) -> str:
    return value if 0 < len(value) <= 32 and _AGENT_CHARS.issuperset(value) else "unknown"


def record(project: str | None, event: str, *, found: bool = False, ids: Iterable[str] = ()) -> None:
    """Count one `event` of the calling agent's session (see `agents.detect`) in `project`; nothing without a
    project."""
    agent, session = agents.detect()
    _append(project, event, agent, session or "", found, ids)


def session_started(project: str | None, agent: str, payload: dict[str, object]) -> None:
    """Count a session that the SessionStart hook of `agent` saw start (or resume), under the name its commands give
    the agent (`agents.named`), and drop the lines older than KEEP_DAYS once there are some."""
    _append(project, "session", agents.named(agent), session_id(payload.get("session_id")), False, ())
    try:
        oldest = _first_time()
        if oldest is not None and oldest < time.time() - KEEP_DAYS * DAY:
            prune()
    except (OSError, ValueError):
        pass


def _append(project: str | None, event: str, agent: str, session: str, found: bool, ids: Iterable[str]) -> None:
    if not project or not names.is_project(project) or event not in EVENTS:
        return
    kept = [note_id for note_id in ids if names.is_id(note_id)][:IDS_MAX]
    fields = (str(int(time.time())), event, _agent(agent), session_id(session), project, "1" if found else "0")
    line = "\t".join((*fields, ",".join(kept))) + "\n"
    try:
        with locked(_lock()):
            fd = open_private(_file(), os.O_RDWR)
            try:
                size = os.fstat(fd).st_size
                torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"  # a line cut by a crash: ours starts anew
                os.write(fd, (b"\n" if torn else b"") + line.encode())
            finally:
                os.close(fd)
            if size > MAX_BYTES:
                _prune_locked()
    except OSError:  # a read-only state folder (a sandbox): nothing counted
        pass


def _first_time() -> int | None:
    """The time of the record's first line, None if there is none."""
    with open(open_own(_file()), "rb") as handle:
        head = handle.read(16)
    stamp = head.split(b"\t", 1)[0]
    return int(stamp) if stamp.isdigit() and b"\t" in head else None


def read(since: float = 0) -> list[Event]:
    """The events recorded at or after `since` (POSIX seconds), oldest first: [] if the record is missing or not
    ours; lines that are not exactly what `record` writes are skipped."""
    try:
        with open(open_own(_file()), "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - READ_MAX))
            data = handle.read(READ_MAX)
    except (FileNotFoundError, UnsafeLocalFile):
        return []
    lines = data.split(b"\n")
    if size > READ_MAX:
        lines = lines[1:]  # the first one is cut
    found = []
    for line in lines:
        # the time first: most of a long record is older than the days asked for (`status` asks for a week of up
        # to 90 days kept), and such a line needs no more reading
        when, tab, _rest = line.partition(b"\t")
        if not tab or not when.isdigit() or int(when) < since:
            continue
        event = _parsed(line)
        if event is not None:
            found.append(event)
    return found


def _parsed(line: bytes) -> Event | None:
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return None
    fields = text.split("\t")
    if len(fields) != 7:
        return None
    when, event, agent, session, project, found, ids = fields
    if not when.isdigit() or event not in EVENTS or _agent(agent) != agent or session_id(session) != session:
        return None
    if not names.is_project(project) or found not in ("0", "1"):
        return None
    note_ids = ids.split(",") if ids else []
    if len(note_ids) > IDS_MAX or not all(names.is_id(note_id) for note_id in note_ids):
        return None
    return Event(int(when), event, agent, session, project, found == "1", note_ids)


def prune() -> None:
    """Drop the lines older than KEEP_DAYS (and the lines that are not ours)."""
    with locked(_lock()):
        _prune_locked()


def _prune_locked() -> None:
    lines = [_line(event) for event in read(time.time() - KEEP_DAYS * DAY)]
    while lines and sum(map(len, lines)) > MAX_BYTES // 2:  # still too large: the newest half stays
        lines = lines[len(lines) // 2 :]
    write_atomic(_file(), b"".join(lines))


def _line(event: Event) -> bytes:
    found = "1" if event.found else "0"
    fields = (str(event.time), event.event, event.agent, event.session, event.project, found, ",".join(event.ids))
    return ("\t".join(fields) + "\n").encode()


# -- what the record says ---------------------------------------------------------------------------------------


def summary(days: int, notes_of: Callable[[str], set[str]]) -> UsageReport:
    """The use of memory over the last `days` days, per project and agent; `notes_of(project)` gives the ids of
    the project's notes this machine holds, for those that no search returned."""
    since = int(time.time()) - days * DAY
    events = _one_name_per_session(read(since))
    projects: dict[str, dict[str, list[Event]]] = {}
    for event in events:
        projects.setdefault(event.project, {}).setdefault(event.agent, []).append(event)
    found = []
    for project in sorted(projects):
        by_agent = projects[project]
        returned = {note_id for e in events if e.project == project and e.event == "search" for note_id in e.ids}
        held = {note_id for note_id in notes_of(project) if not note_id.startswith(SETUP_ID_PREFIX)}
        used: UsageProject = {
            "project": project,
            "notes": len(held),
            "never_returned": len(held - returned),
            "agents": [_agent_use(agent, by_agent[agent]) for agent in sorted(by_agent)],
        }
        found.append(used)
    return {"days": days, "since": _stamp(since), "projects": found}


def _one_name_per_session(events: list[Event]) -> list[Event]:
    """The events, each session's under one name: the one its commands gave last. A hook that did not see the
    `AGENT_MEMORY_AGENT` its session's commands had (set for them alone) counted the session under the runtime's
    name; the session is still one, the agent's that the commands and their notes name."""
    commands = {e.session: e.agent for e in events if e.session and e.event != "session"}
    for event in events:
        if event.session in commands:
            event.agent = commands[event.session]
    return events


def _agent_use(agent: str, events: list[Event]) -> AgentUse:
    sessions = {e.session for e in events if e.session}
    searched = {e.session for e in events if e.session and e.event == "search"}
    searches = [e for e in events if e.event == "search"]
    return {
        "agent": agent,
        "sessions": len(sessions),
        "sessions_searched": len(searched),
        "searched_share": round(len(searched) / len(sessions), 2) if sessions else None,
        "searches": len(searches),
        "searches_found": sum(e.found for e in searches),
        "saved": sum(e.event == "save" for e in events),
        "read": sum(e.event == "read" for e in events),
    }


def totals(days: int) -> UsageTotals:
    """All projects and agents together over the last `days` days (`status`'s line)."""
    events = _one_name_per_session(read(int(time.time()) - days * DAY))
    sessions = {(e.agent, e.session) for e in events if e.session}
    searched = {(e.agent, e.session) for e in events if e.session and e.event == "search"}
    searches = [e for e in events if e.event == "search"]
    return {
        "days": days,
        "sessions": len(sessions),
        "sessions_searched": len(searched),
        "searches": len(searches),
        "searches_found": sum(e.found for e in searches),
        "saved": sum(e.event == "save" for e in events),
        "read": sum(e.event == "read" for e in events),
    }


def _stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
