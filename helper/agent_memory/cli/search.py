"""The memory commands: project, config, save, search, read, status and pending (declarations and handlers)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from .. import config, names, outbox, paths, uploads
from ..config.projects import how_found, map_directory
from ..context import Context
from ..display import plural, safe_tree
from ..errors import ACCESS, OK, AgentMemoryError, UsageError, render
from ..memory import saving
from ..memory.note_uploads import NOTES
from ..memory.reading import read as read_note
from ..memory.search import search_project
from ..setup import codex_sandbox, origins
from ..setup.buckets import set_bucket
from ..status import status as machine_status
from .common import Rendered, notice, subcommands, told_retries, told_sync, told_upload, with_json
from .setup import sandbox_lines
from .skills import read_skill, search_skills


def declare_project(parser: argparse.ArgumentParser) -> None:
    actions = subcommands(parser)
    p = with_json(actions.add_parser("map", help="map DIR (default: here) to project NAME"))
    p.add_argument("name")
    p.add_argument("dir", nargs="?")
    p.set_defaults(handler=project_map)
    with_json(actions.add_parser("show", help="the project of the current directory")).set_defaults(
        handler=project_show
    )


def declare_config(parser: argparse.ArgumentParser) -> None:
    actions = subcommands(parser)
    p = with_json(actions.add_parser("set", help="set a setting (bucket)"))
    p.add_argument("key", choices=["bucket"])
    p.add_argument("value", help="owner/name, hf://buckets/owner/name or file:///absolute/path")
    p.set_defaults(handler=config_set)
    with_json(actions.add_parser("show", help="print the settings")).set_defaults(handler=config_show)


def declare_save(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Save a Markdown note to the bucket. It is kept locally first; if the upload fails it stays "
        f"pending (exit 75) until `{outbox.RETRY} ID` confirms it."
    )
    with_json(p)
    p.add_argument("--title", help="default: the first heading, else the first line")
    p.add_argument("--kind", default="note", choices=["note", "checkpoint"])
    p.add_argument("--tag", action="append", default=[], help="repeatable")
    p.add_argument("--source", action="append", default=[], help="a file, URL or commit the note rests on; repeatable")
    p.add_argument("--corrects", metavar="NOTE_ID", help="the id of the note this one corrects")
    p.add_argument("--agent", help="default: $AGENT_MEMORY_AGENT, else the calling runtime, else unknown")
    p.add_argument("--file", metavar="PATH", help="read the body from PATH ('-' for stdin)")
    retry = p.add_mutually_exclusive_group()
    retry.add_argument("--retry", metavar="NOTE_ID", help=f"the same as {outbox.RETRY} NOTE_ID")
    retry.add_argument("--retry-all", action="store_true", help=f"the same as {outbox.RETRY}, for notes only")
    p.set_defaults(handler=save)


def declare_search(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument("query", nargs="?", default="", help="literal text, case-insensitive; empty lists recent notes")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--kind", choices=["note", "checkpoint"])
    p.add_argument("--offline", action="store_true", help="search the local cache only (no network)")
    p.add_argument("--skills", action="store_true", help="search published skill revisions instead of notes")
    p.set_defaults(handler=search)


def declare_read(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory read NOTE_ID [--fresh] | agent-memory read --skill NAME --revision REV [FILE]"
    with_json(p)
    p.add_argument("target", nargs="?", metavar="NOTE_ID|FILE")
    p.add_argument("--fresh", action="store_true", help="read it from the bucket, bypassing the cache")
    p.add_argument("--skill", metavar="NAME", help="read a file of a published skill revision")
    p.add_argument("--revision", metavar="REV")
    p.set_defaults(handler=read)


def declare_status(p: argparse.ArgumentParser) -> None:
    with_json(p).set_defaults(handler=status)


def declare_pending(parser: argparse.ArgumentParser) -> None:
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


def project_map(args: argparse.Namespace) -> Rendered:
    result = map_directory(args.name, args.dir)
    recorded = origins.record_for(Context(), result["project"], Path(result["root"]))
    again = shlex.join(["agent-memory", "project", "map", args.name, result["root"]])
    for warning in origins.warnings(recorded, again):
        notice(f"Warning: {warning}")
    line = f"Mapped {result['root']} to project {result['project']}."
    if recorded and recorded["state"] != "failed":
        done = "recorded" if recorded["state"] == "recorded" else "already recorded"
        line += f"\nIts origin {recorded['origin']} is {done} in the bucket: a clone elsewhere finds this project."
    return {**result, "origin": recorded}, line, OK


def project_show(args: argparse.Namespace) -> Rendered:
    result = Context().mapping()
    return result, f"project: {result['project']}\nroot: {result['root']}\nfound: {how_found(result)}", OK


def config_set(args: argparse.Namespace) -> Rendered:
    result = set_bucket(Context(), args.value)
    line = f"bucket: {result['bucket']}"
    if result["created"]:
        line += " (created, owner-only)"
    if result["was"]:
        line += f" (was {result['was']}: every project mapped on this machine now uses this bucket)"
    elif result["was"] is None and result["unchanged"]:
        line += " (unchanged)"
    if result["was"] and (warning := _consent_left_behind()):
        notice(f"Warning: {warning}")
    return result, line, OK


def _consent_left_behind() -> str | None:
    """After a switch of bucket: what a consent for Codex's sandbox, given for the old one, now leaves out."""
    try:
        return codex_sandbox.warning() if codex_sandbox.status()["state"] == "incomplete" else None
    except (AgentMemoryError, OSError):  # the bucket is set: a config.toml we cannot read only loses the hint
        return None


