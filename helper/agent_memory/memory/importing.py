"""`agent-memory import`: the memories a user already has (Claude Code's, Codex's, Cline's, any Markdown folder)
become notes of the command's project, one note per file, saved through the outbox like every note.

What was imported is read from the notes themselves, never from a local record, so it holds on a fresh machine
and across machines: an imported note has the tag `imported` and, as its source, the file's path (relative to
the checkout for files inside it). A file whose text is the body of the newest note with its source (or of any
imported note of the project) is unchanged and adds nothing; a file whose text differs is saved as a
correction of that newest note (`corrects`), which stays, as every note does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import guard, paths
from ..config.context import Context
from ..display import safe
from ..errors import ContentRefused, UsageError
from ..fsutil import locked
from . import notes, pack, saving
from .cache import ProjectCache
from .import_files import File, read_files
from .import_sources import TOOLS, Source, claude_source, cline_memory_bank, codex_memories, folder_source
from .pending import pending
from .refresh import refresh

TAG = "imported"
Progress = Callable[[int, int, File], None]


def sources(ctx: Context, path: str | None, tool: str | None) -> list[Source]:
    """The sources an import reads: the folder `path`, else the one of `tool`, else every tool's."""
    if tool is not None and tool not in TOOLS:
        raise UsageError(f"Unknown source {tool!r}.", next_step=f"add --from with one of {', '.join(TOOLS)}")
    checkout = Path(ctx.mapping()["root"])
    if path is not None:
        return [folder_source(path, tool, checkout)]
    here = ctx.folder
    finders = {
        "claude": lambda: _claude(here, checkout),
        "codex": codex_memories,
        "cline": lambda: cline_memory_bank(here, checkout),
    }
    return [finders[name]() for name in ((tool,) if tool else TOOLS)]


def _claude(here: Path, checkout: Path) -> Source:
    """Claude Code's memory of the folder it would be started in: here, else the mapped checkout's root."""
    found = claude_source(here)
    if not found.found and checkout != here:
        other = claude_source(checkout)
        return other if other.found else found
    return found


def run(ctx: Context, found: list[Source], *, dry_run: bool, progress: Progress | None = None) -> dict[str, object]:
    """Import every file of the `found` sources that exist: `{"project", "dry_run", "sources", "files", "counts"}`
    and the refresh's freshness under `"freshness"` (for the command to tell).

    Every source is read, and every limit checked, before anything is saved.
    """
    project = ctx.project
    files: list[tuple[Source, File]] = []
    for source in found:
        seen = {file.path for _source, file in files}  # a folder two sources share (a setting may point anywhere)
        files += [(source, file) for file in read_files(source) if file.path not in seen] if source.found else []
    cache = ProjectCache(ctx.bucket, project)
    # one import at a time on this machine: a second one, started meanwhile, then finds the first one's notes
    with contextlib.nullcontext() if dry_run else locked(paths.state_dir() / "import.lock"):
        freshness = refresh(ctx.store, cache)  # notes imported on other machines count too
        known = _imported_notes(ctx, cache)
        rows = [_plan(source, file, known) for source, file in files]
        to_save = [row for row in rows if row["action"] in ("new", "correction")]
        for count, row in enumerate(to_save, start=1):
            if not dry_run:
                if progress is not None:
                    progress(count, len(to_save), row["file"])
                _save(ctx, row)
    listed = [_shown(row, dry_run) for row in rows]
    counts = {action: sum(row["action"] == action for row in listed) for action in _ACTIONS}
    counts["pending"] = sum(row["status"] == "pending" for row in listed)
    return {
        "project": project,
        "dry_run": dry_run,
        "sources": [_source_entry(source, files) for source in found],
        "files": listed,
        "counts": counts,
        "freshness": freshness,
    }


_ACTIONS = ("new", "correction", "unchanged", "refused", "empty")


def _imported_notes(ctx: Context, cache: ProjectCache) -> list[dict[str, object]]:
    """Every imported note of the project (cached or pending here): `{"id", "created", "corrects", "body",
    "sources"}`. Only notes whose fields pass `notes.fields` count: a damaged one is never trusted for them."""

    def tagged(headers: Iterator[bytes]) -> list[str]:  # the pack's text holds no tags (see `pack`): its headers do
        return [f["id"] for f in map(pack.fields, headers) if TAG in f["tags"].split()]

    ids = cache.search_pack(b"", tagged)
    texts = [(note_id, data) for note_id, data in cache.verified(ids).items() if data is not None]
    texts += [(str(entry["id"]), entry["content"].encode("utf-8")) for entry in pending(ctx)]
    found = []
    for note_id, data in texts:
        checked, problem = notes.fields(note_id, data)
        if problem is not None:
            continue
        meta, body = notes.split(data.decode("utf-8").removeprefix("\ufeff"))
        tags, sources = meta.get("tags") or [], meta.get("sources") or []
        if TAG in tags:
            note = {"id": note_id, "created": checked["created"], "corrects": meta.get("corrects")}
            found.append({**note, "body": body, "sources": sources})
    return found


