"""The configuration file's shape, as `settings.check` holds it: for the type checker only (no command loads this
module, nor `typing` with it).

Every key is optional: a new machine has none. Keys that `check` does not hold are typed `object`, and their
readers test their shape where they read them.
"""

from __future__ import annotations

from typing import TypedDict


class CoreSkill(TypedDict, total=False):
    """The memory skill that bootstrap installed: its version, and the Space revision it came from."""

    version: str
    space_revision: str | None


class Config(TypedDict, total=False):
    """`config.json`: the bucket, the folders mapped to projects, and what bootstrap recorded."""

    bucket: str
    projects: dict[str, str]  # canonical absolute folder -> project name
    core_skill: CoreSkill
    instructions_created: list[str]  # the instruction files bootstrap created (uninstall deletes only those)
    sync: object  # {"claude": true, ...}: not held by `check`; sync.settings reads a value that is not `true` as off
    command_link: object  # the link bootstrap made: not held by `check`; compared with the link's path
