"""`agent-memory save`: a note or checkpoint, kept on this machine first, then shared."""

from __future__ import annotations

import argparse
import sys

from .. import commands, names
from ..config.context import Context
from ..errors import UsageError
from ..memory import saving
from ..memory.pending import NOTES
from ..outbox.delivery import retry, retry_one
from ..outbox.kinds import RETRY
from ..report import usage
from .parsing import Rendered, with_json, with_online
from .render import told_retries, told_upload


def declare(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Save a Markdown note to the bucket. It is kept locally first; if the upload fails it stays "
        f"pending (exit 75) until `{RETRY} ID` confirms it."
    )
    with_json(p)
    p.add_argument("--title", help="default: the first heading, else the first line")
    p.add_argument("--kind", default="note", choices=["note", "checkpoint"])
    p.add_argument("--tag", action="append", default=[], help="repeatable")
    p.add_argument("--source", action="append", default=[], help="a file, URL or commit the note rests on; repeatable")
    p.add_argument("--corrects", metavar="NOTE_ID", help="the id of the note this one corrects")
    p.add_argument("--agent", help="default: $AGENT_MEMORY_AGENT, else the calling runtime, else unknown")
    p.add_argument("--file", metavar="PATH", help="read the body from PATH ('-' for stdin)")
    with_online(p)
    retried = p.add_mutually_exclusive_group()
    retried.add_argument("--retry", metavar="NOTE_ID", help=f"the same as {RETRY} NOTE_ID")
    retried.add_argument("--retry-all", action="store_true", help=f"the same as {RETRY}, for notes only")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if args.online:
        ctx.go_online()
    if args.retry_all:  # the older spellings of `pending retry`, for notes only
        return told_retries(retry([NOTES], ctx))
    if args.retry:
        return told_upload(retry_one([NOTES], ctx, names.note_id(args.retry)))
    result = saving.save(
        ctx,
        read_body(args.file),
        title=args.title,
        kind=args.kind,
        tags=args.tag,
        sources=args.source,
        corrects=args.corrects,
        agent=args.agent,
    )
    usage.record(result["project"], "save", ids=[result["id"]])
    return told_upload(result)


def read_body(file: str | None) -> bytes:
    """The note's body: the file `--file` names, else stdin (not a terminal: nobody would be typing a note)."""
    if file and file != "-":
        try:
            with open(file, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise UsageError(
                f"Cannot read {file}: {exc.strerror}.",
                next_step=f"{commands.line('save', '--file', 'PATH')} with a file that exists and that you can read",
            ) from exc
    if file is None and sys.stdin.isatty():
        raise UsageError(
            "No note body: pass --file PATH or pipe the text on stdin.",
            next_step=commands.line("save", "--title", "T", "--file", "NOTE.md"),
        )
    return sys.stdin.buffer.read()
