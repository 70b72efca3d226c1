"""`agent-memory project map|show|unmap`: which project a directory belongs to."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import commands
from ..config.context import Context
from ..config.projects import canonical, how_found, map_directory, not_mapped, unmap_directory
from ..errors import OK, UsageError
from ..setup import origins
from ..store.base import StoreError
from .parsing import Rendered, subcommands, with_json
from .render import notice

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import OriginClaim, ProjectMapped, ProjectUnmapped


def declare(parser: argparse.ArgumentParser) -> None:
    actions = subcommands(parser)
    p = with_json(actions.add_parser("map", help="map DIR (default: here) to project NAME"))
    p.add_argument("name")
    p.add_argument("dir", nargs="?")
    p.set_defaults(handler=project_map)
    with_json(actions.add_parser("show", help="the project of the current directory")).set_defaults(
        handler=project_show
    )
    p = with_json(actions.add_parser("unmap", help="remove the mapping of DIR (default: here) on this machine"))
    p.add_argument("dir", nargs="?")
    p.add_argument(
        "--origin",
        action="store_true",
        help="also withdraw, in the bucket, its project's claim of the repository's origin (a clone elsewhere then "
        "no longer finds the project by it)",
    )
    p.set_defaults(handler=project_unmap)


def project_map(args: argparse.Namespace, ctx: Context) -> Rendered:
    machine = origins.this_machine()  # a name a claim could not record is refused before anything changes
    result = map_directory(args.name, args.dir)
    ctx.go_online()  # mapping a folder is asking for its claim now (and how a failed one is retried)
    recorded = origins.record_for(ctx, result["project"], Path(result["root"]), machine)
    again = commands.line("project", "map", args.name, result["root"])
    for warning in origins.warnings(recorded, again):
        notice(f"Warning: {warning}")
    line = f"Mapped {result['root']} to project {result['project']}."
    if recorded and recorded["state"] in ("recorded", "unchanged"):
        done = "recorded" if recorded["state"] == "recorded" else "already recorded"
        line += f"\nIts origin {recorded['origin']} is {done} in the bucket: a clone elsewhere finds this project."
    mapped: ProjectMapped = {"project": result["project"], "root": result["root"], "origin": recorded}
    return mapped, line, OK


def project_show(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = ctx.mapping()
    return result, f"project: {result['project']}\nroot: {result['root']}\nfound: {how_found(result)}", OK


def project_unmap(args: argparse.Namespace, ctx: Context) -> Rendered:
    root = canonical(args.dir if args.dir is not None else Path.cwd())
    withdrawn = _withdraw(ctx, root) if args.origin else None  # first: if the bucket fails, nothing has changed
    result = unmap_directory(root)
    line = f"Unmapped {result['root']} (it was mapped to project {result['project']})."
    if withdrawn is not None:
        done = "withdrawn" if withdrawn["state"] == "withdrawn" else "not claimed by it (nothing to withdraw)"
        line += f"\nIts origin {withdrawn['origin']} in the bucket: {done}."
    unmapped: ProjectUnmapped = {"project": result["project"], "root": result["root"], "origin": withdrawn}
    return unmapped, line, OK


def _withdraw(ctx: Context, root: Path) -> OriginClaim:
    """Withdraw the claim of `root`'s project on its repository's origin; UsageError when there is none to make."""
    project = (ctx.config.get("projects") or {}).get(str(root))
    unmap = commands.line("project", "unmap", str(root))
    if project is None:  # as unmapping would refuse it: a folder that is not mapped has no claim to withdraw
        raise not_mapped(root, ctx.config.get("projects") or {})
    origin = origins.origin_of(root)
    bucket = ctx.config.get("bucket")
    if origin is None or not bucket:
        why = "is in no git repository with an origin URL" if origin is None else "has no bucket configured"
        raise UsageError(f"{root} {why}, so there is no claim of its origin to withdraw.", next_step=unmap)
    machine = origins.this_machine()
    ctx.go_online()  # an explicit withdrawal: tried now, whatever outage was recorded
    try:
        withdrawn = origins.withdraw(ctx.store_for(bucket), project, origin, machine)
    except StoreError as exc:
        exc.during(f"Could not withdraw the claim of {origin} in {bucket}; nothing was changed")
        raise
    if withdrawn["state"] == "refused":
        raise UsageError(
            f"The withdrawal of {withdrawn['origin']} was not written: it looks like it holds a credential "
            f"({withdrawn['error']}); nothing was changed.",
            next_step=unmap,
        )
    return withdrawn
