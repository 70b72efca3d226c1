"""The setup commands: bootstrap, instructions, hooks and codex-sandbox (declarations and handlers).

`agent-memory hook EVENT` (what the hooks run) is no command of this parser: `entry` hands it to `hook` first.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import agents
from ..errors import ERROR, OK, PENDING, render
from ..setup import codex_sandbox as sandbox
from ..setup import hook_files, instructions, on_path
from ..setup.bootstrap import bootstrap as set_up
from .common import Rendered, agent_option, each_action, notice, subcommands, with_json


def declare_bootstrap(p: argparse.ArgumentParser) -> None:
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
        "--codex-sandbox",
        action="store_true",
        help="your consent to let agent-memory save from Codex's workspace-write sandbox: its folders become "
        "writable and commands may use the network (see: agent-memory codex-sandbox --help)",
    )
    p.add_argument("--space-revision", metavar="REV", help="the Space revision this helper came from (recorded)")
    p.add_argument("--replace", action="store_true", help="replace a locally modified core skill (a backup is kept)")
    p.set_defaults(handler=bootstrap)


def declare_instructions(parser: argparse.ArgumentParser) -> None:
    p = with_json(subcommands(parser).add_parser("remove", help="remove the agent-memory block, and nothing else"))
    agent_option(p)
    p.set_defaults(handler=instructions_remove)


def declare_hooks(parser: argparse.ArgumentParser) -> None:
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


def declare_codex_sandbox(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Codex's workspace-write sandbox lets commands write only in the project and temporary folders, with no "
        "network, so a save fails there. 'allow' adds agent-memory's state and cache folders, the Hugging Face "
        "caches (or a folder store's folder), and network access for sandboxed commands to Codex's config.toml; "
        "'status' says whether that covers what the current configuration writes; 'remove' takes it out again."
    )
    each_action(
        parser,
        codex_sandbox,
        allow="let agent-memory save from Codex's sandbox (your consent)",
        remove="take the consent out of Codex's config.toml",
        status="whether the consent is in Codex's config.toml",
    )


def bootstrap(args: argparse.Namespace) -> Rendered:
    result = set_up(
        args.project,
        bucket=args.bucket,
        directory=args.dir,
        agent=args.agent,
        skill_specs=args.skill,
        hooks=args.hooks,
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
        *sandbox_lines(result["codex_sandbox"]),
        *command_lines(result["command"]),
        *(f"previous file backed up in {backup}" for backup in result["backups"]),
        f"verification: {verification['status']} ({verification['id']})",
    ]
    if not result["changed"]:
        lines.append("Nothing needed changing: this machine was already set up this way.")
    code = {"verified": OK, "pending": PENDING}.get(verification["status"], ERROR)
    if code == PENDING:
        notice("Next: agent-memory pending retry, once the network or the login is fixed (or the same bootstrap again)")
    elif code == ERROR:  # the warning above says why
        notice(
            render(
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
        "bucket": f", found by its origin {found['via']}, claimed by this project in the bucket",
    }[str(found["by"])]


def _origin_lines(origin: dict[str, object] | None) -> list[str]:
    if origin is None or origin["state"] == "failed":
        return []  # a failure is a warning
    return [f"origin {origin['origin']}: {'recorded in the bucket' if origin['state'] == 'recorded' else 'unchanged'}"]


_SHARED = {
    "installed": "installed",
    "unchanged": "already installed, unchanged",
    "left": "left as it was (see the warning)",
}


def _bucket_line(result: dict[str, object]) -> str:
    line = f"bucket: {result['bucket']}"
    if result["bucket_created"]:
        line += " (created, private)" if result["bucket"].startswith("hf://") else " (created, owner-only)"
    if result["bucket_was"]:
        line += f" (was {result['bucket_was']}: every project mapped on this machine now uses this bucket)"
    return line


def _mapping(mapping: dict[str, object]) -> str:
    return f"mapped, was {mapping['was']}" if mapping["state"] == "remapped" else str(mapping["state"])


def command_lines(command: dict[str, object] | None) -> list[str]:
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


def sandbox_lines(consent: dict[str, object] | None) -> list[str]:
    if not consent:
        return []
    if consent["state"] == "allowed":
        unchanged = " (unchanged)" if consent.get("changed") is False else ""
        return [
            f"codex sandbox: allowed in {consent['file']}{unchanged}: network access, and writes to "
            + ", ".join(consent["roots"])
        ]
    if consent["state"] == "incomplete":
        line = f"codex sandbox: incomplete in {consent['file']}: not writable: {', '.join(consent['missing'])}"
    else:
        line = f"codex sandbox: {consent['state']} ({consent['file']})"
    return [line] + ([f"  Next: {consent['next']}"] if consent.get("next") else [])


def hook_line(action: str, found: dict[str, object]) -> str:
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


def _own_entries(found: dict[str, object]) -> str:
    return "; your own hook entries stay as they are" if found["state"] == "installed" else ""


def hooks(args: argparse.Namespace) -> Rendered:
    found = getattr(hook_files, args.action)(args.agent)
    lines = [f"{h['agent']}: {hook_line(args.action, h)}" for h in found]
    lines += [f"  previous file backed up in {h['backup']}" for h in found if h.get("backup")]
    return {"agents": found}, "\n".join(lines), OK


def codex_sandbox(args: argparse.Namespace) -> Rendered:
    result = getattr(sandbox, args.action)()
    if args.action == "remove":
        lines = [
            f"codex sandbox: consent removed from {result['file']}"
            if result["changed"]
            else f"codex sandbox: no consent in {result['file']}, nothing to remove"
        ]
    else:
        lines = sandbox_lines(result)
    if result.get("backup"):
        lines.append(f"  previous file backed up in {result['backup']}")
    if result.get("changed"):
        lines.append("Codex uses it from its next session." if args.action == "allow" else "Codex no longer has it.")
    return result, "\n".join(lines), OK


def instructions_remove(args: argparse.Namespace) -> Rendered:
    files = {name: agents.runtime(name).instructions_file() for name in agents.selected(args.agent)}
    result = instructions.remove_blocks(files)
    deleted = " and the file itself (bootstrap had created it; nothing else was in it)"
    lines = [
        f"Removed the agent-memory block from {path}" + (deleted if path in result["deleted"] else "")
        for path in result["removed"]
    ]
    lines += [f"  previous file backed up in {backup}" for backup in result["backups"]]
    return result, "\n".join(lines) or "No block to remove.", OK