def config_show(args: argparse.Namespace) -> Rendered:
    values = config.load()
    result = {"config_file": str(paths.config_file()), **values}
    lines = [f"config file: {result['config_file']}", f"bucket: {values.get('bucket') or '(not set)'}"]
    lines += [f"project {name}: {root}" for root, name in sorted(values.get("projects", {}).items())]
    return result, "\n".join(lines), OK


def save(args: argparse.Namespace) -> Rendered:
    ctx = Context()
    if args.retry_all:  # the older spellings of `pending retry`, for notes only
        return told_retries(outbox.retry([NOTES], ctx))
    if args.retry:
        return told_upload(outbox.retry([NOTES], ctx, names.note_id(args.retry)))
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
                next_step="agent-memory save --file PATH with a file that exists and that you can read",
            ) from exc
    if file is None and sys.stdin.isatty():
        raise UsageError(
            "No note body: pass --file PATH or pipe the text on stdin.",
            next_step="agent-memory save --title T --file NOTE.md",
        )
    return sys.stdin.buffer.read()


def search(args: argparse.Namespace) -> Rendered:
    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit must be between 1 and 1000.", next_step="agent-memory search QUERY --limit 10")
    if "\x00" in args.query:
        raise UsageError("The query cannot contain NUL characters.", next_step="agent-memory search TEXT (plain text)")
    if args.skills:
        return search_skills(args)
    found, freshness = search_project(Context(), args.query, limit=args.limit, kind=args.kind, offline=args.offline)
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
        notice(f"{waiting} {'is' if found['pending'] == 1 else 'are'} pending upload: run {outbox.RETRY}.")
    sync, code = told_sync(freshness)
    result = {"project": found["project"], "query": found["query"], "results": found["results"], "sync": sync}
    return {**result, "pending": found["pending"]}, "\n".join(lines), code


def read(args: argparse.Namespace) -> Rendered:
    if args.skill or args.revision:
        return read_skill(args)
    if not args.target:
        raise UsageError("Which note? Give its id.", next_step="agent-memory search QUERY (lists ids)")
    found = read_note(Context(), args.target, fresh=args.fresh)
    content = found["content"]
    return {**found, "content": content.decode("utf-8", errors="replace")}, content, OK


def _project_line(project: dict[str, str]) -> str:
    line = f"{project['project']} ({project['root']})"
    return line if project["found"] == "mapped" else f"{line}, found as {how_found(project)}"


