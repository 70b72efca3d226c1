"""agent-memory's hooks in each runtime's own hook file: install, remove, report.

Codex reads `$CODEX_HOME/hooks.json`, Claude Code `$CLAUDE_CONFIG_DIR/settings.json`; both hold
`{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}`. The file belongs to the
user: the edit changes only the bytes it must (key order, indentation and everything else stay as they were), a
file with nothing to change is not written at all, and a backup outside the agent's folders comes first. A file
that does not parse is refused and left as it is.

What install writes, and so all that remove takes out, has exactly one shape: a group `{"hooks": [HANDLER]}`
holding `{"type": "command", "command": "... agent-memory ... hook EVENT --agent RUNTIME", "timeout": N}` with
the timeout of that event. object other entry that runs our hook command is the user's own: it is never changed or
removed, and one that runs the current command counts as installed (and keeps us from adding a second). A group
of ours whose helper moved is updated in place rather than installed twice.

Our groups are appended after the user's, never inserted before them, because Codex keys its trust by a group's
position (X3); for the same reason a group of ours taken out from before another group is left as an empty
placeholder `{"hooks": []}`, which Codex accepts, so the user's later groups keep their keys and their trust. An
install puts our group back in that placeholder: where it was, with the same key, and no empty group is left.

The command line guards itself (`command.guarded`): `[ ! -x HELPER ] || HELPER hook ...` exits 0 in silence when
the helper is gone, so an install that was deleted without `uninstall` never shows a hook failure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from .. import agents, commands
from ..errors import AgentMemoryError
from ..fsutil import open_own
from . import agent_files, codex_sandbox
from .command import guarded, helper_command
from .json_edits import Document

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import HookFile

INSTALLED, OWN, OUTDATED, OWN_OUTDATED, MISSING = (
    "installed",
    "installed (your own entry)",
    "outdated",
    "outdated (your own entry)",
    "missing",
)
PLACEHOLDER: dict[str, object] = {"hooks": []}
PROJECT_SETTINGS = ("settings.json", "settings.local.json")  # Claude Code's, in a project's .claude folder
PROJECT_SETTINGS_MAX = 1 << 20  # bytes: a settings file any larger is not read


def hooks_file(runtime: str) -> Path:
    """The file that holds `runtime`'s user-level hooks."""
    return agents.runtime(runtime).hooks_file()


def install(agent: str = "both") -> list[HookFile]:
    """Install our hooks for the runtimes `agent` names; each runtime's status afterwards, with `changed`."""
    check(agent)  # all files or none: a refused file leaves the other runtime's untouched too
    return [_edit(runtime, _install_into) for runtime in agents.selected(agent)]


def remove(agent: str = "both") -> list[HookFile]:
    """Take out only what install wrote (and events it leaves empty); each runtime's status afterwards."""
    check(agent)
    return [_edit(runtime, _remove_from) for runtime in agents.selected(agent)]


def check(agent: str = "both") -> None:
    """Refuse now (AgentMemoryError) if a hook file of these runtimes could not be edited safely."""
    for runtime in agents.selected(agent):
        _load(Path(os.path.realpath(hooks_file(runtime))))


def status(agent: str = "both") -> list[HookFile]:
    """For each runtime: its hook file, the state of each of our events, and what the user has to know."""
    found = []
    helper = helper_command()  # looked up once for every runtime and event
    for runtime in agents.selected(agent):
        try:
            found.append(_status(runtime, _load(hooks_file(runtime)).value, helper))
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


# -- editing ------------------------------------------------------------------------------------------------


def _edit(runtime: str, change: Callable[[str, Document], None]) -> dict[str, object]:
    path = hooks_file(runtime)
    after: list[Document] = []

    def edited(text: str | None) -> str | None:
        document = _document(path, text)
        before = document.text
        change(runtime, document)
        after.append(document)
        if document.text == before:
            return text
        if not document.consistent():  # never write what we did not mean: the user's file stays as it is
            raise _refused(path, "agent-memory could not edit it without changing something else")
        return document.text if document.value else None  # nothing but our hooks was ever in it: no empty file

    result = agent_files.edit(path, runtime, edited)
    return {**_status(runtime, after[-1].value, helper_command()), **result}


def _install_into(runtime: str, document: Document) -> None:
    module = agents.runtime(runtime)
    helper = helper_command()
    for event, argument, timeout in module.HOOKS:
        wanted = _handler(module, helper, argument, timeout)
        groups = _groups(document.value, event)
        ours = _our_groups(groups, runtime, argument, timeout)
        own = _own_commands(groups, runtime, argument, timeout)
        if _runs_this_helper(own, wanted["command"], module.hook_command(helper, argument)):
            keep = None  # the user's own entry runs it already: a group of ours would run it twice
        elif ours:
            keep = ours[0]
            if groups[keep]["hooks"][0]["command"] != wanted["command"]:  # the helper moved
                document.replace(("hooks", event, keep, "hooks", 0, "command"), wanted["command"])
        elif own:
            continue  # the user's own entry runs another helper: theirs to change, and status says so
        elif PLACEHOLDER in groups:  # where a remove left ours: back in its place, under the key it had
            document.replace(("hooks", event, groups.index(PLACEHOLDER)), {"hooks": [wanted]})
            continue
        else:
            _append(document, event, {"hooks": [wanted]})
            continue
        for index in reversed(ours):  # from the last, so that the indexes of those before stay valid
            if index != keep:
                _take_out(document, module, event, index)


