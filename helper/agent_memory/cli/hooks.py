"""`agent-memory hooks install|remove|status`: the optional hooks in the agents' hook files."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config.context import Context
from ..errors import OK
from ..setup import hook_config_read, hook_config_write
from .parsing import Rendered, agent_option, each_action

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import HookFile, Hooks


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The optional hooks: at session start, a short reminder (project, pending uploads, search first); after "
        "each turn (and at Claude Code's session end), a retry of pending uploads within a few seconds. Codex asks "
        "you to trust new hooks (/hooks) and skips them until you do."
    )
    for p in each_action(
        parser,
        hooks,
        install="add the hooks to the agents' hook files (keeping everything else)",
        remove="take out agent-memory's hooks, and nothing else",
        status="which hooks are installed, per agent",
    ):
        agent_option(p)


def hooks(args: argparse.Namespace, ctx: Context) -> Rendered:
    found = getattr(hook_config_read if args.action == "status" else hook_config_write, args.action)(args.agent)
    lines = [f"{h['agent']}: {hook_line(args.action, h)}" for h in found]
    lines += [f"  previous file backed up in {h['backup']}" for h in found if h.get("backup")]
    result: Hooks = {"agents": found}
    return result, "\n".join(lines), OK


def hook_line(action: str, found: HookFile) -> str:
    """One runtime's hooks after `action`, saying what changed."""
    file, note, changed = found["file"], str(found["note"]), found.get("changed")
    if action == "remove":
        if not changed:
            return f"no agent-memory hooks in {file}, nothing to remove" + _own_entries(found)
        gone = "" if Path(str(file)).exists() else " (and the file, which held nothing else)"
        return f"removed agent-memory's hooks from {file}{gone}" + _own_entries(found)
    if action == "install" and found["state"] == "installed":
        rest = note.removeprefix("installed").lstrip("; ")
        done = f"installed in {file}" if changed else f"already installed in {file}, unchanged"
        return done + (f"; {rest}" if rest else "")
    return f"{note} ({file})"


def _own_entries(found: HookFile) -> str:
    return "; your own hook entries stay as they are" if found["state"] == "installed" else ""
