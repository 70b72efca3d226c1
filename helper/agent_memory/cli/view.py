"""`agent-memory view`: write a static, read-only site of this machine's memory and print its `file://` address."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import commands, names
from ..config.context import Context
from ..display import plural
from ..errors import OK, UsageError
from ..report import usage
from .parsing import Rendered, with_json
from .render import notice

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import View


def declare(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write a page of what the agents remember on this machine: a timeline with filters and search, each note "
        "with its corrections and its use, the sync's versions and conflicts, what needs attention, and a picture "
        "per week. It reads local records only (run a search first to refresh), works offline and loads nothing "
        "from anywhere."
    )
    with_json(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--project", metavar="NAME", help="this project (default: the current folder's)")
    which.add_argument("--all-projects", action="store_true", help="every project this machine holds notes of")
    p.add_argument("--out", metavar="DIR", help="the folder to write (default: under agent-memory's state folder)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser ($BROWSER if set)")
    p.add_argument(
        "--days",
        type=int,
        default=30,
        help="a note no search found nor read in this many days is 'never recalled' ('not recalled yet' if younger)",
    )
    p.add_argument(
        "--render-all",
        action="store_true",
        help="render every note's Markdown (by default, what a few seconds allow, newest first; the rest as text)",
    )


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if not 1 <= args.days <= usage.KEEP_DAYS:
        raise UsageError(
            f"--days must be between 1 and {usage.KEEP_DAYS} (older receipts are not kept).",
            next_step=commands.line("view", "--days", "30"),
        )
    if args.out is not None and not args.out.strip():
        raise UsageError(
            "--out is empty: it names no folder (without --out, the page goes under the state folder).",
            next_step=commands.line("view"),
        )
    from ..view import output, site, sources  # jinja2 and markdown-it-py come with them: loaded by this command only

    bucket = ctx.bucket
    mapped = ctx.config.get("projects")
    known = sources.projects(bucket, dict(mapped) if isinstance(mapped, dict) else {})
    if args.all_projects:
        chosen = known
    else:
        project = names.project(args.project) if args.project else ctx.project
        if project not in known:
            raise sources.unknown_project(project, known)
        chosen = [project]
    out = Path(os.path.abspath(os.path.expanduser(args.out))) if args.out else output.default_folder()
    output.check(out)
    written = site.build(bucket, chosen, out, days=args.days, render_all=args.render_all)
    url = (out / "index.html").as_uri()
    opened = _open(url) if args.open else False
    result: View = {
        "url": url,
        "out": str(out),
        "projects": chosen,
        "notes": written["notes"],
        "pending": written["pending"],
        "rendered": written["rendered"],
        "conflicts": written["conflicts"],
        "health": written["health"],
        "opened": opened,
    }
    notice(
        f"Wrote the view of {plural(len(chosen), 'project')}: {plural(result['notes'], 'note')}, "
        f"{plural(result['conflicts'], 'sync conflict')}, {plural(result['health'], 'item')} needing attention."
    )
    if args.open and not opened:
        notice(f"No browser could be opened: open {url} in yours.")
    return result, url, OK


def _open(url: str) -> bool:
    """Open `url` in the default browser (`$BROWSER` first, as Python's `webbrowser` reads it)."""
    import webbrowser

    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False
