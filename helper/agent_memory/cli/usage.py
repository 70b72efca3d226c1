"""`agent-memory usage`: whether memory is used on this machine, per project and agent (see `report.usage`)."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..display import plural
from ..errors import OK, UsageError
from ..memory.cache import ProjectCache
from ..report import usage
from .parsing import Rendered, with_json


def declare(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Counts kept on this machine only, per session: searches (and those that found something), notes read and "
        "saved, sessions seen. Never a query's text or a note's content."
    )
    with_json(p)
    p.add_argument("--days", type=int, default=30, help=f"the period, in days up to {usage.KEEP_DAYS} (default 30)")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if not 1 <= args.days <= usage.KEEP_DAYS:
        raise UsageError(
            f"--days must be between 1 and {usage.KEEP_DAYS} (older counts are not kept).",
            next_step=commands.line("usage", "--days", "30"),
        )
    bucket = ctx.config.get("bucket")

    def notes_of(project: str) -> set[str]:  # the notes of the configured bucket that this machine holds
        return ProjectCache(str(bucket), project).note_ids() if bucket else set()

    result = usage.summary(args.days, notes_of)
    lines = [f"Use of memory on this machine in the last {plural(args.days, 'day')} (since {result['since']}):"]
    for project in result["projects"]:
        lines.append(
            f"project {project['project']}: {plural(project['notes'], 'note')} here, "
            f"{project['never_returned']} never returned by a search in the period"
        )
        for use in project["agents"]:
            share = f" ({use['searched_share']:.0%})" if use["searched_share"] is not None else ""
            lines.append(
                f"  {use['agent']}: {plural(use['sessions'], 'session')}, {use['sessions_searched']} searched "
                f"memory{share}; {plural(use['searches'], 'search', 'searches')}, {use['searches_found']} found "
                f"something; {use['saved']} saved, {use['read']} read"
            )
    if not result["projects"]:
        lines.append("  nothing recorded (memory was not used, or only before this version counted it)")
    return result, "\n".join(lines), OK
