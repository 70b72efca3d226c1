"""Sync in the SessionStart hook: it pulls what other machines changed (before the runtime reads its memory, see
docs/sync.md#when); the Stop and SessionEnd hooks push what changed here (`memory_push`). With nothing changed in
the bucket, a pull costs one question to it (a folder store: one listing of the scope's folder), and none at all
while the bucket's feed follower saw nothing change (`store.follow`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import agents
from ..config.context import Context
from ..display import plural, some
from ..errors import AgentMemoryError
from ..store import follow
from ..sync import folders
from ..sync.history import History
from ..sync.index import FolderIndex
from ..sync.running import sync
from ..sync.scopes import scopes
from ..sync.summary import blocked_line, folder_states, from_where, held_lines, keeps, unnamed_line, what_happened
from ..sync.versions import Refused
from .memory_push import MAX_NAMED

# Measured in Claude Code 2.1.328 and Codex 0.169: each reads its index file (its MEMORY_INDEX) before the
# SessionStart hook's changes land (a session's first request has the text the file had when it started), so what
# a pull added to it is told in the reminder; the file has it for every later session. Codex with memories on
# starts a consolidation session beside the user's, whose SessionStart hook runs at the same time: the hook that
# waits for the other's pull is told what it pulled (`index.recent`).
MAX_INDEX_LINES = 1200  # bytes of an index file's new lines put into the reminder


def pull(ctx: Context, event: dict[str, object], agent: str, helper: str, budget: float) -> list[str]:
    """Bring here what other machines changed in `agent`'s memory (nothing changed here is touched), within `budget`
    seconds of network; the lines the session's reminder gets: files that changed, files that need a decision."""
    started = time.time()  # the runtime read its memory before it started this hook
    directory = cwd if isinstance(cwd := event.get("cwd"), str) else os.getcwd()
    ctx.budget.reset(budget)
    try:
        chosen = scopes(ctx, agent, directory)
        # the bucket's feed follower (started here if none is alive) may tell that nothing changed: then no question
        watch = follow.watch(ctx.bucket) if chosen else None
        run = sync(ctx, chosen, push=False, wait=budget / 2, session=started, watch=watch)
    except (AgentMemoryError, OSError) as exc:
        return [f"agent-memory sync: this machine's copy of {agent}'s memory was not updated ({exc})."]
    lines, pulled, came = [], [], []
    if agent == "codex":  # Codex's own folder is never written: other machines' memories reach its extension
        from ..sync import codex_delivery  # Codex's alone: Claude Code's session start does not load it

        lines += codex_delivery.reminder(ctx.bucket, started, MAX_INDEX_LINES)
    for scope in chosen:
        for place in scope.places:
            recent = FolderIndex(History.folder_of(ctx.bucket, agent, scope.scope), place).recent
            if isinstance(at := recent.get("at"), (int, float)) and at >= started:  # pulled after it read them
                pulled += _pulled(recent)
                lines += _index_lines(agent, place, recent)
                came += [found for found in _came(recent).values() if isinstance(found, dict)]
    if pulled:
        whose = f", {from_where(_together(came))}" if came else ""
        lines.append(
            f"agent-memory sync: changed on another machine and updated here: {plural(len(pulled), 'memory file')} "
            f"({some(pulled, MAX_NAMED)}{whose})."
        )
    refused = [item for done in run.folders for item in done.refused]
    for item in refused[:MAX_NAMED]:  # a version the guard refused, a link where a file goes: not written here
        lines.append(f"agent-memory sync: not written here: {item['path']}: {item['why']}.")
    if run.errors:
        lines.append("agent-memory sync: the bucket could not be reached; this machine's memory files may be behind.")
    mine = {scope.scope for scope in chosen}
    states = [state for state in folder_states(ctx.bucket) if state["agent"] == agent and state["scope"] in mine]
    conflicts = [item for state in states for item in state["conflicts"]]
    for conflict in conflicts[:MAX_NAMED]:
        lines.append(
            f"agent-memory sync: the memory file {conflict['path']} {what_happened(conflict)}; {keeps(conflict)} until "
            f"the user decides. Show both: {helper} {conflict['show'].removeprefix('agent-memory ')}"
        )
    # folders not synced and deletions held: what the user is to decide, with the command (the helper's own path)
    told = [blocked_line(item) for state in states for item in state["blocked"]][:MAX_NAMED]
    told += held_lines(item for state in states for item in state["held"])
    told += [unnamed_line(agent, place, scope.sources.get(place, "")) for scope in chosen for place in scope.unnamed]
    told_lines = [f"agent-memory sync: {line.replace('agent-memory sync ', f'{helper} sync ')}" for line in told]
    # two checkouts of one project on this machine have the same conflict, told in the same words: once
    return list(dict.fromkeys(lines + told_lines))


def _pulled(recent: dict[str, object]) -> list[str]:
    """The files a recorded pull brought (the record is ours, but anyone's shell can write it: checked)."""
    listed = recent.get("pulled")
    return [path for path in listed if isinstance(path, str)] if isinstance(listed, list) else []


def _index_lines(agent: str, folder: Path, recent: dict[str, object]) -> list[str]:
    """The lines a pull added to the runtime's index file, for the reminder (bounded; the rest: read the file)."""
    name = agents.runtime(agent).MEMORY_INDEX
    if name not in _pulled(recent):
        return []
    try:
        new = (folders.read(folder, name).text or "").splitlines()
    except (OSError, Refused):
        return [f"agent-memory sync: {name} changed on another machine after this session loaded it: read it again."]
    before = found if isinstance(found := recent.get("before"), dict) else {}
    old = set(str(before.get(name) or "").splitlines())
    added = [line for line in new if line.strip() and line not in old]
    if not added:
        return [f"agent-memory sync: {name} changed on another machine after this session loaded it: read it again."]
    shown, size = [], 0
    for line in added:
        size += len(line.encode()) + 1
        if size > MAX_INDEX_LINES:
            break
        shown.append(line)
    rest = "" if len(shown) == len(added) else f" ({len(added) - len(shown)} more lines: read {folder / name})"
    came = _came(recent)
    whose = f" ({from_where(arrival)})" if isinstance(arrival := came.get(name), dict) else ""
    head = f"agent-memory sync: lines another machine added to {name} after this session loaded it{whose}{rest}:"
    return [head, *shown]


def _came(recent: dict[str, object]) -> dict[str, object]:
    """Whose versions reached each pulled file, and when (`index.recent`, a record read as anyone's)."""
    came = recent.get("from")
    return came if isinstance(came, dict) else {}


def _together(came: list[dict[str, object]]) -> dict[str, object]:
    """The machines of several files' arrivals (a few), and the newest time among them."""
    machines = sorted({str(name) for found in came for name in _listed(found.get("machines"))})
    return {"machines": machines[:MAX_NAMED], "time": max(str(found.get("time", "")) for found in came)}


def _listed(value: object) -> list[object]:
    return value if isinstance(value, list) else []
