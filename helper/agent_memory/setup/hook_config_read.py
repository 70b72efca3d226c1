"""The reading half of the hook configuration pair (`hook_config_write` edits; `status` loads only this half).

The entries of agent-memory in a runtime's hook file: the one shape install writes, which entries are ours,
and what state our hooks are in there (`status` reports it). Editing the file byte for byte is
`hook_config_write`'s.

Codex reads `$CODEX_HOME/hooks.json`, Claude Code `$CLAUDE_CONFIG_DIR/settings.json`; both hold
`{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}`. A file that does not
parse, or whose `hooks` do not have that shape, is refused as it is.

What install writes, and so all that remove takes out, has exactly one shape: a group `{"hooks": [HANDLER]}`
holding `{"type": "command", "command": "... agent-memory ... hook EVENT --agent RUNTIME", "timeout": N}` with
the timeout of that event. Any other entry that runs our hook command is the user's own: it is never changed or
removed, and one that runs the current command counts as installed (and keeps us from adding a second).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from .. import agents, commands
from ..errors import AgentMemoryError
from ..fsutil import open_own
from . import agent_files_read, sandbox_consent_read
from .command import guarded, helper_command

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..contract import HookFile
    from .shape import HookSettings

INSTALLED, OWN, OUTDATED, OWN_OUTDATED, MISSING = (
    "installed",
    "installed (your own entry)",
    "outdated",
    "outdated (your own entry)",
    "missing",
)
PROJECT_SETTINGS = ("settings.json", "settings.local.json")  # Claude Code's, in a project's .claude folder
PROJECT_SETTINGS_MAX = 1 << 20  # bytes: a settings file any larger is not read


def hooks_file(runtime: str) -> Path:
    """The file that holds `runtime`'s user-level hooks."""
    file: Path = agents.runtime(runtime).hooks_file()  # (the runtime's module: typed as it is)
    return file


def status(agent: str = "both") -> list[HookFile]:
    """For each runtime: its hook file, the state of each of our events, and what the user has to know."""
    found: list[HookFile] = []
    helper = helper_command()  # looked up once for every runtime and event
    for runtime in agents.selected(agent):
        try:
            found.append(report(runtime, read(hooks_file(runtime)), helper))
        except AgentMemoryError as exc:
            found.append(
                {
                    "agent": runtime,
                    "file": str(hooks_file(runtime)),
                    "state": "unreadable",
                    "events": {},
                    "note": exc.message,
                }
            )
    return found


# -- recognising entries ------------------------------------------------------------------------------------


def command_line(module: ModuleType, helper: str, argument: str) -> str:
    """The command line of our hook for `argument`, silent once the helper is gone."""
    return guarded(module.hook_command(helper, argument))


def runs_this_helper(commands: list[str], guarded_line: str, line: str) -> bool:
    """Whether one of the user's own `commands` runs this helper's hook: our `guarded_line`, or the same `line`
    without the guard."""
    return guarded_line in commands or line in commands


def groups_of(settings: HookSettings, event: str) -> list[dict[str, object]]:
    return (settings.get("hooks") or {}).get(event) or []


def _handlers(group: dict[str, object]) -> list[object]:
    handlers = group.get("hooks")
    return handlers if isinstance(handlers, list) else []


def _runs_our_hook(handler: object, runtime: str, argument: str) -> bool:
    """Whether `handler` runs `agent-memory hook ARGUMENT --agent RUNTIME`, from whichever helper."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return (
        isinstance(command, str)
        and command.endswith(f" hook {argument} --agent {runtime}")
        and ("agent-memory" in command or "agent_memory" in command)
    )


def _is_our_group(group: dict[str, object], runtime: str, argument: str, timeout: int) -> bool:
    """Whether `group` has exactly the shape install writes (any helper path): only such a group is ours."""
    handlers = _handlers(group)
    if set(group) != {"hooks"} or len(handlers) != 1 or not _runs_our_hook(handlers[0], runtime, argument):
        return False
    handler = handlers[0]
    return (
        isinstance(handler, dict)  # (as `_runs_our_hook` has just held)
        and set(handler) == {"type", "command", "timeout"}
        and handler["type"] == "command"
        and type(handler["timeout"]) is int
        and handler["timeout"] == timeout
    )


def our_groups(groups: list[dict[str, object]], runtime: str, argument: str, timeout: int) -> list[int]:
    return [i for i, group in enumerate(groups) if _is_our_group(group, runtime, argument, timeout)]


def command_of(group: dict[str, object]) -> object:
    """The command of a group of ours (`_is_our_group`): its one handler's."""
    handler = _handlers(group)[0]
    return handler.get("command") if isinstance(handler, dict) else None


def own_commands(groups: list[dict[str, object]], runtime: str, argument: str, timeout: int) -> list[str]:
    """The commands of the user's own entries that run our hook: any handler of it outside a group of ours."""
    return [
        handler["command"]
        for group in groups
        if not _is_our_group(group, runtime, argument, timeout)
        for handler in _handlers(group)
        if isinstance(handler, dict) and _runs_our_hook(handler, runtime, argument)
    ]


# -- reading and reporting -----------------------------------------------------------------------------------