def _remove_from(runtime: str, document: Document) -> None:
    module = agents.runtime(runtime)
    for event, argument, timeout in module.HOOKS:
        for index in reversed(_our_groups(_groups(document.value, event), runtime, argument, timeout)):
            _take_out(document, module, event, index)


def _append(document: Document, event: str, group: dict[str, object]) -> None:
    """Add `group` after every group of `event`, creating the event (and the hooks object) if missing."""
    if "hooks" not in document.value:
        document.insert((), {event: [group]}, key="hooks")
    elif event not in document.value["hooks"]:
        document.insert(("hooks",), [group], key=event)
    else:
        document.insert(("hooks", event), group)  # appended: never shift the index of a group the user trusted


def _take_out(document: Document, module: ModuleType, event: str, index: int) -> None:
    """Take out our group at `index`; where later groups' trust hangs on their index, leave a placeholder."""
    groups = document.value["hooks"][event]
    if module.TRUST_BY_POSITION and index < len(groups) - 1:
        document.replace(("hooks", event, index), PLACEHOLDER)
        return
    document.delete(("hooks", event, index))
    if not document.value["hooks"][event]:  # emptied by us: the user had nothing else there
        document.delete(("hooks", event))
        if not document.value["hooks"]:
            document.delete(("hooks",))


# -- recognising entries ------------------------------------------------------------------------------------


def _handler(module: ModuleType, helper: str, argument: str, timeout: int) -> dict[str, object]:
    """The one handler install writes for an event."""
    return {"type": "command", "command": _command(module, helper, argument), "timeout": timeout}


def _command(module: ModuleType, helper: str, argument: str) -> str:
    """The command line of our hook for `argument`, silent once the helper is gone."""
    return guarded(module.hook_command(helper, argument))


def _runs_this_helper(commands: list[str], guarded_line: str, line: str) -> bool:
    """Whether one of the user's own `commands` runs this helper's hook: our `guarded_line`, or the same `line`
    without the guard."""
    return guarded_line in commands or line in commands


def _groups(settings: dict[str, object], event: str) -> list[dict[str, object]]:
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
        set(handler) == {"type", "command", "timeout"}
        and handler["type"] == "command"
        and type(handler["timeout"]) is int
        and handler["timeout"] == timeout
    )


def _our_groups(groups: list[dict[str, object]], runtime: str, argument: str, timeout: int) -> list[int]:
    return [i for i, group in enumerate(groups) if _is_our_group(group, runtime, argument, timeout)]


def _own_commands(groups: list[dict[str, object]], runtime: str, argument: str, timeout: int) -> list[str]:
    """The commands of the user's own entries that run our hook: any handler of it outside a group of ours."""
    return [
        handler["command"]
        for group in groups
        if not _is_our_group(group, runtime, argument, timeout)
        for handler in _handlers(group)
        if _runs_our_hook(handler, runtime, argument)
    ]


# -- reading and reporting -----------------------------------------------------------------------------------


def _status(runtime: str, settings: dict[str, object], helper: str) -> dict[str, object]:
    """The state of `runtime`'s hooks in its `settings`, for the helper that `helper` (`helper_command()`) runs."""
    module = agents.runtime(runtime)
    file = hooks_file(runtime)
    events: dict[str, str] = {}
    commands_of: dict[str, str] = {}
    for event, argument, timeout in module.HOOKS:
        command = commands_of[event] = _command(module, helper, argument)
        groups = _groups(settings, event)
        ours = [groups[i]["hooks"][0]["command"] for i in _our_groups(groups, runtime, argument, timeout)]
        own = _own_commands(groups, runtime, argument, timeout)
        if command in ours:
            events[event] = INSTALLED
        elif _runs_this_helper(own, command, module.hook_command(helper, argument)):
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


def _turned_off(runtime: str, settings: dict[str, object]) -> str | None:
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
    return codex_sandbox.hooks_turned_off()


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


def _load(path: Path) -> Document:
    """The file's JSON object (`{}` if it does not exist); refuses anything we could not merge into safely."""
    return _document(path, agent_files.read_text(path))


def _document(path: Path, text: str | None) -> Document:
    """`_load` of the file's text (None: there is none)."""
    text = text or ""
    try:
        document = Document(text)
    except ValueError as exc:
        raise _refused(path, f"it is not valid JSON ({exc})") from exc
    except RecursionError as exc:
        raise _refused(path, "it is nested too deeply") from exc
    settings = document.value
    if not isinstance(settings, dict):
        raise _refused(path, "it does not hold a JSON object")
    events = settings.get("hooks", {})
    if not isinstance(events, dict):
        raise _refused(path, '"hooks" is not an object')
    for event, groups in events.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise _refused(path, f'"hooks.{event}" is not a list of groups')
        if any("hooks" in g and not isinstance(g["hooks"], list) for g in groups):
            raise _refused(path, f'a group in "hooks.{event}" has "hooks" that is not a list')
    return document


def _refused(path: Path, why: str) -> AgentMemoryError:
    return AgentMemoryError(
        f"{path} cannot be edited safely: {why}. Nothing was changed.",
        next_step=f"fix {path} by hand (it must be a JSON object with a 'hooks' object), then run the command again",
    )
