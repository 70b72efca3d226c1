"""What one command (or one hook) resolves once and hands down: the configuration, the bucket, the project of its
folder, the time budget of its network calls, and the stores it opened.

Each is resolved when first asked for, so a command that never needs the bucket (`pending list`) never fails for
the lack of one, and never twice, so one command cannot read two configurations or spend two budgets.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import config as config_file
from .budget import Budget
from .config import projects
from .store import Store, open_store


class Context:
    """One command's view of this machine."""

    def __init__(
        self,
        *,
        budget: Budget | None = None,
        project: str | None = None,
        directory: str | os.PathLike[str] | None = None,
    ) -> None:
        self.budget = budget or Budget()
        self._project = project
        self._directory = directory
        self._config: dict[str, object] | None = None
        self._stores: dict[str, Store] = {}

    @property
    def config(self) -> dict[str, object]:
        """The configuration, loaded (and checked) once."""
        if self._config is None:
            self._config = config_file.load()
        return self._config

    @property
    def bucket(self) -> str:
        """The configured bucket URI, or NotSetUp with the command that fixes it."""
        return config_file.bucket(self.config)

    @property
    def project(self) -> str:
        """The project given to this command, else the one its folder is mapped to (NotSetUp if none)."""
        if self._project is None:
            self._project = self.mapping()["project"]
        return self._project

    def mapping(self) -> dict[str, str]:
        """`{"project", "root"}` of this command's folder (NotSetUp if it is not mapped)."""
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
        if uri not in self._stores:
            self._stores[uri] = open_store(uri, budget=self.budget)
        return self._stores[uri]
