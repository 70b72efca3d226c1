"""Writes the view's site: one page (`index.html`, its script and style inline and hashed in its Content-Security-
Policy) and the notes as data files that the page's script loads as it needs them (`data/list-N.js`: the timeline's
fields and each note's text, newest first, CHUNK notes a file; `data/note-N.js`: the same notes' rendered Markdown and
frontmatter). A `file://` page cannot fetch other files in Chromium, so the data files are scripts, each one call to
the page's own `amChunk`.

The timeline's order is the order of `search` with an empty query (newest first, each chain of corrections together),
computed here once, so that the first page needs the first file only. Memory stays bounded by a file's notes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .. import commands
from ..clock import age_seconds, id_time
from ..memory.notes import body_text
from ..memory.search import _in_chains  # the order `search` shows: the same code, not a copy
from . import output, sources
from .charts import charts
from .markdown import to_html
from .sync_diffs import sync_view

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..memory.shape import HasId

CHUNK = 500  # notes per data file: the first page needs only the first file
WRITE_SECONDS = 3.5  # Markdown is rendered until then (the newest CHUNK notes always), unless `render_all`
HERE = Path(__file__).resolve().parent
DAY = 86400


def build(bucket: str, projects: list[str], out: Path, *, days: int, render_all: bool = False) -> dict[str, int]:
    """Write the site of `projects` into `out` (see `output`): what was written, for the command's result."""
    started = time.monotonic()
    notes = [note for project in projects for note in sources.cached_notes(bucket, project)]
    held = {note.id for note in notes}
    waiting = [note for note in sources.pending_notes(bucket, set(projects)) if note.id not in held]
    notes += waiting
    order = _ordered(notes)
    chunk_of = {note.id: index // CHUNK for index, note in enumerate(order)}
    correctors: dict[str, list[str]] = {}
    for note in sorted(notes, key=lambda n: (n.fields.get("created", ""), n.id), reverse=True):
        if note.fields.get("corrects"):
            correctors.setdefault(note.fields["corrects"], []).append(note.id)
    used, searches = sources.receipts()
    since = int(time.time()) - days * DAY
    damaged = [
        {"what": f"note {n.id}", "detail": n.fields["problem"], "next": _read_line(n.id)}
        for n in notes
        if n.fields.get("problem")
    ]
    staging = output.staged(out)
    try:
        texts = sources.NoteTexts(bucket)
        for number, start in enumerate(range(0, len(order), CHUNK)):
            listed, shown = [], []
            for note in order[start : start + CHUNK]:
                text, body = _text(texts, note)
                listed.append(_listed(note, body, correctors, chunk_of, used, since))
                shown.append(_shown(note, text, body, None))
            output.write(staging, f"data/list-{number}.js", _chunk("list", number, listed))
            output.write(staging, f"data/note-{number}.js", _chunk("note", number, shown))
        files = sources.sync_files(bucket)
        health = sources.health(bucket, projects, damaged)
        site = {
            "projects": projects,
            "count": len(order),
            "chunks": (len(order) + CHUNK - 1) // CHUNK,
            "facets": _facets(order),
            "days": days,
            "setup": sum(1 for note in order if note.setup),
        }
        page = _page(
            site=site,
            sync=sync_view(files),
            health=health,
            charts=charts(order, searches),
            generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        )
        output.write(staging, "index.html", page)
        rendered = _render(staging, order, texts, None if render_all else started + WRITE_SECONDS)
        output.publish(staging, out)
    except BaseException:
        output.discard(staging)
        raise
    return {
        "notes": len(order),
        "pending": len(waiting),
        "rendered": rendered,
        "conflicts": sum(1 for file in files if file["conflict"]),
        "health": sum(len(items) for items in health.values()),
    }


def _text(texts: sources.NoteTexts, note: sources.Note) -> tuple[str | None, str | None]:
    """A note's text and its body (None, None: its cached copy no longer matches what was verified)."""
    data = texts.of(note)
    if data is None:
        return None, None
    text = data.decode("utf-8", errors="replace")
    return text, body_text(text)


def _shown(note: sources.Note, text: str | None, body: str | None, html: str | None) -> dict[str, object]:
    """What a note's page needs beyond the timeline's fields: its rendered Markdown (None: shown as text) and its
    frontmatter as written."""
    front = text[: len(text) - len(body)] if text is not None and body is not None else ""
    return {"h": html, "f": front, "s": "pending" if note.pending else "cache"}


def _render(staging: Path, order: list[sources.Note], texts: sources.NoteTexts, deadline: float | None) -> int:
    """Render the notes' Markdown, newest first: the first data file's whole, then more until `deadline` (None: every
    note), each data file written again with it; how many were rendered."""
    rendered = 0
    for number, start in enumerate(range(0, len(order), CHUNK)):
        if number and deadline is not None and time.monotonic() >= deadline:
            break
        shown = []
        for note in order[start : start + CHUNK]:
            text, body = _text(texts, note)
            late = number and deadline is not None and time.monotonic() >= deadline
            html = None if body is None or late else to_html(body)
            rendered += html is not None
            shown.append(_shown(note, text, body, html))
        output.replace(staging, f"data/note-{number}.js", _chunk("note", number, shown))
    return rendered


def _ordered(notes: list[sources.Note]) -> list[sources.Note]:
    """The notes in the order of `search` with an empty query: newest first, each chain of corrections together."""
    newest = sorted(notes, key=lambda n: (n.fields.get("created", ""), n.id), reverse=True)
    corrections = {n.id: (n.fields["corrects"], n.fields.get("created", "")) for n in notes if n.fields.get("corrects")}
    by_id = {n.id: n for n in notes}
    ids: list[HasId] = [{"id": n.id} for n in newest]
    return [by_id[found["id"]] for found in _in_chains(ids, corrections)]


def _listed(
    note: sources.Note,
    body: str | None,
    correctors: dict[str, list[str]],
    chunk_of: dict[str, int],
    used: dict[str, list[int]],
    since: int,
) -> dict[str, object]:
    """What the timeline and the search box need of a note (short keys: there may be 50,000 of them)."""
    fields = note.fields
    found, read = used.get(note.id, [0, 0])
    corrects = fields.get("corrects") or ""
    return {
        "i": note.id,
        "p": note.project,
        "t": fields.get("title") or "",
        "k": fields.get("kind") or "",
        "a": fields.get("agent") or "",
        "m": fields.get("machine") or "",
        "c": fields.get("created") or "",
        "g": (fields.get("tags") or "").split(),
        "r": [corrects, chunk_of.get(corrects, -1)] if corrects else None,
        "y": [[other, chunk_of.get(other, -1)] for other in correctors.get(note.id, [])],
        "q": note.pending,
        "d": fields.get("problem") or "",
        "b": body,
        "u": [found, read],
        "n": _recall(note, max(found, read), since),
        "z": note.setup,
        "o": sources.note_path(note),
    }


NEVER_RECALLED, NOT_YET = 1, 2  # a note no session found or read since `since`: older than that, or younger


def _recall(note: sources.Note, last: int, since: int) -> int:
    """0 when a session found or read the note since `since` (the start of `view --days`), else NEVER_RECALLED, or
    NOT_YET for a note written after `since` (a note saved a minute ago was never given the time to be recalled)."""
    if last >= since:
        return 0
    age = age_seconds(note.fields.get("created") or "")
    written = time.time() - age if age is not None else id_time(note.id)
    return NOT_YET if written is not None and written >= since else NEVER_RECALLED


def _facets(notes: Iterable[sources.Note]) -> dict[str, list[str]]:
    """The values each filter offers: those of the notes the timeline lists (a setup note is listed under kind
    `setup` alone, as `search` does, so its own fields offer nothing the list would not show)."""
    found: dict[str, set[str]] = {"kind": set(), "agent": set(), "machine": set(), "tag": set(), "project": set()}
    for note in notes:
        if note.setup:
            continue
        fields = note.fields
        found["kind"].add(fields.get("kind") or "")
        found["agent"].add(fields.get("agent") or "")
        found["machine"].add(fields.get("machine") or "")
        found["tag"].update((fields.get("tags") or "").split())
        found["project"].add(note.project)
    return {key: sorted(value - {""}) for key, value in found.items()}


def _chunk(kind: str, number: int, records: Sequence[Mapping[str, object]]) -> bytes:
    """A data file: one call of the page's `amChunk`, its data as JSON (a JSON text is a JavaScript expression)."""
    data = json.dumps(records, ensure_ascii=False, separators=(",", ":"))
    return f'amChunk("{kind}",{number},{data});\n'.encode()


def _read_line(note_id: str) -> str:
    return commands.line("read", note_id)


# -- the page -------------------------------------------------------------------------------------------------


def _page(**values: object) -> bytes:
    """index.html: the template rendered with autoescape on; its script and style inline, allowed by their hashes."""
    import jinja2

    script = (HERE / "page.js").read_text(encoding="utf-8")
    style = (HERE / "page.css").read_text(encoding="utf-8")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE), autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["json_data"] = _json_data
    policy = "; ".join(
        (
            "default-src 'none'",
            f"script-src '{_hash(script)}' 'strict-dynamic'",  # the page's script, and the data files it adds
            f"style-src '{_hash(style)}'",
            "img-src 'none'",
            "font-src 'none'",
            "connect-src 'none'",
            "media-src 'none'",
            "object-src 'none'",
            "frame-src 'none'",
            "worker-src 'none'",
            "manifest-src 'none'",
            "form-action 'none'",
            "base-uri 'none'",
        )
    )
    template = env.get_template("page.html")
    return template.render(policy=policy, script=script, style=style, **values).encode()


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _json_data(value: object) -> str:
    """`value` as JSON to put inside a `<script type="application/json">`: no `<`, `>` or `&` in it, so no text
    can close the element or open another (the filter's result is marked safe by the template)."""
    import markupsafe

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return markupsafe.Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
