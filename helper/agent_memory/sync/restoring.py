"""A synced file's history, and bringing back any of its versions: the file is found by its path (in the runtime's
folder, or relative to it), its versions listed from what this machine knows of the bucket, and a restore writes the
chosen text here and pushes it as a new version (nothing is ever removed from the bucket)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from .. import agents, commands, guard, names
from ..config.context import Context
from ..errors import AgentMemoryError, UsageError
from ..fsutil import locked
from ..store.base import StoreError
from . import folders, settings, showing, versions
from .folders import Moved
from .history import History
from .index import FolderIndex
from .running import Run, Scope, scopes, sync
from .versions import Refused

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SyncDiff, SyncVersion


class Found:
    """A synced file: its runtime's scope, the folder it is in here, and its path in that folder."""

    def __init__(self, scope: Scope, folder: Path, path: str, history: History) -> None:
        self.scope = scope
        self.folder = folder
        self.path = path
        self.history = history  # the scope's versions as this machine knows them


def find_all(ctx: Context, file: str, runtimes: list[str]) -> list[Found]:
    """Every runtime of `runtimes` whose memory has `file` here, each with its first match (a path inside one of its
    memory folders, or a path relative to one that its versions or the folder know), in the order of `runtimes`:
    from this machine alone, no network."""
    return [found for runtime in runtimes if (found := _first(ctx, file, runtime)) is not None]


def _first(ctx: Context, file: str, runtime: str) -> Found | None:
    given = Path(file).expanduser()
    absolute = Path(os.path.abspath(given))
    relative = not given.is_absolute() and _valid(file)
    for scope in scopes(ctx, runtime, ctx.folder):
        history = History(ctx.bucket, scope.runtime, scope.scope)
        for folder in scope.places:
            path = _inside(absolute, folder)
            if path is None and relative and (file in history.paths() or (folder / file).is_file()):
                path = file
            if path is not None:
                return Found(scope, folder, path, history)
    return None


def find(
    ctx: Context, file: str, runtimes: list[str], *, ask_bucket: bool = False, known: list[Found] | None = None
) -> Found:
    """The synced file that `file` names: a path inside a runtime's memory folder, or a path relative to it
    (`MEMORY.md`); UsageError if no folder of `runtimes` has it. `known`: what `find_all` gave for them already.

    With `ask_bucket`, a file of which this machine knows no version (its sync is off here, or the file is new
    here) is looked up in the bucket too, one listing of that file's folder a scope: the versions other machines
    synced. A file with versions known here costs no network, as before."""
    failures: list[str] = []  # the bucket could not be asked: said in the refusal
    for found in find_all(ctx, file, runtimes) if known is None else known:
        if ask_bucket and not found.history.of(found.path):
            _learn(ctx, found.scope, found.path, failures)
            found.history = History(ctx.bucket, found.scope.runtime, found.scope.scope)  # with what it learned
        return found
    relative = not Path(file).expanduser().is_absolute() and _valid(file)
    if ask_bucket and relative:
        for runtime in runtimes:
            for scope in scopes(ctx, runtime, ctx.folder):
                if scope.places and _learn(ctx, scope, file, failures):
                    return Found(scope, scope.places[0], file, History(ctx.bucket, scope.runtime, scope.scope))
    raise _left_out(ctx, file, runtimes) or _unknown(ctx, file, runtimes, failures)


def _left_out(ctx: Context, file: str, runtimes: list[str]) -> UsageError | None:
    """The refusal of a file that is in a runtime's memory folder but whose path sync never takes (hidden, too
    deep, too long), saying so; None if no folder has it."""
    given = Path(file).expanduser()
    for runtime in runtimes:
        for scope in scopes(ctx, runtime, ctx.folder):
            for folder in scope.places:
                place = given if given.is_absolute() else folder / given
                relative = os.path.relpath(os.path.abspath(place), folder)
                if relative.startswith("..") or not os.path.lexists(place):
                    continue
                try:
                    versions.check_path(Path(relative).as_posix())
                except Refused as exc:
                    return UsageError(
                        f"{guard.redact(file)} is not synced: {exc}.",
                        next_step=f"{commands.line('sync', 'status')} (lists the synced folders)",
                    )
    return None