def report(runtime: str, settings: HookSettings, helper: str) -> HookFile:
    """The state of `runtime`'s hooks in its `settings`, for the helper that `helper` (`helper_command()`) runs."""
    module = agents.runtime(runtime)
    file = hooks_file(runtime)
    events: dict[str, str] = {}
    commands_of: dict[str, str] = {}
    for event, argument, timeout in module.HOOKS:
        command = commands_of[event] = command_line(module, helper, argument)
        groups = groups_of(settings, event)
        ours = [command_of(groups[i]) for i in our_groups(groups, runtime, argument, timeout)]
        own = own_commands(groups, runtime, argument, timeout)
        if command in ours:
            events[event] = INSTALLED
        elif runs_this_helper(own, command, module.hook_command(helper, argument)):
            events[event] = OWN
        elif ours:
            events[event] = OUTDATED
        else:
            events[event] = OWN_OUTDATED if own else MISSING
    states = set(events.values())
    if states <= {INSTALLED, OWN}:
        state, note = "installed", module.HOOKS_NOTE
    elif states == {MISSING}:
        state, note = "not installed", f"not installed ({commands.line('hooks', 'install', '--agent', runtime)})"
    elif states & {MISSING, OUTDATED}:
        state = "incomplete"
        note = (
            f"some hooks are missing or call another helper ({commands.line('hooks', 'install', '--agent', runtime)})"
        )
    else:
        state, note = "incomplete", "some of your own hook entries call another helper"
    if state == "installed" and (switch := _turned_off(runtime, settings)):
        state = "disabled"
        note = f"installed, but {switch} turns every hook off, so they do not run (take that setting out to run them)"
    if own := [event for event, found in events.items() if found in (OWN, OWN_OUTDATED)]:
        note += "; " + _own_note(own)
    for event, _argument, _timeout in module.HOOKS:
        if events[event] == OWN_OUTDATED:
            note += f"; change the command of your {event} entry to {commands_of[event]}"
    return {"agent": runtime, "file": str(file), "state": state, "events": events, "note": note}


def _turned_off(runtime: str, settings: Mapping[str, object]) -> str | None:
    """The user's setting that keeps the runtime from running any hook, ours included, or None: in Claude Code,
    `disableAllHooks` in the user settings or in this folder's project settings (`.claude/settings.json`,
    `.claude/settings.local.json`)."""
    if runtime == "claude":
        if settings.get("disableAllHooks") is True:
            return f'"disableAllHooks": true in {hooks_file(runtime)}'
        for name in PROJECT_SETTINGS:
            path = Path.cwd() / ".claude" / name
            if _project_settings(path).get("disableAllHooks") is True:
                return f'"disableAllHooks": true in {path}'
        return None
    return sandbox_consent_read.hooks_turned_off()


def _project_settings(path: Path) -> dict[str, object]:
    """A project's Claude Code settings, `{}` when missing or unusable: the folder is anyone's (a cloned repository),
    so the file is read without following a link or waiting on a FIFO, and only up to PROJECT_SETTINGS_MAX."""
    try:
        with open(open_own(path), "rb") as handle:
            data = handle.read(PROJECT_SETTINGS_MAX + 1)
        value = json.loads(data) if len(data) <= PROJECT_SETTINGS_MAX else None
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _own_note(events: list[str]) -> str:
    """That the user's own entries are theirs: agent-memory leaves them as they are, install and remove alike."""
    if len(events) == 1:
        return f"{events[0]} is your own entry, which agent-memory never changes or removes"
    return f"{' and '.join(events)} are your own entries, which agent-memory never changes or removes"


def read(path: Path) -> HookSettings:
    """The file's JSON object (`{}` if it does not exist); refuses anything we could not merge into safely."""
    return parse(path, agent_files_read.read_text(path))


def parse(path: Path, text: str | None) -> HookSettings:
    """The JSON object of a hook file's `text` (None or blank: there is none, `{}`), as `json_edits.Document` reads
    it; refuses (AgentMemoryError) a text that is not JSON, or whose hooks do not have the runtimes' shape."""
    text = text if text and text.strip() else "{}"
    try:
        settings = json.loads(text, parse_constant=_not_json)
    except ValueError as exc:
        raise refused(path, f"it is not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise refused(path, "it is nested too deeply") from exc
    if not isinstance(settings, dict):
        raise refused(path, "it does not hold a JSON object")
    events = settings.get("hooks", {})
    if not isinstance(events, dict):
        raise refused(path, '"hooks" is not an object')
    for event, groups in events.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise refused(path, f'"hooks.{event}" is not a list of groups')
        if any("hooks" in g and not isinstance(g["hooks"], list) for g in groups):
            raise refused(path, f'a group in "hooks.{event}" has "hooks" that is not a list')
    return settings  # type: ignore[return-value]  # checked just above: events that map to lists of groups


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")  # NaN and Infinity, which Python's json takes and JSON does not


def refused(path: Path, why: str) -> AgentMemoryError:
    return AgentMemoryError(
        f"{path} cannot be edited safely: {why}. Nothing was changed.",
        next_step=f"fix {path} by hand (it must be a JSON object with a 'hooks' object), then run the command again",
    )
