"""`agent-memory project map|show`: which project a directory belongs to."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import commands
from ..config.context import Context
from ..config.projects import how_found, map_directory
from ..contract import ProjectMapped
from ..errors import OK
from ..setup import origins
from .parsing import Rendered, subcommands, with_json
from .render import notice


def declare(parser: argparse.ArgumentParser) -> None:
    actions = subcommands(parser)
    p = with_json(actions.add_parser("map", help="map DIR (default: here) to project NAME"))
    p.add_argument("name")
    p.add_argument("dir", nargs="?")
    p.set_defaults(handler=project_map)
    with_json(actions.add_parser("show", help="the project of the current directory")).set_defaults(
        handler=project_show
    )


def project_map(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = map_directory(args.name, args.dir)
    recorded = origins.record_for(ctx, result["project"], Path(result["root"]))
    again = commands.line("project", "map", args.name, result["root"])
    for warning in origins.warnings(recorded, again):
        notice(f"Warning: {warning}")
    line = f"Mapped {result['root']} to project {result['project']}."
    if recorded and recorded["state"] != "failed":
        done = "recorded" if recorded["state"] == "recorded" else "already recorded"
        line += f"\nIts origin {recorded['origin']} is {done} in the bucket: a clone elsewhere finds this project."
    return ProjectMapped(project=result["project"], root=result["root"], origin=recorded), line, OK


def project_show(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = ctx.mapping()
    return result, f"project: {result['project']}\nroot: {result['root']}\nfound: {how_found(result)}", OK