def status(args: argparse.Namespace) -> Rendered:
    result = machine_status(Context())
    project = result["project"]
    lines = [
        f"agent-memory {result['version']}",
        f"config file: {result['config_file']}",
        f"bucket: {result['bucket'] or '(not set: run agent-memory bootstrap)'}",
        *_store_lines(result["store"]),
        f"project: {_project_line(project) if project else result['project_error']}",
        f"last refresh: {result['last_refresh'] or 'never'}",
        f"pending uploads: {len(result['pending'])}",
    ]
    for entry in result["pending"]:
        error = entry["last_error"] or {}
        lines.append(
            f"  {entry['id']} -> {entry['bucket']}/{entry['path']}, {entry['age_seconds']} s old, "
            f"{plural(entry['attempts'], 'attempt')}, "
            f"last error: {error.get('reason', '-')}: {error.get('detail', '-')}"
        )
    for manifest in result["pending_skills"]:
        lines.append(f"  skill {manifest['name']} revision {manifest['revision']}: publication pending")
    for item in result["damaged"]:
        lines.append(f"  DAMAGED {item['kind']} {item['id']}: {item['problem']} (see agent-memory pending)")
    if result["damaged_notes"]:
        lines.append(f"damaged notes (searched as text, their fields not shown): {len(result['damaged_notes'])}")
        lines += [f"  DAMAGED note {item['id']}: {item['problem']}" for item in result["damaged_notes"]]
    lines.append(f"installed skills: {len(result['skills'])}")
    for skill in result["skills"]:
        edited = " (edited locally)" if skill["modified"] else ""
        revision = skill["revision"] or "package"
        lines.append(f"  {skill['agent']}: {skill['name']} @ {revision}{edited} in {skill['path']}")
    lines += [f"hooks ({h['agent']}): {h['note']}" for h in result["hooks"]]
    lines += sandbox_lines(result["codex_sandbox"]) if result["codex_sandbox"]["state"] != "not allowed" else []
    if result["store"]["status"] == "refused":  # as every command that uses the store would: exit 4
        notice(render(result["store"]["detail"], result["store"]["next"]))
        return result, "\n".join(lines), ACCESS
    return result, "\n".join(lines), OK


def _store_lines(store: dict[str, object]) -> list[str]:
    if store["status"] in ("ok", "not set"):
        return [f"store: {store['status']}"] if store["status"] == "ok" else []
    if store["status"] == "not checked":
        return [f"store: not checked ({store['detail']})"]
    return [f"store: {str(store['status']).upper()}: {store['detail']}", f"  Next: {store['next']}"]


def pending_list(args: argparse.Namespace) -> Rendered:
    result = safe_tree(outbox.entries(uploads.KINDS))  # store errors carry outside text
    lines = []
    for entry in result["notes"]:
        error = (entry["last_error"] or {}).get("detail") or "not tried yet"
        attempts = plural(entry["attempts"], "attempt")
        lines.append(f"note {entry['id']} -> {entry['bucket']}/{entry['path']} ({attempts}: {error})")
    for entry in result["skills"]:
        error = (entry["last_error"] or {}).get("detail") or "not tried yet"
        lines.append(f"skill {entry['name']} revision {entry['revision']} -> {entry['bucket']} ({error})")
    for item in result["damaged"]:
        lines.append(f"DAMAGED {item['kind']} {item['id']}: {item['problem']} (kept in {item['file']})")
    if result["damaged"]:
        notice("Damaged uploads are never retried: export their bytes (pending export ID --to PATH), then discard.")
    return result, "\n".join(lines) or "Nothing is pending.", OK


def pending_retry(args: argparse.Namespace) -> Rendered:
    ctx = Context()
    if args.id is not None:
        return told_upload(outbox.retry(uploads.KINDS, ctx, args.id))
    return told_retries(outbox.retry(uploads.KINDS, ctx))


def pending_export(args: argparse.Namespace) -> Rendered:
    written = outbox.export(args.id, args.to)
    return {"id": args.id, "written": written}, "\n".join(f"Wrote {path}" for path in written), OK


def pending_discard(args: argparse.Namespace) -> Rendered:
    result = outbox.discard(args.id, Context())
    text = (
        f"Discarded the pending {result['kind']} {args.id}: it will not be uploaded. "
        f"Its plan and exact bytes are kept in {result['kept']}."
    )
    return result, text, OK
