"""`agent-memory bootstrap`: set up (or repair) this machine, and say what changed."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config.context import Context
from ..errors import ERROR, OK, PENDING
from ..errors import render as error_lines
from ..setup import on_path
from ..setup.bootstrap import bootstrap as set_up
from ..setup.sandbox_consent_read import in_words as sandbox_lines
from .hooks import hook_line
from .parsing import Rendered, agent_option, with_json
from .render import notice

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Bootstrap, BootstrapMapping, BootstrapSync, CommandLink, OriginClaim


def declare(p: argparse.ArgumentParser) -> None:
    p.description = "Set up (or repair) this machine. Safe to run again: it only adds what is missing."
    with_json(p)
    p.add_argument(
        "--project",
        help="the project name for --dir (default: the project it resolves to here, else the one that claims its "
        "git origin in the bucket, recorded by bootstrap or project map on another machine)",
    )
    p.add_argument(
        "--bucket",
        help="owner/name, hf://buckets/owner/name or file:///path "
        "(default: the configured one, else <your user>/agent-memory, created private)",
    )
    p.add_argument("--dir", help="the directory to map to the project (default: here)")
    agent_option(p)
    p.add_argument("--skill", action="append", default=[], metavar="NAME@REVISION", help="also install; repeatable")
    hooks = p.add_mutually_exclusive_group()
    hooks.add_argument(
        "--hooks",
        dest="hooks",
        action="store_true",
        help="also install the hooks: a reminder at session start, a retry of pending uploads after each turn",
    )
    hooks.add_argument("--no-hooks", dest="hooks", action="store_false", help="leave hooks alone (default)")
    p.add_argument(
        "--sync",
        action="store_true",
        help="also sync the agents' own memory (Claude Code's auto memory, Codex's memories) through the bucket "
        "(see: agent-memory sync --help)",
    )
    p.add_argument(
        "--codex-sandbox",
        action="store_true",
        help="your consent to let agent-memory save from Codex's workspace-write sandbox: its folders become "
        "writable and commands may use the network (see: agent-memory codex-sandbox --help)",
    )
    p.add_argument("--space-revision", metavar="REV", help="the Space revision this helper came from (recorded)")
    p.add_argument("--replace", action="store_true", help="replace a locally modified core skill (a backup is kept)")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.go_online()  # setting up asks the bucket whatever outage was recorded
    result = set_up(
        ctx,
        args.project,
        bucket=args.bucket,
        directory=args.dir,
        agent=args.agent,
        skill_specs=args.skill,
        hooks=args.hooks,
        sync=args.sync,
        codex_sandbox=args.codex_sandbox,
        space_revision=args.space_revision,
        replace=args.replace,
    )
    verification = result["verification"]
    for warning in result["warnings"]:
        notice(f"Warning: {warning}")
    skill = result["skill"]
    lines = [
        _bucket_line(result),
        f"project: {result['project']} -> {result['root']} ({_mapping(result['mapping'])}){_found(result['found'])}",
        *_origin_lines(result["origin"]),
        *(f"core skill {state}: {path}" for state in ("installed", "updated", "unchanged") for path in skill[state]),
        *(f"core skill kept (modified locally): {path}" for path in skill["kept"]),
        *(f"core skill: your edited copy is backed up in {backup}" for backup in skill["backups"]),
        *(f"skill {s['name']}@{s['revision']}: {_SHARED[s['state']]}" for s in result["skills"]),
        *(f"instructions {entry['state']}: {entry['file']}" for entry in result["instructions"]),
        *(f"hooks ({h['agent']}): {hook_line('install', h)}" for h in result["hooks"]["installed"]),
        *_sync_lines(result["sync"]),
        *sandbox_lines(result["codex_sandbox"]),
        *command_lines(result["command"]),
        *(f"previous file backed up in {backup}" for backup in result["backups"]),
        f"verification: {verification['status']} ({verification['id']})",
    ]
    if not result["changed"]:
        lines.append("Nothing needed changing: this machine was already set up this way.")
    code = {"verified": OK, "pending": PENDING}.get(verification["status"] or "", ERROR)
    if code == PENDING:
        notice(f"Next: {verification['next']}")  # what fixes the cause, in words of the store, then the retry
    elif code == ERROR:  # the warning above says why
        notice(
            error_lines(
                "This machine is set up, but saving, reading and searching could not be verified (see the warning).",
                "fix what the warning names, then run the same bootstrap again",
            )
        )
    return result, "\n".join(lines), code


def _found(found: dict[str, str | None]) -> str:
    """How bootstrap chose the project when it was not given one."""
    return {
        "option": "",
        "mapped": "",
        "worktree": f", found as a worktree of {found['via']}",
        "origin": f", found by its origin {found['via']}, as a clone mapped on this machine",
        "bucket": f", found by its origin {found['via']}, claimed by this project in the bucket (by machine "
        f"{found.get('machine')} on {found.get('time')})",
    }[str(found["by"])]


def _origin_lines(origin: OriginClaim | None) -> list[str]:
    if origin is None or origin["state"] == "failed":
        return []  # a failure is a warning
    return [f"origin {origin['origin']}: {'recorded in the bucket' if origin['state'] == 'recorded' else 'unchanged'}"]


_SHARED = {
    "installed": "installed",
    "unchanged": "already installed, unchanged",
    "left": "left as it was (see the warning)",
}


def _bucket_line(result: Bootstrap) -> str:
    line = f"bucket: {result['bucket']}"
    if result["bucket_created"]:
        line += " (created, private)" if result["bucket"].startswith("hf://") else " (created, owner-only)"
    elif not result["bucket_was"]:  # there already, and already this machine's: a run again says so
        line += " (unchanged)"
    if result["bucket_was"]:
        line += f" (was {result['bucket_was']}: every project mapped on this machine now uses this bucket)"
    return line


def _mapping(mapping: BootstrapMapping) -> str:
    return f"mapped, was {mapping['was']}" if mapping["state"] == "remapped" else str(mapping["state"])


def command_lines(command: CommandLink | None) -> list[str]:
    """Where the command `agent-memory` comes from, in words."""
    if not command:
        return []
    where = f"agent-memory -> {command['target']}"
    state = command["state"]
    if state == "other":
        return [f"command: {command['path']} is another agent-memory, left as it is (see the warning)"]
    if state == "on path":
        text = f"command: {where} (found on a login shell's PATH, unchanged)"
    elif state == "replaced":
        text = f"command: {where} (linked in {command['path']}, was {command['was']})"
    elif state == "unchanged":
        text = f"command: {where} (already linked in {command['path']}, unchanged)"
    else:
        text = f"command: {where} ({state} in {command['path']})"
    if command["found"] and not on_path.in_this_shell(Path(command["found"])):
        text += f"; in a terminal opened before, run first: {on_path.EXPORT}"
    return [text]


def _sync_lines(found: BootstrapSync) -> list[str]:
    if not found["requested"]:
        return []
    state = "turned on" if found["changed"] else "unchanged"
    return [f"sync of the agents' own memory {state}: {', '.join(found['enabled'])}"]
