"""What a sync of one runtime's memory covers, and whether anything changed here since: the scopes (a project of
Claude Code's, this machine's Codex memories) and their folders, and one stat per file against each folder's record.

The Stop and SessionEnd hooks ask `changed_here` at every turn and, with nothing changed, stop there: this module loads
none of the sync itself (`running`: the bucket, the merge, the outbox), nor Codex's delivery.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config import projects
from ..config.context import Context
from ..contents import sha256
from ..errors import NotSetUp
from ..memory.origin import machine_id
from . import folders
from .history import History
from .index import HERE, FolderIndex

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..config.shape import Config

SCOPE_PREFIX = "machine-"  # this machine's scope of Codex memories (`codex_scope`); every machine's starts so


class Scope:
    """One runtime's files for one scope (a project, or this machine's Codex memories), the folders they go to here
    (`places`), where each folder's place came from (`sources`), and the folders the runtime uses that are not synced
    until the user names them (`unnamed`: outside the runtime's own folder); a `source` scope's folders are only
    read (Codex's, see `codex_delivery`)."""

    def __init__(
        self,
        runtime: str,
        scope: str,
        places: list[Path],
        sources: dict[Path, str] | None = None,
        *,
        source: bool = False,
    ) -> None:
        self.runtime = runtime
        self.scope = scope
        self.places = places
        self.sources = sources or {}
        self.unnamed: list[Path] = []
        self.source = source


def scopes(ctx: Context, runtime: str, directory: str | os.PathLike[str] | None = None) -> list[Scope]:
    """The scopes of `runtime` to sync: this machine's Codex memories (pushed, never written: other machines' reach
    Codex's extension folder); Claude Code's project of `directory` (with every checkout mapped to it here), or,
    without `directory`, every project mapped here."""
    if runtime == "codex":
        folder = folders.codex_folder()
        return [_scope(ctx.config, "codex", codex_scope(), [(folder, "Codex's folder (CODEX_HOME)")], True)]
    config = ctx.config
    if directory is not None:
        try:
            project = projects.resolve(directory, config=config)["project"]
        except NotSetUp:
            return []
        places = folders.claude_places(config, project)
        here = folders.claude_place_of(directory)  # a worktree or clone found by its origin, not mapped itself
        return [_scope(config, "claude", project, places + ([here] if here[0] not in dict(places) else []))]
    names = sorted(set(config.get("projects", {}).values()))
    return [_scope(config, "claude", name, folders.claude_places(config, name)) for name in names]


def _scope(config: Config, runtime: str, name: str, places: list[tuple[Path, str]], source: bool = False) -> Scope:
    """A scope whose folders outside the runtime's own folder are left out until the user names them."""
    scope = Scope(runtime, name, [], dict(places), source=source)
    for folder, _source in places:
        (scope.places if folders.allowed(config, runtime, folder) else scope.unnamed).append(folder)
    return scope


def codex_scope() -> str:
    """This machine's scope of Codex memories in the bucket: from its random id, so two homes on one host differ."""
    return SCOPE_PREFIX + sha256(f"codex memories\n{machine_id()}".encode())[:16]


def changed_here(ctx: Context, scope: Scope) -> bool:
    """Whether any file of the scope's folders differs from its record (one stat per file; no network)."""
    history_folder = History.folder_of(ctx.bucket, scope.runtime, scope.scope)
    for place in scope.places:
        index = FolderIndex(history_folder, place)
        known = {path: entry for path, entry in index.files.items() if entry.get("hash") is not None}
        known.update(index.held)  # a file the guard keeps here is unchanged while it stays as it was
        local, skipped, blocked = folders.scan(scope.runtime, place, known)
        if blocked != index.blocked:
            return True  # a folder went away or came back: told by a sync, which deletes nothing for it
        # a file whose deletion is held is unchanged while it stays away: the hooks do not ask again each turn
        away = {path for path, why in index.holding.items() if why == HERE}
        expected = {path for path in known if folders.under(path, blocked) is None} - set(skipped) - away
        if set(local) != expected:
            return True
        if any(local[path].hash != known[path].get("hash") for path in local):
            return True
    return False
