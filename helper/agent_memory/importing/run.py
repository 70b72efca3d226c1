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
from ..contents import sha256
from ..display import safe
from ..errors import ContentRefused, UsageError
from ..fsutil import locked
from ..memory import notes, pack, saving
from ..memory.cache import ProjectCache
from ..memory.pending import NOTES, pending_copy
from ..memory.refresh import refresh
from ..outbox import plans
from .files import File, find_files, read
from .sources import TOOLS, Source, claude_source, cline_memory_bank, codex_memories, folder_source

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import ImportRow, ImportSource
    from .shape import ImportedNote, ImportRun, Row

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
    finders: dict[str, Callable[[], Source]] = {
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


def run(ctx: Context, found: list[Source], *, dry_run: bool, progress: Progress | None = None) -> ImportRun:
    """Import every file of the `found` sources that exist: `{"project", "dry_run", "sources", "files", "counts"}`
    and the refresh's freshness under `"freshness"` (for the command to tell).

    Every source's folders are walked, and their limits checked, before any file is read or saved; then each
    file is read, checked and saved in turn, and only its row is kept: memory does not grow with the files.
    """
    project = ctx.project
    files: list[tuple[Source, File]] = []
    for source in found:
        seen = {file.path for _source, file in files}  # a folder two sources share (a setting may point anywhere)
        files += [(source, file) for file in find_files(source) if file.path not in seen] if source.found else []
    cache = ProjectCache(ctx.bucket, project)
    listed: list[ImportRow] = []
    # one import at a time on this machine: a second one, started meanwhile, then finds the first one's notes
    with contextlib.nullcontext() if dry_run else locked(paths.state_dir() / "import.lock"):
        freshness = refresh(ctx.store, cache)  # notes imported on other machines count too
        known = _Imported(ctx, cache)
        for count, (source, file) in enumerate(files, start=1):
            data, problem = read(source, file) if file.problem is None else (None, file.problem)
            row = _plan(source, file, data, problem, known)
            if row["action"] in ("new", "correction") and not dry_run and data is not None:  # (read: never None)
                if progress is not None:
                    progress(count, len(files), file)
                _save(ctx, row, data)
            listed.append(_shown(row, dry_run))
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
_READ_AT_ONCE = 16  # cached notes read together: at most 16 MiB, and one read of the checksums for each 16


class _Imported:
    """The imported notes of the project (cached or pending here), as much as an import compares them: by
    source, each note's `{"id", "created", "corrects", "body"}` (`body`: the SHA-256 of its body); by the SHA-256
    of a body, the id of the last note with it. Only notes whose fields pass `notes.fields` count: a damaged one
    is never trusted for them. A few notes are read at a time (`_READ_AT_ONCE`)."""

    def __init__(self, ctx: Context, cache: ProjectCache) -> None:
        self.by_source: dict[str, list[ImportedNote]] = {}
        self.by_body: dict[str, str] = {}
        ids = cache.search_pack(b"", _tagged)  # the pack's text holds no tags (see `pack`): its headers do
        for start in range(0, len(ids), _READ_AT_ONCE):
            for note_id, data in cache.verified(ids[start : start + _READ_AT_ONCE]).items():
                if data is not None:
                    self._add(note_id, data)
        for op in plans.operations():  # one pending note at a time: an import that waits may have left many
            kind, key = plans.split(op)
            try:
                found = pending_copy(key) if kind == NOTES.name else None
            except (plans.Damaged, UsageError):  # damage is for `pending` to show, never trusted here
                continue
            if found is None:
                continue
            plan, data = found
            if plan.get("bucket") == ctx.bucket and (plan.get("display") or {}).get("project") == ctx.project:
                self._add(key, data)

    def _add(self, note_id: str, data: bytes) -> None:
        checked, problem = notes.fields(note_id, data)
        if problem is not None:
            return
        meta, body = notes.split(data.decode("utf-8").removeprefix("\ufeff"))
        tags, sources = meta.get("tags") or [], meta.get("sources") or []
        if not (isinstance(tags, list) and isinstance(sources, list)) or TAG not in tags:
            return  # (`notes.fields` has held both to lists of text)
        digest = sha256(body.encode("utf-8"))
        note: ImportedNote = {
            "id": note_id,
            "created": checked["created"],
            "corrects": checked["corrects"] or None,
            "body": digest,
        }
        for source in sources:
            self.by_source.setdefault(source, []).append(note)
        self.by_body[digest] = note_id


def _tagged(headers: Iterator[bytes]) -> list[str]:
    """The ids of the pack records whose note has the import's tag."""
    return [f["id"] for f in map(pack.fields, headers) if TAG in f["tags"].split()]


def _body(data: bytes) -> str:
    """A file's text as the body of its note reads back (see `notes.render` and `notes.split`)."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    return (text if text.endswith("\n") else text + "\n").lstrip("\r\n")


def _plan(source: Source, file: File, data: bytes | None, problem: str | None, known: _Imported) -> Row:
    """What importing `file` (its bytes `data`, or why there are none) means: new, a correction of an earlier
    import, unchanged, refused or empty."""
    text = (data or b"").decode("utf-8", "replace").removeprefix("\ufeff")
    title = _title(file, text)
    row: Row = {
        "file": file,
        "tool": source.tool,
        "action": "refused",
        "id": None,
        "corrects": None,
        "status": None,
        "reason": problem,
        "findings": [],
        "title": title,
    }
    if data is None:
        return row
    if not text.strip() or "\x00" in text:
        row.update({"action": "empty" if not text.strip() else "refused", "reason": _empty_or_binary(text)})
        return row
    body = sha256(_body(data).encode("utf-8"))
    latest = _latest(known.by_source.get(file.source, []))
    same = known.by_body.get(body)  # imported from another path, or on another machine
    if (latest and latest["body"] == body) or (not latest and same):
        row.update({"action": "unchanged", "id": latest["id"] if latest else same})
        return row
    in_body = guard.scan(text)
    if in_body or guard.scan(file.source) or guard.scan(title):  # what `save` would refuse
        row["findings"] = [{"line": f.line, "rule": f.rule, "label": f.label} for f in in_body]
        what = "; ".join(f"line {f.line}: {f.label} (rule {f.rule})" for f in in_body) or "in its path or title"
        row["reason"] = f"looks like it contains a credential ({what})"
        if in_body:  # the heading is shortened: a token cut there would no longer be found and masked whole
            row["title"] = _title(file, guard.redact(text))
        return row
    row.update({"action": "correction" if latest else "new", "corrects": latest["id"] if latest else None})
    return row


def _latest(imports: list[ImportedNote]) -> ImportedNote | None:
    """The newest import of one file: the one no other corrects (the newest of them, should there be several)."""
    corrected = {note["corrects"] for note in imports}
    heads = [note for note in imports if note["id"] not in corrected] or imports
    return max(heads, key=lambda note: (note["created"], str(note["id"])), default=None)


def _empty_or_binary(text: str) -> str:
    return "is empty" if not text.strip() else "contains NUL bytes: only text can be imported"


def _title(file: File, text: str) -> str:
    """The note's title: the file's first heading (outside its own frontmatter, shortened), else the file's
    name (whole, so that `_shown` masks all of a token in it, then shortens it)."""
    with contextlib.suppress(notes.Malformed):
        text = notes.split(text)[1]  # Claude Code's memory files start with their own frontmatter
    heading = notes.first_heading(text)
    name = Path(file.name).name
    title = heading or (name[:-3] if name.lower().endswith(".md") else name) or name
    return " ".join(safe(title).split())


def _short(title: str) -> str:
    return title[: notes.TITLE_MAX * 2]


def _save(ctx: Context, row: Row, data: bytes) -> None:
    file = row["file"]
    try:
        result = saving.save(
            ctx,
            data,
            title=_short(str(row["title"])),
            tags=[TAG, str(row["tool"])],
            sources=[file.source],
            corrects=row["corrects"],
            agent=str(row["tool"]) if row["tool"] in TOOLS else None,
        )
    except (ContentRefused, UsageError) as exc:  # this file only: the others are imported
        row.update({"action": "refused", "reason": f"{exc.message} ({exc.next_step})", "corrects": None})
        return
    row.update({"id": result["id"], "status": result["status"]})


def _shown(row: Row, dry_run: bool) -> ImportRow:
    """A row of the result, as printed and in `--json`: every string from outside made safe to print, and any
    credential in it masked (a refused file's heading or name says what it holds, never the value)."""
    file = row["file"]
    status = row["status"]
    if dry_run and row["action"] in ("new", "correction"):
        status = "planned"
    return {
        "path": _masked(str(file.path)),
        "source": _masked(file.source),
        "tool": row["tool"],
        "title": _short(_masked(str(row["title"]))),
        "action": row["action"],
        "id": row["id"],
        "corrects": row["corrects"],
        "status": status,
        "reason": _masked(row["reason"]) if row["reason"] else None,
        "findings": row["findings"],
    }


def _masked(text: str) -> str:
    """`text` safe to print, each credential in it replaced by `[redacted]` (see `guard.redact`)."""
    return guard.redact(safe(text))


def _source_entry(source: Source, files: list[tuple[Source, File]]) -> ImportSource:
    count = sum(1 for owner, _file in files if owner is source)
    return {"tool": source.tool, "path": _masked(str(source.folder)), "found": source.found, "files": count}
