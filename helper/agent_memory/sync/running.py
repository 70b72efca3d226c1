"""A sync of one runtime's memory: which folders and scopes, under the scope's lock, the bucket's new versions
learned, each folder brought in step (`engine`), the new versions planned in the outbox before anything else is
recorded, then uploaded within the command's budget.

The hooks use it cheaply: the SessionStart hook pulls (one question to the bucket, has it changed?, and none while
the bucket's feed follower shows nothing changed: `store.follow`); the Stop and
SessionEnd hooks push, and with nothing changed here they stop after one stat per file (`scopes.changed_here`),
before this module is loaded.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import agents
from ..clock import new_id
from ..config.context import Context
from ..errors import AgentMemoryError
from ..fsutil import locked, try_locked
from ..memory.origin import machine_name
from ..outbox import plans
from ..outbox.kinds import Outcome, damaged_error
from ..store.base import StoreError
from . import versions
from .engine import FolderSync, sync_folder
from .history import History
from .index import FolderIndex
from .scopes import Scope
from .uploads import SYNC

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncRefused, SyncUpload
    from ..outbox.shape import Display, Plan
    from ..store.follow import Watch
    from .codex_delivery import Delivery


class Run:
    """What a sync of some scopes did: each folder's pass, the uploads, and a store's error (the sync then went
    on with what this machine knows)."""

    def __init__(self) -> None:
        self.folders: list[FolderSync] = []
        self.uploads: list[SyncUpload] = []
        self.errors: list[str] = []
        self.busy: list[str] = []
        self.refused: list[SyncRefused] = []  # objects of the bucket refused now, and why


def _forget_gone(scope_folder: Path, places: list[Path]) -> None:
    """Forget the record of a Claude Code memory folder this scope no longer syncs (its checkout was unmapped)
    once the folder is gone too: it holds nothing to sync or lose, and its record would tell every session that it
    is gone. A record with a conflict is kept, to be told; a record without one is made again if the folder comes
    back (the first sync of a folder with no record loses nothing)."""
    kept = {str(FolderIndex(scope_folder, place).file) for place in places}
    try:
        entries = list(os.scandir(scope_folder / "folders"))
    except OSError:
        return
    for entry in entries:
        if not entry.name.endswith(".json") or entry.path in kept:
            continue
        index = FolderIndex.read(entry.path)
        if index is None or index.conflicts or os.path.lexists(index.folder):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


def sync(
    ctx: Context,
    chosen: list[Scope],
    *,
    push: bool,
    wait: float | None = None,
    only: set[str] | None = None,
    allow_deletes: bool = False,
    session: float | None = None,
    watch: Watch | None = None,
) -> Run:
    """Sync each scope (see the module's docstring); with `wait` seconds (a hook), a scope that another process
    keeps syncing longer than that is left to it; `allow_deletes`: the user confirmed many deletions at once;
    `session`: when a session started (POSIX time: its SessionStart pull), from which `sync status` counts what
    arrived; `watch`: the bucket's feed follower, which may tell that nothing changed there (the bucket is then not
    asked, and no store is opened)."""
    run = Run()
    machine = _Machine()
    for scope in chosen:
        lock = History.folder_of(ctx.bucket, scope.runtime, scope.scope) / "lock"
        with locked(lock) if wait is None else _waiting(lock, wait) as ours:
            if ours is False:
                run.busy.append(f"{scope.runtime}/{scope.scope}")
                continue
            history = History(ctx.bucket, scope.runtime, scope.scope)  # read under the lock: what it knows now
            known, reached = set(history.refused), True
            quiet = watch is not None and _quiet(ctx, watch, scope, history)
            try:
                if not quiet:
                    history.refresh(ctx.store)
            except StoreError as exc:
                run.errors.append(f"{ctx.bucket}: {exc.detail}")
                reached = False
            except AgentMemoryError as exc:  # the store refused to open (a folder store opened to others)
                run.errors.append(exc.message)
                reached = False
            run.refused += [{"path": name, "why": why} for name, why in history.refused.items() if name not in known]
            passes = []
            for place in scope.places:
                index = FolderIndex(history.folder, place)
                done = sync_folder(
                    history,
                    index,
                    push=push,
                    machine=machine,
                    only=only,
                    source=scope.source,
                    allow_deletes=allow_deletes,
                )
                passes.append((done, index))
            new = [version for done, _index in passes for version in done.new]
            key = _plan(ctx, scope, new) if new else None  # kept in the outbox before anything records it as sent
            history.save()
            for done, index in passes:
                if session is not None:
                    index.session_at = session
                for path, found in done.arrived.items():
                    index.arrive(path, found)
                if done.pulled:
                    name = agents.runtime(scope.runtime).MEMORY_INDEX
                    before = {name: done.before[name]} if name in done.before else {}
                    came = {path: done.arrived[path] for path in done.pulled if path in done.arrived}
                    index.recent = {"at": time.time(), "pulled": done.pulled, "before": before, "from": came}
                index.save(synced=reached)
                run.folders.append(done)
            if scope.source and reached and only is None and not quiet:
                _deliver_codex(ctx, run, machine, history.updated_at)
            if scope.runtime == "claude" and only is None and wait is None:  # `sync now`, which looks at them all
                _forget_gone(history.folder, scope.places + scope.unnamed)
        if key is not None:
            run.uploads.append(_deliver(ctx, key))
    return run


def _quiet(ctx: Context, watch: Watch, scope: Scope, history: History) -> bool:
    """Whether the feed follower tells that nothing this scope's pull depends on changed since its last refresh
    began: its own folder of the bucket, and for Codex every machine's (delivered here), once they were delivered."""
    if scope.source:
        from . import codex_delivery  # Codex's alone: a pull of Claude Code's memory does not load it

        record = codex_delivery.Record(ctx.bucket)
        if not record.migrated or record.listed_at is None or record.listed_at != history.updated_at:
            return False  # the last delivery did not list what the last refresh learned
        return watch.quiet([f"{versions.PREFIX}/{scope.runtime}"], history.checked_at)
    return watch.quiet([versions.prefix(scope.runtime, scope.scope)], history.checked_at)


