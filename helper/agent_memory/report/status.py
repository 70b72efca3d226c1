"""What `agent-memory status` reports: configuration, project, pending uploads, last refresh, damaged notes, installed
skills."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import __version__, commands, paths
from ..config.context import Context
from ..display import safe_tree
from ..errors import AccessError, NotSetUp
from ..fsutil import damage
from ..hooks import reminded
from ..memory import checksums
from ..memory.cache import DAMAGED, DAMAGED_MAX, SMALL_RECORD, STANDS, ProjectCache
from ..names import folder_path
from ..outbox import backoff, plans
from ..outbox.listing import entries
from ..setup import hook_config_read, sandbox_consent_read
from ..skills import catalog
from ..skills.install_read import installed_skills
from ..store import outage
from ..store.base import FolderMissing
from ..store.bucket import check_private
from ..sync.settings import enabled
from . import usage

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import (
        DamagedNote,
        Mapping,
        Outage,
        StateDamage,
        Status,
        StoreCheck,
        SyncFolderState,
        SyncSummary,
    )
    from .shape import Waiting

USAGE_DAYS = 30  # the period of status's line on the use of memory (`usage --days N` shows others)


def status(ctx: Context) -> Status:
    """The machine's state, as the status command's JSON object."""
    bucket = ctx.config.get("bucket")
    try:
        project: Mapping | None = ctx.mapping()
        project_error = None
    except NotSetUp as exc:
        project, project_error = None, f"{exc.message} Next: {exc.next_step}"
    cache = ProjectCache(bucket, project["project"]) if bucket and project else None
    report = cache.report() if cache else {"skipped": [], "gone": []}
    waiting = _waiting()
    result: Status = {
        "version": __version__,
        "config_file": str(paths.config_file()),
        "bucket": bucket,
        "store": store_check(bucket),
        "project": project,
        "project_error": project_error,
        "last_refresh": cache.last_refresh() if cache else None,
        "pending": waiting["notes"],
        "pending_skills": [
            {
                "name": entry["name"],
                "revision": entry["revision"],
                "bucket": entry["bucket"],
                "attempts": entry["attempts"],
                "last_error": entry["last_error"],
            }
            for entry in waiting["skills"]
        ],
        "damaged": waiting["damaged"],
        "damaged_notes": _damaged_notes(cache) if cache else [],
        "damaged_state": damaged_state(bucket, cache),
        "outage": _outage(bucket),
        "skipped": report["skipped"],  # what the last listing left out (oversized, unsafe), and why
        "gone": report["gone"],  # notes found gone from the bucket, newest first
        "skills": installed_skills(),
        "hooks": hook_config_read.status(),
        "codex_sandbox": sandbox_consent_read.status(bucket),
        "usage": usage.totals(USAGE_DAYS),
        "sync": _sync(ctx, bucket, len(waiting["sync"])),
    }
    return safe_tree(result)  # notes' problems, store errors and paths reach people and models alike


def _waiting() -> Waiting:
    """Every upload in the outbox, by its kind's group (notes as status lists them), and the damaged ones.

    The kinds of upload (`uploads`, with each domain's own, and the age of a note waiting) are loaded here,
    where the outbox is found to hold something: most of the time it holds nothing, and status then loads none of
    them."""
    if not plans.operations():
        return {"notes": [], "skills": [], "sync": [], "damaged": []}
    from ..uploads import KINDS, note_summary

    found = entries(KINDS)
    return {**found, "notes": [note_summary(entry) for entry in found["notes"]]}


def _sync(ctx: Context, bucket: str | None, pending: int) -> SyncSummary:
    """The runtimes whose own memory is synced, uploads of theirs waiting, and the files and folders that need a
    decision (conflicts, folders not synced now, deletions held)."""
    states = _states(bucket) if bucket else []
    return {
        "enabled": enabled(ctx.config),
        "pending": pending,
        "conflicts": [item for state in states for item in state["conflicts"]],
        "blocked": [item for state in states for item in state["blocked"]],
        "held": [item for state in states for item in state["held"]],
    }


def _states(bucket: str) -> list[SyncFolderState]:
    """The memory folders that this machine synced with `bucket`, from its sync records.

    The records' reader (`sync.summary`) is loaded here, where a machine that has records of the bucket is found:
    most never sync their runtimes' own memory, and their status reads none of it (the records' folder is the one
    `sync.summary.folder_states` lists)."""
    if not os.path.isdir(paths.state_dir() / "sync" / paths.bucket_key(bucket)):
        return []
    from ..sync.summary import folder_states

    return folder_states(bucket)


def store_check(bucket: str | None) -> StoreCheck:
    """Whether the configured store can be used, checked as save checks it before keeping a note, without the
    network: `{"status": "ok"|"refused"|"missing"|"not checked"|"not set", "detail", "next"}`."""
    folder = folder_path(bucket) if bucket else None
    if not bucket:
        return {"status": "not set", "detail": None, "next": commands.line("bootstrap", "--project", "NAME")}
    if folder is None:
        detail = "a Hugging Face bucket is checked when it is used (status uses no network)"
        return {"status": "not checked", "detail": detail, "next": None}
    try:
        check_private(bucket)  # a folder that does not answer is not waited for: it records an outage
    except AccessError as exc:  # every save, search and read refuses it the same way, with exit 4
        return {"status": "refused", "detail": exc.message, "next": exc.next_step}
    if (down := outage.current(bucket)) is not None:
        detail = f"{down.error().detail}: saves stay pending"
        return {"status": "not checked", "detail": detail, "next": commands.line("search", "--online", "WORDS")}
    if not folder.is_dir():
        missing = FolderMissing(folder)  # told as a command that meets it tells it
        return {"status": "missing", "detail": f"{missing.detail}: saves stay pending", "next": missing.fix}
    return {"status": "ok", "detail": None, "next": None}


def damaged_state(bucket: str | None, cache: ProjectCache | None) -> list[StateDamage]:
    """agent-memory's own files that cannot be read as it writes them (a FIFO, a link, another user's, too large),
    each with the command that clears it: every command and hook skips them, and only here are they told."""
    files: list[tuple[Path, int]] = [(backoff.record(), backoff.MAX_RECORD), (outage.record(), outage.MAX_RECORD)]
    files += [(record, reminded.LIMIT) for record in reminded.records()]
    if cache is not None:
        files += [(cache.dir / STANDS, SMALL_RECORD), (cache.dir / "refresh.json", SMALL_RECORD)]
        files += [(cache.checksum_file, checksums.MAX_FILE), (cache.dir / DAMAGED, DAMAGED_MAX)]
    if bucket:
        files.append((catalog.index_file(bucket), catalog.INDEX_MAX))
    found: list[StateDamage] = []
    for file, limit in files:
        if (problem := damage(file, limit)) is not None:
            found.append({"file": str(file), "problem": f"{file} {problem.why}", "next": problem.next_step})
    return found


def _outage(bucket: str | None) -> Outage | None:
    found = outage.current(bucket) if bucket else None
    if found is None:
        return None
    return {
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(found.since)),
        "until": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(found.until)),
        "failures": found.failures,
        "detail": found.detail,
        "next": commands.line("search", "--online"),
    }


def _damaged_notes(cache: ProjectCache) -> list[DamagedNote]:
    """The cached notes of the project whose fields cannot be used, as `{"id", "problem"}` (see `notes.fields`):
    recorded when the pack is written, so status costs the same whatever the size of the memory."""
    try:
        return cache.damaged_notes()
    except OSError:  # a damaged pack that a read-only cache (a sandbox) cannot rebuild: the next search will
        return []
