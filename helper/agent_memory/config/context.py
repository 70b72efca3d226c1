"""What one command resolves once and hands down: the configuration, the bucket, the project of its folder, the time
budget of its network calls, and the stores it opened.

`entry` makes one per command and hands it to the command's handler. Each part is resolved when first asked for,
so a command that never needs the bucket (`pending list`) never fails for the lack of one, and never twice, so one
command cannot read two configurations or spend two budgets.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..store import outage
from ..store.base import Store
from ..store.bucket import open_store
from ..store.budget import Budget
from ..store.outage import OutageStore
from . import projects, settings

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Mapping
    from .shape import Config


class Context:
    """One command's view of this machine."""

    def __init__(self, *, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self._project: str | None = None
        self._directory: str | os.PathLike[str] | None = None
        self._config: Config | None = None
        self._stores: dict[str, Store] = {}
        self.online = False  # try the bucket even during an outage (`--online`, an explicit retry): see store.outage
        self.hook = False  # a hook: a store in an outage is probed where no session waits (see store.probe)

    def use(self, *, project: str | None = None, directory: str | os.PathLike[str] | None = None) -> None:
        """Work for `project` (else the folder's) in `directory` (else the working folder): bootstrap's options, or
        the folder a hook's event names."""
        self._project, self._directory = project, directory

    def go_online(self) -> None:
        """Try the bucket even if it did not answer a moment ago (`--online`, an explicit retry): see store.outage."""
        self.online = True
        self._stores = {uri: store for uri, store in self._stores.items() if not isinstance(store, OutageStore)}

    def reload(self) -> None:
        """Read the configuration again when next asked: this command has just changed it."""
        self._config = None

    @property
    def config(self) -> Config:
        """The configuration, loaded (and checked) once."""
        if self._config is None:
            self._config = settings.load()
        return self._config

    @property
    def bucket(self) -> str:
        """The configured bucket URI, or NotSetUp with the command that fixes it."""
        return settings.bucket(self.config)

    @property
    def project(self) -> str:
        """The project given to this command, else the one its folder is mapped to (NotSetUp if none)."""
        if self._project is None:
            self._project = self.mapping()["project"]
        return self._project

    def mapping(self) -> Mapping:
        """`{"project", "root", "found", "via"}` of this command's folder (NotSetUp if it is not mapped)."""
        return projects.resolve(self._directory, config=self.config)

    @property
    def folder(self) -> Path:
        """The folder this command runs for."""
        return projects.canonical(self._directory if self._directory is not None else Path.cwd())

    @property
    def store(self) -> Store:
        """The configured bucket's store."""
        return self.store_for(self.bucket)

    def store_for(self, uri: str) -> Store:
        """The store of `uri` (a pending upload keeps the bucket it was saved for), opened once per command."""
        opened = self._stores.get(uri)
        # a hook's store that failed a moment ago (its push) is not asked again by its retry: one wait per hook
        if self.hook and opened is not None and not isinstance(opened, OutageStore) and (found := outage.current(uri)):
            if not self.budget.abandoned:
                opened.close()
            self._stores[uri] = OutageStore(uri, found)
        if uri not in self._stores:
            self._stores[uri] = open_store(uri, budget=self.budget, online=self.online)
        return self._stores[uri]

    def close(self) -> None:
        """Close the stores this command opened, unless a network call is still blocked in one (the process then
        ends at once, see `entry`)."""
        if not self.budget.abandoned:
            for store in self._stores.values():
                store.close()
        self._stores.clear()