def _learn(ctx: Context, scope: Scope, path: str, failures: list[str]) -> bool:
    """Learn the versions of `path` the bucket has for `scope` (under the scope's lock, as a sync); whether it
    has any. A bucket that cannot be asked is added to `failures`."""
    try:
        with locked(History.folder_of(ctx.bucket, scope.runtime, scope.scope) / "lock"):
            history = History(ctx.bucket, scope.runtime, scope.scope)  # read under the lock, as a sync does
            history.learn(ctx.store, path)
    except StoreError as exc:
        failures.append(exc.detail)
    except AgentMemoryError as exc:  # the store refused to open (a folder store opened to others)
        failures.append(exc.message.rstrip("."))
    return bool(History(ctx.bucket, scope.runtime, scope.scope).of(path))


def _unknown(ctx: Context, file: str, runtimes: list[str], failures: list[str]) -> UsageError:
    """The refusal of a file that no folder of `runtimes` has: when their sync is off on this machine, that is
    the reason, and turning it on the fix."""
    asked = f"; the bucket could not be asked what other machines synced ({failures[0]})" if failures else ""
    if runtimes and not set(runtimes) & set(settings.enabled(ctx.config)):
        which = runtimes[0] if len(runtimes) == 1 else "both"
        return UsageError(
            f"The sync of {agents.own_memory(which)} is off on this machine, and no other machine synced {file} "
            f"for this folder{asked}.",
            next_step=commands.line("sync", "enable", "--agent", which),
        )
    whose = " or ".join(f"{agents.runtime(name).LABEL}'s" for name in runtimes)
    return UsageError(
        f"{file} is not a file of {whose} synced memory for this folder{asked}.",
        next_step=f"{commands.line('sync', 'status')} (lists the synced folders)",
    )


def _inside(path: Path, folder: Path) -> str | None:
    try:
        relative = path.relative_to(folder).as_posix()
    except ValueError:
        try:
            relative = path.relative_to(folder.resolve()).as_posix()
        except (ValueError, OSError):
            return None
    return relative if _valid(relative) else None


def _valid(path: str) -> bool:
    try:
        versions.check_path(path)
    except Refused:
        return False
    return True


def versions_of(ctx: Context, found: Found) -> tuple[list[SyncVersion], str | None, list[str]]:
    """Every version of the file this machine knows (oldest id first), the one the file here matches (None: none
    yet), and where the other texts of a conflict are kept."""
    history = History(ctx.bucket, found.scope.runtime, found.scope.scope)
    heads = set(history.heads(found.path))
    index = FolderIndex(history.folder, found.folder)
    listed: list[SyncVersion] = []
    for meta in history.of(found.path):
        text = showing.text_of(history, meta["id"])
        listed.append(
            {
                "id": meta["id"],
                "bases": meta["bases"],
                "machine": meta["machine"],
                "time": meta["time"],
                "deleted": meta["hash"] is None,
                "head": meta["id"] in heads,
                "text": None if text is None else text.lines,
                "more_lines": 0 if text is None else text.more,
            }
        )
    here = (index.files.get(found.path) or {}).get("version")
    kept = (index.conflicts.get(found.path) or {}).get("kept", [])
    return listed, here, kept  # type: ignore[return-value]  # this machine's own index: a version id, kept paths


def differences(ctx: Context, found: Found, chosen: list[str]) -> list[SyncDiff]:
    """The unified diffs between versions of the file: the two `chosen`, or with none each version against the one
    it was based on (see `showing.pairs`); UsageError for ids that are not the file's."""
    history = History(ctx.bucket, found.scope.runtime, found.scope.scope)
    found_diffs: list[SyncDiff] = []
    for older, newer in showing.pairs(history, found.path, chosen):
        shown = showing.diff(history, found.path, older, newer)
        found_diffs.append({"older": older, "newer": newer, "lines": shown.lines, "more_lines": shown.more})
    return found_diffs


