"""agent-memory's hooks in each runtime's own hook file: install, remove, report.

Codex reads `$CODEX_HOME/hooks.json`, Claude Code `$CLAUDE_CONFIG_DIR/settings.json`; both hold
`{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}`. The file belongs to the
user: it is parsed, our handlers are merged in, and it is written back atomically with every other key and hook
kept, after a backup outside the agent's folders. Our groups are appended after the user's and never moved,
because Codex keys its trust by position (X3). A file that does not parse is refused and left as it is.
Our handlers are recognised by their command (`... agent-memory ... hook EVENT --agent RUNTIME`), so a helper
that moved is updated in place rather than installed twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import agents, paths
from ..errors import AgentMemoryError
from ..fsutil import locked
from .agent_files import back_up, read_text, write_text
from .command import helper_command

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any


def hooks_file(runtime: str) -> Path:
    """The file that holds `runtime`'s user-level hooks."""
    return agents.runtime(runtime).hooks_file()


def install(agent: str = "both") -> list[dict[str, Any]]:
    """Install our hooks for the runtimes `agent` names; each runtime's status afterwards, with `changed`."""
    check(agent)  # all files or none: a refused file leaves the other runtime's untouched too
    return [_edit(runtime, _install_into) for runtime in agents.selected(agent)]


def remove(agent: str = "both") -> list[dict[str, Any]]:
    """Take out only our handlers (and groups or events they leave empty); each runtime's status afterwards."""
    check(agent)
    return [_edit(runtime, _remove_from) for runtime in agents.selected(agent)]


def check(agent: str = "both") -> None:
    """Refuse now (AgentMemoryError) if a hook file of these runtimes could not be edited safely."""
    for runtime in agents.selected(agent):
        _load(Path(os.path.realpath(hooks_file(runtime))))


def status(agent: str = "both") -> list[dict[str, Any]]:
    """For each runtime: its hook file, the state of each of our events, and what the user has to know."""
    found = []
    for runtime in agents.selected(agent):
        try:
            found.append(_status(runtime, _load(hooks_file(runtime))))
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


def _edit(runtime: str, change: Any) -> dict[str, Any]:
    path = hooks_file(runtime)
    target = Path(os.path.realpath(path))  # dotfile repositories link these files: write through the link
    with locked(paths.state_dir() / "hooks.lock"):  # two installs at once must not lose each other's change
        before = _load(target)
        after = json.loads(json.dumps(before))
        change(runtime, after)
        changed = after != before
        backup = None
        if changed:
            backup = back_up(target, runtime)
            if after:
                write_text(target, json.dumps(after, indent=2, ensure_ascii=False) + "\n")
            else:  # nothing but our hooks was ever in it: leave no empty file behind
                target.unlink()
    return {**_status(runtime, after), "changed": changed, "backup": backup}


def _install_into(runtime: str, settings: dict[str, Any]) -> None:
    module = agents.runtime(runtime)
    helper = helper_command()
    events = settings.setdefault("hooks", {})
    for event, argument, timeout in module.HOOKS:
        handler = {"type": "command", "command": module.hook_command(helper, argument), "timeout": timeout}
        groups = events.setdefault(event, [])
        mine = [(group, h) for group in groups for h in _handlers(group) if _is_ours(h, runtime, argument)]
        if not mine:
            groups.append({"hooks": [handler]})  # appended: never shift the index of a group the user trusted
            continue
        first_group, first = mine[0]
        first_group["hooks"] = [handler if h is first else h for h in first_group["hooks"]]  # the helper moved
        events[event] = _without(groups, [h for _group, h in mine[1:]])


def _remove_from(runtime: str, settings: dict[str, Any]) -> None:
    events = settings.get("hooks")
    if not events:
        return
    for event, argument, _timeout in agents.runtime(runtime).HOOKS:
        groups = events.get(event) or []
        mine = [h for group in groups for h in _handlers(group) if _is_ours(h, runtime, argument)]
        if mine:
            events[event] = _without(groups, mine)
            if not events[event]:
                del events[event]
                if not events:  # emptied by us: the user had nothing else there
                    del settings["hooks"]


def _without(groups: list[dict[str, Any]], handlers: list[Any]) -> list[dict[str, Any]]:
    """`groups` without these handlers (by identity); a group that held nothing else goes too."""
    kept = []
    for group in groups:
        rest = [h for h in _handlers(group) if not any(h is gone for gone in handlers)]
        if len(rest) == len(_handlers(group)):
            kept.append(group)
        elif rest:
            kept.append({**group, "hooks": rest})
    return kept


def _handlers(group: dict[str, Any]) -> list[Any]:
    handlers = group.get("hooks")
    return handlers if isinstance(handlers, list) else []


def _is_ours(handler: Any, runtime: str, argument: str) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return (
        isinstance(command, str)
        and command.endswith(f" hook {argument} --agent {runtime}")
        and ("agent-memory" in command or "agent_memory" in command)
    )


# -- reading and reporting -----------------------------------------------------------------------------------


def _status(runtime: str, settings: dict[str, Any]) -> dict[str, Any]:
    module = agents.runtime(runtime)
    helper = helper_command()
    events: dict[str, str] = {}
    groups_by_event = settings.get("hooks") or {}
    for event, argument, timeout in module.HOOKS:
        handlers = [h for g in groups_by_event.get(event, []) for h in _handlers(g) if _is_ours(h, runtime, argument)]
        wanted = {"type": "command", "command": module.hook_command(helper, argument), "timeout": timeout}
        events[event] = "missing" if not handlers else "installed" if wanted in handlers else "outdated"
    states = set(events.values())
    if states == {"installed"}:
        state, note = "installed", module.HOOKS_NOTE
    elif states == {"missing"}:
        state, note = "not installed", f"not installed (agent-memory hooks install --agent {runtime})"
    else:
        state = "incomplete"
        note = f"some hooks are missing or call another helper (agent-memory hooks install --agent {runtime})"
    return {"agent": runtime, "file": str(hooks_file(runtime)), "state": state, "events": events, "note": note}


def _load(path: Path) -> dict[str, Any]:
    """The file's JSON object (`{}` if it does not exist); refuses anything we could not merge into safely."""
    text = read_text(path) or ""
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise _refused(path, f"it is not valid JSON ({exc})") from exc
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
    return settings


def _refused(path: Path, why: str) -> AgentMemoryError:
    return AgentMemoryError(
        f"{path} cannot be edited safely: {why}. Nothing was changed.",
        next_step=f"fix {path} by hand (it must be a JSON object with a 'hooks' object), then run the command again",
    )
