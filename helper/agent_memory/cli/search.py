"""`agent-memory search`: this project's notes (refreshed from the bucket unless `--offline`), or with `--skills` the
published skill revisions."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..contract import Search
from ..display import plural
from ..errors import UsageError
from ..memory.search import search_project
from ..outbox.kinds import RETRY
from ..skills.catalog import discover
from .parsing import Rendered, with_json, with_online
from .render import notice, told_sync


def declare(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument("query", nargs="?", default="", help="literal text, case-insensitive; empty lists recent notes")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--kind", choices=["note", "checkpoint"])
    reach = p.add_mutually_exclusive_group()
    reach.add_argument("--offline", action="store_true", help="search the local cache only (no network)")
    with_online(reach)
    p.add_argument("--skills", action="store_true", help="search published skill revisions instead of notes")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if not 1 <= args.limit <= 1000:
        raise UsageError(
            "--limit must be between 1 and 1000.", next_step=commands.line("search", "QUERY", "--limit", "10")
        )
    if "\x00" in args.query:
        raise UsageError(
            "The query cannot contain NUL characters.", next_step=f"{commands.line('search', 'TEXT')} (plain text)"
        )
    if args.online:
        ctx.go_online()
    if args.skills:
        return _skills(args, ctx)
    found, freshness = search_project(ctx, args.query, limit=args.limit, kind=args.kind, offline=args.offline)
    lines = []
    for note in found["results"]:
        if note["damaged"]:
            lines.append(f"{note['id']}  DAMAGED: {note['damaged']} (its fields are not shown)")
        else:
            origin = f"{note['agent'] or 'unknown'}@{note['machine'] or 'unknown'}"
            flag = "  [pending: not shared yet]" if note["pending"] else ""
            lines.append(f"{note['id']}  {note['created']}  {note['kind']}  {origin}  {note['title']}{flag}")
        lines += [f"    {m['line']}: {m['text']}" for m in note["matches"]]
    if not lines:
        lines.append("No matching notes." if args.query else "No notes yet.")
    if found["pending"]:
        waiting = plural(found["pending"], "note")
        notice(f"{waiting} {'is' if found['pending'] == 1 else 'are'} pending upload: run {RETRY}.")
    sync, code = told_sync(freshness)
    result = Search(
        project=found["project"], query=found["query"], results=found["results"], sync=sync, pending=found["pending"]
    )
    return result, "\n".join(lines), code


def _skills(args: argparse.Namespace, ctx: Context) -> Rendered:
    result, freshness = discover(ctx, args.query, offline=args.offline)
    result["skills"] = result["skills"][: args.limit]
    lines = [f"{s['name']}  {s['revision']}  {s['description']}" for s in result["skills"]]
    _sync, code = told_sync(freshness)  # its notices and exit code: the index of skills has no `sync` object
    return result, "\n".join(lines) or "No matching skills.", code