def not_synced(ctx: Context, found: Found) -> str | None:
    """Why sync leaves the file out (a runtime's working file, a secret in its name or text, a link, too large,
    not text), None if it does not."""
    runtime, path = found.scope.runtime, found.path
    if folders.ignored(runtime, path):
        return f"it is one of {agents.runtime(runtime).LABEL}'s own working files, not a memory"
    if guard.scan(path):
        return "its name looks like it holds a secret: it stays on this machine only"
    index = FolderIndex(History.folder_of(ctx.bucket, runtime, found.scope.scope), found.folder)
    if path in index.held:
        return "it looks like it holds a secret: it stays on this machine only"
    place = found.folder / path
    if place.is_symlink() or (os.path.lexists(place) and not place.is_file()):
        return "it is a link or not a regular file: sync never follows a link"
    try:
        folders.read(found.folder, path)
    except Refused as exc:
        return str(exc)
    except OSError:  # no file here (yet): nothing keeps it from the next sync
        return None
    return None


def whose(ctx: Context, file: str, runtimes: list[str], version_id: str) -> Found:
    """The synced file `file` of the runtime whose versions of it include `version_id`: a file both runtimes have
    (`MEMORY.md`) is restored from the memory its version id comes from. The first runtime's if none knows it."""
    known = find_all(ctx, file, runtimes)
    for found in known:
        meta = found.history.versions.get(version_id)
        if meta is not None and meta["path"] == found.path:
            return found
    return find(ctx, file, runtimes, known=known)


def restore(ctx: Context, found: Found, version_id: str) -> Run:
    """Write version `version_id` of the file here and push it as a new version; what was here and not pushed is
    pushed first, so no byte of it is lost. UsageError if the version is not one of the file's."""
    if not names.is_id(version_id):  # refused before anything is synced
        again = commands.line("sync", "history", found.path, "--agent", found.scope.runtime)
        raise UsageError(f"{version_id!r} is not a version id.", next_step=again)
    chosen = [found.scope]
    first = sync(ctx, chosen, push=True, only={found.path})  # learns the bucket's versions, pushes what is here
    history = History(ctx.bucket, found.scope.runtime, found.scope.scope)
    meta = history.versions.get(version_id)
    if meta is None or meta["path"] != found.path:
        raise UsageError(
            f"{version_id} is not a version of {found.path} in {agents.own_memory(found.scope.runtime)}.",
            next_step=commands.line("sync", "history", found.path, "--agent", found.scope.runtime),
        )
    text = history.text(version_id)
    _put(found, version_id, text)
    second = sync(ctx, chosen, push=True, only={found.path})
    second.errors = first.errors + second.errors
    return second


def _put(found: Found, version_id: str, text: str | None) -> None:
    """Write the restored text over the file here, never through a link nor over what is not a regular file (an
    error then says what stands there, and how to restore once it is moved aside)."""
    place = found.folder / found.path
    again = commands.line("sync", "restore", found.path, "--version", version_id, "--agent", found.scope.runtime)
    try:
        current = folders.read(found.folder, found.path).hash if place.is_file() else None
        folders.write(found.folder, found.path, text, current)
    except Refused as exc:
        if place.is_symlink():  # removing the link keeps what it points to
            fix = f"{shlex.join(['rm', '--', str(place)])} && {again}"
        else:
            fix = f"move aside what stands at {place}, then: {again}"
        raise AgentMemoryError(
            f"{found.path} was not restored: {exc} (in {found.folder}): sync never writes through a link or over "
            "what is not a regular file.",
            next_step=fix,
        ) from None
    except Moved:
        raise AgentMemoryError(
            f"{found.path} was not restored: the agent changed it while it was being restored (its text is kept).",
            next_step=again,
        ) from None
