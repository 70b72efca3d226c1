"""`agent-memory pending [list|retry|export|discard]`: the uploads waiting on this machine, notes and skill
publications alike."""

from __future__ import annotations

import argparse

from ..config.context import Context
from ..display import plural, safe_tree
from ..errors import OK
from ..outbox.delivery import retry, retry_one
from ..outbox.giving_up import discard, export
from ..outbox.listing import entries
from ..uploads import KINDS
from .parsing import Rendered, with_json
from .render import notice, told_retries, told_upload

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Exported, LastError


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Uploads waiting on this machine (notes and skill publications): each is kept, with its exact bytes, "
        "until the bucket confirms it."
    )
    with_json(parser).set_defaults(handler=pending_list)
    actions = parser.add_subparsers(dest="action", metavar="[ACTION]", parser_class=type(parser))
    with_json(actions.add_parser("list", help="list what waits, and what is damaged (the default)")).set_defaults(
        handler=pending_list
    )
    p = with_json(actions.add_parser("retry", help="retry every pending note and publication now (or only ID)"))
    p.add_argument("id", nargs="?", metavar="ID", help="a note id or skill revision (default: every upload)")
    p.set_defaults(handler=pending_retry)
    p = with_json(actions.add_parser("export", help="write the exact bytes of a pending upload to a new file"))
    p.add_argument("id", metavar="ID", help="a note id or skill revision")
    p.add_argument("--to", required=True, metavar="PATH", help="a new file (a note) or folder (a skill)")
    p.set_defaults(handler=pending_export)
    p = with_json(
        actions.add_parser("discard", help="stop retrying an upload; its plan and bytes are kept in a folder")
    )
    p.add_argument("id", metavar="ID", help="a note id or skill revision")
    p.set_defaults(handler=pending_discard)


def pending_list(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = safe_tree(entries(KINDS))  # store errors carry outside text
    lines = []
    for note in result["notes"]:
        error, attempts = _last_error(note["last_error"]), plural(note["attempts"], "attempt")
        lines.append(f"note {note['id']} -> {note['bucket']}/{note['path']} ({attempts}: {error})")
    for skill in result["skills"]:
        error = _last_error(skill["last_error"])
        lines.append(f"skill {skill['name']} revision {skill['revision']} -> {skill['bucket']} ({error})")
    for sync in result["sync"]:
        error, files = _last_error(sync["last_error"]), ", ".join(sync["files"])
        lines.append(f"sync {sync['id']} ({sync['agent']}: {files}) -> {sync['bucket']} ({error})")
    for item in result["damaged"]:
        lines.append(f"DAMAGED {item['kind']} {item['id']}: {item['problem']} (kept in {item['file']})")
    if result["damaged"]:
        notice("Damaged uploads are never retried: export their bytes (pending export ID --to PATH), then discard.")
    return result, "\n".join(lines) or "Nothing is pending.", OK


def _last_error(last_error: LastError | None) -> str:
    return (last_error.get("detail") if last_error else None) or "not tried yet"


def pending_retry(args: argparse.Namespace, ctx: Context) -> Rendered:
    if args.id is not None:
        return told_upload(retry_one(KINDS, ctx, args.id))
    return told_retries(retry(KINDS, ctx))


def pending_export(args: argparse.Namespace, ctx: Context) -> Rendered:
    written = export(args.id, args.to)
    exported: Exported = {"id": args.id, "written": written}
    return exported, "\n".join(f"Wrote {path}" for path in written), OK


def pending_discard(args: argparse.Namespace, ctx: Context) -> Rendered:
    result = discard(args.id, ctx)
    text = (
        f"Discarded the pending {result['kind']} {args.id}: it will not be uploaded. "
        f"Its plan and exact bytes are kept in {result['kept']}."
    )
    return result, text, OK