def _deliver_codex(ctx: Context, run: Run, machine: Callable[[], str], stamp: str | None) -> None:
    """Other machines' Codex memories into Codex's extension folder (the old layout moved over first, once); the
    caller holds this machine's Codex scope lock."""
    from . import codex_delivery, codex_migration  # Codex's alone: a sync of Claude Code's memory does not load them

    migrate: list[Delivery] | None = None
    covered: dict[str, str] | None = None
    if not codex_delivery.Record(ctx.bucket).migrated:
        migrate, covered = [], {}
        if codex_migration.pending(ctx.bucket):
            migrate, covered = codex_migration.lines_from_elsewhere(ctx.bucket, machine())
    try:
        done = codex_delivery.deliver(ctx.store, ctx.bucket, stamp=stamp, migrate_from=migrate, baseline=covered)
        run.folders.append(done)
    except StoreError as exc:
        run.errors.append(f"{ctx.bucket}: {exc.detail}")


@contextlib.contextmanager
def _waiting(lock: Path, seconds: float) -> Iterator[bool]:
    """Hold `lock`, waiting up to `seconds` for another process to release it; yields False if it did not (two
    sessions starting at once, such as Codex's memory consolidation beside the user's session, both pull)."""
    end = time.monotonic() + seconds
    while True:
        with try_locked(lock) as ours:
            if ours or time.monotonic() >= end:
                yield ours
                return
        time.sleep(0.1)


def _plan(ctx: Context, scope: Scope, new: list[versions.Version]) -> str:
    runtime, name = scope.runtime, scope.scope
    objects = [(versions.object_path(runtime, name, v), versions.encode(runtime, name, v)) for v in new]
    display: Display = {"agent": scope.runtime, "scope": scope.scope, "files": sorted({v.path for v in new})}
    from ..outbox import writing  # the write path, loaded only when a new version is to be uploaded

    key = new_id()
    writing.create(SYNC.name, key, ctx.bucket, objects, display)
    return key


def _deliver(ctx: Context, key: str) -> SyncUpload:
    def known(status: str, message: str, next_step: str | None) -> SyncUpload:  # what is known without its plan
        return {
            "id": key,
            "agent": None,
            "bucket": ctx.bucket,
            "files": [],
            "status": status,
            "message": message,
            "next": next_step,
        }

    from ..outbox import delivery  # the write path: a sync that made no new version never loads it

    try:
        outcome = delivery.deliver(SYNC, key, ctx)
    except plans.Damaged as exc:  # shown by `pending`, never skipped
        damaged = damaged_error(key, str(exc))
        return known("pending", damaged.message, damaged.next_step)
    except AgentMemoryError as exc:
        gone: Plan = {"id": key, "bucket": ctx.bucket}  # type: ignore[typeddict-item]  # all a result reads of it
        plan = delivery.peek(plans.op_name(SYNC.name, key)) or gone
        outcome = Outcome(plan, done=False, reason="auth", detail=exc.message.rstrip("."), fix=exc.next_step)
    if outcome is None:
        return known("saved", "", None)
    return SYNC.result(outcome)


class _Machine:
    """This machine's name, found when a sync first needs it (a new version records it), then kept for the sync: it
    checks the host name with the secret guard, whose patterns a sync with nothing new would compile for nothing."""

    def __init__(self) -> None:
        self.name: str | None = None

    def __call__(self) -> str:
        if self.name is None:
            self.name = _machine()
        return self.name


def _machine() -> str:
    try:
        return machine_name(keep=True) or "unknown"
    except AgentMemoryError:
        return "unknown"
