"""`agent-memory search`: this project's notes (refreshed from the bucket unless `--offline`), or with `--skills` the
published skill revisions."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..display import plural
from ..errors import UsageError
from ..memory.search import MAX_QUERY_CHARS, MAX_TERMS, SETUP, query_problem, search_project
from ..outbox.kinds import RETRY
from ..report import usage
from .parsing import Rendered, with_json, with_online
from .render import notice, told_freshness

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import NoteHit, Search


def declare(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument(
        "query",
        nargs="?",
        default="",
        help='every word (in any order) and "quoted phrase" in the title or body: literal text, case-insensitive; '
        "empty lists recent notes",
    )
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--kind", choices=["note", "checkpoint", SETUP], help=f"{SETUP}: bootstrap's verification notes")
    p.add_argument("--current", action="store_true", help="leave out notes that a later note corrects")
    p.add_argument("--all", action="store_true", help="include bootstrap's setup verification notes")
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
    if (problem := query_problem(args.query)) is not None:
        limits = f"the few words that matter, at most {MAX_TERMS} words and phrases, {MAX_QUERY_CHARS:,} characters"
        raise UsageError(problem, next_step=f"{commands.line('search', 'KEYWORDS')} ({limits})")
    if args.online:
        ctx.go_online()
    if args.skills:
        return _skills(args, ctx)
    found, freshness = search_project(
        ctx,
        args.query,
        limit=args.limit,
        kind=args.kind,
        offline=args.offline,
        current=args.current,
        everything=args.all,
    )
    results = found["results"]
    usage.record(found["project"], "search", found=bool(results), ids=[note["id"] for note in results])
    lines = []
    if results and results[0]["partial"]:
        lines.append("No note holds every term of the query; the notes holding the most of them (partial):")
    for note in results:
        if note["damaged"]:
            lines.append(f"{note['id']}  DAMAGED: {note['damaged']} (its fields are not shown)")
        else:
            origin = f"{note['agent'] or 'unknown'}@{note['machine'] or 'unknown'}"
            lines.append(f"{note['id']}  {note['created']}  {note['kind']}  {origin}  {note['title']}{_flags(note)}")
        lines += [f"    {m['line']}: {m['text']}" for m in note["matches"]]
    if not lines:
        lines.append("No matching notes." if args.query else "No notes yet.")
    if found["pending"]:
        waiting = plural(found["pending"], "note")
        notice(f"{waiting} {'is' if found['pending'] == 1 else 'are'} pending upload: run {RETRY}.")
    told, code = told_freshness(freshness)
    result: Search = {
        "project": found["project"],
        "query": found["query"],
        "results": results,
        "freshness": told,
        "pending": found["pending"],
    }
    return result, "\n".join(lines), code


def _flags(note: NoteHit) -> str:
    """The markers after a result's title: partial, corrections, pending."""
    flags = []
    if note["partial"]:
        flags.append(f"partial: without {', '.join(repr(word) for word in note['missing'])}")
    if note["corrects"]:
        flags.append(f"corrects {note['corrects']}")
    if note["corrected_by"]:
        flags.append(f"corrected by {note['corrected_by']}")
    if note["pending"]:
        flags.append("pending: not shared yet")
    return "".join(f"  [{flag}]" for flag in flags)


def _skills(args: argparse.Namespace, ctx: Context) -> Rendered:
    """`search --skills`: the catalog of published skills, loaded only here (with the skills' layout and its Unicode
    tables, `unicodedata`: about half a millisecond), which a search of notes, every agent's, never needs."""
    from ..skills import catalog

    result, freshness = catalog.discover(ctx, args.query, offline=args.offline)
    result["skills"] = result["skills"][: args.limit]
    lines = [f"{s['name']}  {s['revision']}  {s['description']}" for s in result["skills"]]
    _told, code = told_freshness(freshness)  # its notices and exit code: the index of skills has no `freshness` object
    return result, "\n".join(lines) or "No matching skills.", code
