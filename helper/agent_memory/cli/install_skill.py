"""`agent-memory install-skill`: a published skill at an explicit revision, into the agents' skill folders."""

from __future__ import annotations

import argparse

from ..config.context import Context
from ..errors import OK
from ..skills.install_write import install_revision
from .parsing import Rendered, agent_option, with_json


def declare(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--revision", required=True, metavar="REV")
    agent_option(p)
    p.add_argument("--replace", action="store_true", help="replace an installed folder (a backup is kept)")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.go_online()  # an install is asked for by the user: it tries whatever outage was recorded
    result = install_revision(ctx, args.name, args.revision, agent=args.agent, replace=args.replace)
    skill = f"{result['name']} revision {result['revision']}"
    lines = [
        f"Already installed, unchanged: {skill} in {path}"
        if path in result["unchanged"]
        else f"{'Replaced' if result['backup'] else 'Installed'}: {skill} in {path}"
        for path in result["installed"]
    ]
    if result["backup"]:
        lines.append(f"The previous folder is backed up in {result['backup']}")
    return result, "\n".join(lines), OK
