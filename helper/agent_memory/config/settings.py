"""The machine's configuration file: which bucket, which directories map to which projects.

Every change goes through `editing()` or `update()`: load, change and save happen under a lock (a file beside
config.json), and the save is atomic, so concurrent commands (several agents mapping projects at once) never lose
an update and a reader never sees half a file.

The file is the user's to edit, so it is read as hostile data: whatever is not the shape agent-memory writes is
an error that names the file, the key and the repair, for every command that reads it (never a crash later).
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath

from .. import commands, names, paths
from ..errors import AgentMemoryError, NotSetUp
from ..fsutil import UnsafeLocalFile, locked, read_own, write_json_atomic

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import Config

MAX_BYTES = 4 * 1024 * 1024  # what agent-memory writes is a few kilobytes, even with hundreds of projects


def load() -> Config:
    """The configuration, `{}` when there is none yet; AgentMemoryError if it is not what agent-memory writes."""
    config = _read()
    check(config)
    return config  # type: ignore[return-value]  # check() has just held every key of Config to its shape


def check(config: dict[str, object]) -> None:
    """AgentMemoryError naming the key and its repair unless every key agent-memory knows has the shape it writes.

    Other keys are left alone: a newer version of the helper may have written them.
    """
    file = paths.config_file()
    if "bucket" in config and not (isinstance(config["bucket"], str) and names.is_bucket_uri(config["bucket"])):
        raise _damaged(
            f'its "bucket" is {_shown(config["bucket"])}, not a bucket URI (hf://buckets/OWNER/NAME or file:///PATH)',
            f"{commands.line('config', 'set', 'bucket', 'OWNER/NAME')} (it replaces the damaged value)",
        )
    projects = config.get("projects", {})
    if not isinstance(projects, dict):
        raise _damaged(
            f'its "projects" is {_shown(projects)}, not an object that maps folders to project names',
            f'edit {file}: remove "projects", then map each folder again with '
            + commands.line("project", "map", "NAME", "DIR"),
        )
    for root, name in projects.items():
        problem = (not _absolute(root) and "is not an absolute path") or (
            not _project_name(name) and f"maps to {_shown(name)}, which is not a project name"
        )
        if problem:
            raise _damaged(
                f'the folder {_shown(root)} in its "projects" {problem}',
                f'edit {file}: fix or remove the entry {_shown(root)} of "projects"',
            )
    core_skill = config.get("core_skill", {})
    if not (
        isinstance(core_skill, dict)
        and isinstance(core_skill.get("version", ""), str)
        and isinstance(core_skill.get("space_revision"), (str, type(None)))
    ):
        raise _damaged(
            'its "core_skill" is not the record of the installed memory skill (an object with a text "version")',
            f'edit {file}: remove "core_skill" ({commands.line("bootstrap")} records it again)',
        )
    created = config.get("instructions_created", [])
    strays = [item for item in created if not isinstance(item, str)] if isinstance(created, list) else []
    if not isinstance(created, list) or strays:
        what = f"holds {_shown(strays[0])}" if strays else f"is {_shown(created)}"
        raise _damaged(
            f'its "instructions_created" {what}, where a list of file paths belongs',
            f'edit {file}: remove "instructions_created" (it only lists the instruction files that bootstrap created)',
        )


class editing:  # named as a function: `with editing() as config:`
    """The configuration, to change in place; saved atomically when the block ends without an error.

    The lock is held from the load to the save: two editors never both start from the same old file. (A class, not
    a `contextlib` generator, which every command would load with this module.)
    """

    def __enter__(self) -> Config:
        self.file = paths.config_file()
        self.lock = locked(_lock(self.file))
        self.lock.__enter__()
        try:
            self.config = load()
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self.config

    def __exit__(self, error: type[BaseException] | None, *exc: object) -> None:
        try:
            if error is None:
                write_json_atomic(self.file, self.config)
        finally:
            self.lock.__exit__(None, None, None)


def update(**changes: object) -> dict[str, object]:
    """Change top-level keys (under the lock); returns the values they had before (None: not set).

    Only the result is checked, not the keys it replaces: `config set bucket` repairs a damaged bucket.
    """
    file = paths.config_file()
    with locked(_lock(file)):
        config = _read()
        before = {key: config.get(key) for key in changes}
        config.update(changes)
        check(config)
        write_json_atomic(file, config)
    return before


def bucket(config: Config | None = None) -> str:
    """The configured bucket URI, or NotSetUp with the command that fixes it."""
    value = (config if config is not None else load()).get("bucket")
    if not value:
        raise NotSetUp(
            "No bucket is configured on this machine.",
            next_step=f"{commands.line('bootstrap', '--project', 'NAME')} "
            f"(or: {commands.line('config', 'set', 'bucket', 'OWNER/NAME')})",
        )
    return value


def _lock(file: Path) -> Path:
    return file.with_name(file.name + ".lock")


def _read() -> dict[str, object]:
    """The file's object, unchecked beyond being one; `{}` when there is no file."""

    file = paths.config_file()
    try:  # never waits on a FIFO, never follows a link, never reads more than MAX_BYTES
        raw = read_own(file, MAX_BYTES)
    except FileNotFoundError:
        return {}
    except UnsafeLocalFile as exc:
        if exc.oversized:
            too_large = f"is larger than {MAX_BYTES // (1024 * 1024)} MiB, far more than agent-memory writes"
            raise _unusable(too_large) from None
        raise _unusable(f"cannot be read (it {exc.why}: agent-memory reads only its own regular file there)") from exc
    except OSError as exc:
        raise _unusable(f"cannot be read ({exc.strerror or exc})") from exc
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested beyond what Python parses
        raise _unusable(f"is not valid JSON ({str(exc)[:200]})") from exc
    if not isinstance(value, dict):
        raise _unusable(f"does not hold a JSON object (it holds {_shown(value)})")
    return value


def _absolute(root: str) -> bool:

    return bool(root) and "\x00" not in root and PurePath(root).is_absolute()


def _project_name(value: object) -> bool:
    return isinstance(value, str) and names.is_project(value)


def _shown(value: object) -> str:
    """`value` for a message: JSON, ASCII only (no control or bidi character reaches a terminal), and short."""

    if isinstance(value, (dict, list)):
        what, unit = ("an object", "key") if isinstance(value, dict) else ("a list", "item")
        return f"{what} of {len(value)} {unit}{'' if len(value) == 1 else 's'}"
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:76] + "…" + text[-1]


def _unusable(problem: str) -> AgentMemoryError:
    file = paths.config_file()
    return AgentMemoryError(
        f"The configuration file {file} {problem}.",
        next_step=f"fix or remove {file} ({commands.line('bootstrap', '--project', 'NAME')} writes a new one), "
        f"then run {commands.line('config', 'show')}",
    )


def _damaged(problem: str, next_step: str) -> AgentMemoryError:
    return AgentMemoryError(f"The configuration file {paths.config_file()} is damaged: {problem}.", next_step=next_step)
