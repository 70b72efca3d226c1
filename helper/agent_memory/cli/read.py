"""`agent-memory read`: a note's exact bytes, or a file of a published skill revision."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..errors import OK, UsageError
from ..memory.notes import body_text
from ..memory.reading import read
from ..report import usage
from ..skills.catalog import read_file
from .parsing import Rendered, with_json, with_online

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import NoteRead, SkillFile


def declare(p: argparse.ArgumentParser) -> None:
    p.usage = (
        "agent-memory read NOTE_ID [--fresh] [--body] [--online] | agent-memory read --skill NAME --revision REV [FILE]"
    )
    with_json(p)
    p.add_argument("target", nargs="?", metavar="NOTE_ID|FILE")
    p.add_argument("--fresh", action="store_true", help="read it from the bucket, bypassing the cache")
    p.add_argument(
        "--body", action="store_true", help="the note's body only, without its frontmatter (search numbers its lines)"
    )
    with_online(p)
    p.add_argument("--skill", metavar="NAME", help="read a file of a published skill revision")
    p.add_argument("--revision", metavar="REV")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if args.online:
        ctx.go_online()
    if args.skill or args.revision:
        return _skill_file(args, ctx)
    if not args.target:
        raise UsageError("Which note? Give its id.", next_step=f"{commands.line('search', 'QUERY')} (lists ids)")
    found = read(ctx, args.target, fresh=args.fresh)
    usage.record(ctx.project, "read", ids=[found["id"]])
    content = found["content"]
    text = content.decode("utf-8", errors="replace")
    if args.body:
        text = body_text(text)
        content = text.encode()
    note: NoteRead = {"id": found["id"], "path": found["path"], "content": text, "source": found["source"]}
    return note, content, OK


def _skill_file(args: argparse.Namespace, ctx: Context) -> Rendered:
    if not (args.skill and args.revision):
        raise UsageError(
            "Reading a skill needs both --skill NAME and --revision REV.",
            next_step=f"{commands.line('read', '--skill', 'NAME', '--revision', 'REV')} "
            f"({commands.line('search', '--skills')} lists both)",
        )
    found = read_file(ctx, args.skill, args.revision, args.target or "SKILL.md")
    content = found["content"]
    text = content.decode("utf-8", errors="replace")
    shown: SkillFile = {"name": found["name"], "revision": found["revision"], "file": found["file"], "content": text}
    return shown, content, OK
