"""`agent-memory instructions remove`: the managed block in the agents' instruction files, and nothing else."""

from __future__ import annotations

import argparse

from .. import agents
from ..config.context import Context
from ..errors import OK
from ..setup import instructions
from .parsing import Rendered, agent_option, subcommands, with_json


def declare(parser: argparse.ArgumentParser) -> None:
    p = with_json(subcommands(parser).add_parser("remove", help="remove the agent-memory block, and nothing else"))
    agent_option(p)
    p.set_defaults(handler=remove)


def remove(args: argparse.Namespace, ctx: Context) -> Rendered:
    files = {name: agents.runtime(name).instructions_file() for name in agents.selected(args.agent)}
    result = instructions.remove_blocks(files)
    deleted = " and the file itself (bootstrap had created it; nothing else was in it)"
    lines = [
        f"Removed the agent-memory block from {path}" + (deleted if path in result["deleted"] else "")
        for path in result["removed"]
    ]
    lines += [f"  previous file backed up in {backup}" for backup in result["backups"]]
    return result, "\n".join(lines) or "No block to remove.", OK
