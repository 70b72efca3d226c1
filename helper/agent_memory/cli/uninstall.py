"""`agent-memory uninstall`: take agent-memory out of the agents' files, and say what was removed."""

from __future__ import annotations

import argparse
import os

from .. import agents, commands
from ..config.context import Context
from ..errors import OK
from ..setup.sandbox_consent_read import BEGIN, END
from ..setup.uninstall import uninstall as take_out
from .parsing import Rendered, with_json

WHAT = {
    "command": "the agent-memory link on your PATH",
    "codex-sandbox": "the sandbox consent",
    "hooks": "the hooks",
    "instructions": "the agent-memory block",
    "skills": "the skill installed by agent-memory",
}


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Undo bootstrap: take out, in the reverse order, the agent-memory link on your PATH, the Codex sandbox "
        "consent, the hooks of both agents, the instruction blocks (and instruction files bootstrap created that "
        "hold nothing else), and the skills agent-memory installed, each file changed only where it is ours, with "
        "a backup; and turns off the sync of the agents' own memory (nothing is deleted). "
        "Your notes stay: the bucket, this machine's cache, the outbox and the configuration (its bucket and "
        "project mappings) are kept. "
        "If the agent-memory command is already gone, take out the Codex sandbox consent by hand: in "
        f"~/.codex/config.toml ($CODEX_HOME/config.toml) delete the lines from '{BEGIN}' to '{END}'."
    )
    parser.allow_abbrev = False  # `--discard` must not pass for --discard-pending: only the whole word leaves uploads
    with_json(parser)
    parser.add_argument(
        "--discard-pending",
        action="store_true",
        help="uninstall even with uploads pending: they stay unsent in the outbox (export them first: agent-memory "
        "pending export ID --to PATH)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = take_out(discard_pending=args.discard_pending)
    lines = []
    if off := result["sync_off"]:
        chosen = "both" if len(off) > 1 else off[0]
        lines.append(
            f"turned off the sync of {agents.own_memory(chosen)}, so that no later setup starts it unasked "
            "(nothing was deleted: the memory files here and their versions in the bucket stay; to turn it on "
            f"again: {commands.line('sync', 'enable', '--agent', chosen)})"
        )
    for step in result["steps"]:
        for path in step["removed"]:
            gone = " (and the file, which held nothing else)" if path in step["deleted"] else ""
            lines.append(f"removed {WHAT[step['step']]}: {path}{gone}")
        lines += [f"  previous copy backed up in {backup}" for backup in step["backups"]]
    if not result["changed"]:
        lines.append("agent-memory is not installed in the agents' files: nothing to remove")
    lines += [f"warning: {warning}" for warning in result["warnings"]]
    if result["pending"]:
        lines.append(f"left unsent in the outbox: {result['pending']} pending upload(s) ({result['kept']['state']})")
    kept = result["kept"]  # what is there: a machine that never had agent-memory has no bucket, cache or configuration
    held = [f"your notes in the bucket ({bucket})"] if (bucket := ctx.config.get("bucket")) else []
    held += [f"the cache ({kept['cache']})"] if os.path.isdir(kept["cache"]) else []
    if os.path.isdir(kept["config"]):
        held.append(
            f"the configuration ({kept['config']}: the bucket and the folders mapped to projects, which a later "
            "bootstrap finds again)"
        )
    if held:
        lines.append(f"kept: {', '.join(held)}")
    return result, "\n".join(lines), OK
