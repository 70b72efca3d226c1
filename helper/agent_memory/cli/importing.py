"""The `import` command: existing memories (Claude Code's, Codex's, Cline's, a Markdown folder) become notes."""

from __future__ import annotations

import argparse

from .. import commands
from ..config.context import Context
from ..display import plural, safe
from ..errors import OK, PENDING, REFUSED, AgentMemoryError
from ..errors import render as error_lines
from ..importing import run as importing
from ..importing.sources import LABELS, TOOLS
from ..outbox.kinds import RETRY
from .parsing import Rendered, with_json
from .render import freshness_of, notice

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Import, ImportRow, ImportSource
    from ..importing.files import File

PROGRESS_MIN = 10  # files to save from which each one is shown on stderr as it goes


def declare(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Import the memories you already have into this folder's project, one note per Markdown file (tags: "
        "imported and the tool): Claude Code's auto memory for this checkout, Codex's memories and Cline's "
        "memory-bank/ (every one found, by default), or the folder PATH. Importing again adds nothing; a file "
        "changed since is saved as a correction of its earlier note."
    )
    with_json(p)
    p.add_argument("path", nargs="?", metavar="PATH", help="a folder of Markdown files (default: every source found)")
    p.add_argument(
        "--from", dest="tool", choices=TOOLS, help="only this tool's memories (with PATH: the tag its notes get)"
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be imported, and save nothing")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    found = importing.sources(ctx, args.path, args.tool)
    if args.tool and args.path is None and not found[0].found:
        raise AgentMemoryError(
            f"Nothing to import from {LABELS[args.tool]}: {found[0].why}.",
            next_step=f"{commands.line('import')} (every source found), "
            f"or {commands.line('import', 'DIR')} (a folder of Markdown)",
        )
    ran = importing.run(ctx, found, dry_run=args.dry_run, progress=None if args.json else _progress)
    told = freshness_of(ran["freshness"])
    if told["status"] != "fresh":
        notice(
            f"The bucket could not be read ({told['reason']}: {told['detail']}): a file imported from another machine "
            "may be imported again."
        )
    result: Import = {
        "project": ran["project"],
        "dry_run": ran["dry_run"],
        "sources": ran["sources"],
        "files": ran["files"],
        "counts": ran["counts"],
        "freshness": told,
    }
    lines = [_source_line(source) for source in result["sources"]]
    lines += [_file_line(row) for row in result["files"]]
    lines.append(_summary(result))
    return result, "\n".join(lines), _code(result, args)


def _progress(count: int, total: int, file: File) -> None:
    if total >= PROGRESS_MIN:
        notice(f"Importing {count}/{total}: {safe(file.source)}")


def _source_line(source: ImportSource) -> str:
    if not source["found"]:
        return f"{source['tool']}: not found ({source['path']})"
    return f"{source['tool']}: {plural(source['files'], 'Markdown file')} in {source['path']}"


def _file_line(row: ImportRow) -> str:
    action, where = row["action"], row["source"]
    if action == "refused":
        return f"refused     {where}: {row['reason']}"
    if action == "empty":
        return f"empty       {where} (skipped)"
    if action == "unchanged":
        return f"unchanged   {where} (note {row['id']})"
    done = "would be saved" if row["status"] == "planned" else f"{row['status']} as {row['id']}"
    corrects = f", correcting {row['corrects']}" if row["corrects"] else ""
    return f"{action:<11} {where}: {row['title']} ({done}{corrects})"


def _summary(result: Import) -> str:
    counts = result["counts"]
    parts = [
        plural(counts["new"], "new note"),
        plural(counts["correction"], "correction"),
        f"{counts['unchanged']} unchanged",
        f"{counts['refused']} refused",
    ]
    if result["dry_run"]:
        return f"Dry run, nothing was saved. Importing into project {result['project']} would make: {', '.join(parts)}."
    return f"Imported into project {result['project']}: {', '.join(parts)}."


def _code(result: Import, args: argparse.Namespace) -> int:
    """5 when some file was refused (the others are imported), else 75 while some note is pending, else 0."""
    counts = result["counts"]
    again = commands.line("import", *([args.path] if args.path else []), *(["--from", args.tool] if args.tool else []))
    if counts["refused"]:
        if result["dry_run"]:
            files = plural(counts["refused"], "file would not be", "files would not be")
        else:
            files = plural(counts["refused"], "file was not", "files were not")
        notice(
            error_lines(
                f"{files} imported (listed as refused, with the line and rule of any credential); the others "
                f"{'would be' if result['dry_run'] else 'were'} imported.",
                f"remove the secret (say where it is kept instead) or fix what is listed, then run: {again}",
            )
        )
        return REFUSED
    if counts["pending"]:
        notice(f"{plural(counts['pending'], 'imported note')} kept on this machine only for now: run {RETRY}.")
        return PENDING
    return OK