def _body(data: bytes) -> str:
    """A file's text as the body of its note reads back (see `notes.render` and `notes.split`)."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    return (text if text.endswith("\n") else text + "\n").lstrip("\r\n")


def _plan(source: Source, file: File, known: list[dict[str, object]]) -> dict[str, object]:
    """What importing `file` means: new, a correction of an earlier import, unchanged, refused or empty."""
    row: dict[str, object] = {"file": file, "tool": source.tool, "action": "refused", "id": None, "corrects": None}
    row.update({"status": None, "reason": file.problem, "findings": [], "title": _title(file)})
    if file.data is None:
        return row
    text = file.data.decode("utf-8").removeprefix("\ufeff")
    if not text.strip() or "\x00" in text:
        row.update(action="empty" if not text.strip() else "refused", reason=_empty_or_binary(text))
        return row
    body = _body(file.data)
    latest = _latest([note for note in known if file.source in note["sources"]])
    same = [note for note in known if note["body"] == body]  # imported from another path, or on another machine
    if (latest and latest["body"] == body) or (not latest and same):
        row.update(action="unchanged", id=(latest or same[-1])["id"])
        return row
    in_body = guard.scan(text)
    if in_body or guard.scan(file.source) or guard.scan(str(row["title"])):  # what `save` would refuse
        row["findings"] = [{"line": f.line, "rule": f.rule, "label": f.label} for f in in_body]
        what = "; ".join(f"line {f.line}: {f.label} (rule {f.rule})" for f in in_body) or "in its path or title"
        row["reason"] = f"looks like it contains a credential ({what})"
        return row
    row.update(action="correction" if latest else "new", corrects=latest["id"] if latest else None)
    return row


def _latest(imports: list[dict[str, object]]) -> dict[str, object] | None:
    """The newest import of one file: the one no other corrects (the newest of them, should there be several)."""
    corrected = {note["corrects"] for note in imports}
    heads = [note for note in imports if note["id"] not in corrected] or imports
    return max(heads, key=lambda note: (note["created"], str(note["id"])), default=None)


def _empty_or_binary(text: str) -> str:
    return "is empty" if not text.strip() else "contains NUL bytes: only text can be imported"


def _title(file: File) -> str:
    """The note's title: the file's first heading (outside its own frontmatter), else the file's name."""
    text = (file.data or b"").decode("utf-8", "replace").removeprefix("\ufeff")
    with contextlib.suppress(notes.Malformed):
        text = notes.split(text)[1]  # Claude Code's memory files start with their own frontmatter
    heading = notes.first_heading(text)
    name = Path(file.name).name
    title = heading or (name[:-3] if name.lower().endswith(".md") else name) or name
    return " ".join(safe(title).split())[: notes.TITLE_MAX * 2]


def _save(ctx: Context, row: dict[str, object]) -> None:
    file: File = row["file"]
    try:
        result = saving.save(
            ctx,
            file.data,
            title=str(row["title"]),
            tags=[TAG, str(row["tool"])],
            sources=[file.source],
            corrects=row["corrects"],
            agent=str(row["tool"]) if row["tool"] in TOOLS else None,
        )
    except (ContentRefused, UsageError) as exc:  # this file only: the others are imported
        row.update(action="refused", reason=f"{exc.message} ({exc.next_step})", corrects=None)
        return
    row.update(id=result["id"], status=result["status"])


def _shown(row: dict[str, object], dry_run: bool) -> dict[str, object]:
    """A row of the result, as printed and in `--json` (every string from outside made safe to print)."""
    file: File = row["file"]
    status = row["status"]
    if dry_run and row["action"] in ("new", "correction"):
        status = "planned"
    return {
        "path": safe(str(file.path)),
        "source": safe(file.source),
        "tool": row["tool"],
        "title": row["title"],
        "action": row["action"],
        "id": row["id"],
        "corrects": row["corrects"],
        "status": status,
        "reason": safe(row["reason"]) if row["reason"] else None,
        "findings": row["findings"],
    }


def _source_entry(source: Source, files: list[tuple[Source, File]]) -> dict[str, object]:
    count = sum(1 for owner, _file in files if owner is source)
    return {"tool": source.tool, "path": safe(str(source.folder)), "found": source.found, "files": count}
