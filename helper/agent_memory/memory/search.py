"""Case-insensitive literal search over a project's cache pack and its pending notes, most recent first.

Damaged notes (see `notes.fields`) are searched as text and ranked last; their fields are never shown.
An online search refreshes the cache first, which also heals it (see `refresh`); `--offline` answers from the cache
as it stands.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Iterator
from types import ModuleType

from ..config.context import Context
from ..contract import Found, Match, NoteHit
from ..display import safe_tree
from ..outbox.listing import summary
from ..store.base import Freshness
from . import pack
from .cache import ProjectCache, cache_not_written
from .notes import object_path
from .pack import HEADER_FIELDS
from .pending import NOTES, pending

MAX_MATCHES_PER_NOTE = 3
MATCH_TEXT_MAX = 200


def matching_lines(text: str, query: str) -> list[Match]:
    """The first few lines of `text` that contain `query`, with 1-based line numbers in the file.

    Body lines come first: a frontmatter line (title, tags) is shown only when the body has no match.
    """
    if not query:
        return []
    wanted = query.lower()
    lines = text.splitlines()
    body_start = _body_start(lines)
    numbered = list(enumerate(lines, start=1))
    return _matches(numbered[body_start:], wanted) or _matches(numbered[:body_start], wanted)


def _body_start(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def _matches(numbered: list[tuple[int, str]], wanted: str) -> list[Match]:
    found = []
    for number, line in numbered:
        if wanted in line.lower():
            line = line.strip()
            found.append({"line": number, "text": line if len(line) <= MATCH_TEXT_MAX else line[:MATCH_TEXT_MAX] + "…"})
            if len(found) == MAX_MATCHES_PER_NOTE:
                break
    return found


def search(
    cache: ProjectCache,
    query: str,
    *,
    limit: int,
    kind: str | None,
    pending_notes: list[dict[str, object]],
) -> list[NoteHit]:
    """Results for `query`: cached notes, then pending entries of the same project (see `outbox`).

    One pass over the pack, keeping only the best `limit` candidates. A cached copy that fails its check is
    shown without matching lines and removed from the cache (`cache.discarded`), to be fetched again.
    """
    wanted = query.lower()
    pending = {entry["id"]: entry for entry in pending_notes if wanted in entry["content"].lower()}
    best, seen = cache.search_pack(wanted.encode("utf-8"), lambda headers: _best(headers, limit, kind, pending))
    candidates = [{**fields, "pending": False} for _created, _id, _n, fields in best]
    for note_id, entry in pending.items():
        if note_id not in seen:  # once uploaded and cached, the note is shown from the cache
            candidates.append({**{key: entry.get(key) or "" for key in HEADER_FIELDS}, "pending": True, "entry": entry})
    ranked = sorted(
        (c for c in candidates if kind is None or c.get("kind") == kind),
        key=lambda c: (c.get("created") or "", c["id"]),
        reverse=True,
    )[:limit]
    copies = cache.verified([found["id"] for found in ranked if not found["pending"]])
    damaged = {note_id for note_id, data in copies.items() if data is None and cache.note_file(note_id).exists()}
    results = []
    for found in ranked:
        if found["pending"]:
            text = found["entry"]["content"]
        else:
            data = copies[found["id"]]
            text = data.decode("utf-8", errors="replace") if data is not None else ""
        result = {
            "id": found["id"],
            "title": found.get("title") or "",
            "kind": found.get("kind") or "",
            "created": found.get("created") or "",
            "agent": found.get("agent") or "",
            "machine": found.get("machine") or "",
            "damaged": found.get("problem") or None,
            "path": object_path(cache.project, found["id"]),
            "pending": found["pending"],
            "matches": matching_lines(text, query),
        }
        results.append(safe_tree(result))  # all of it comes from the note: shown to people and models alike
    if damaged:
        with contextlib.suppress(OSError):  # a read-only cache (a sandbox): their text is not shown all the same
            cache.discard(damaged)
    return results


def _best(
    headers: Iterator[bytes], limit: int, kind: str | None, pending: dict[str, object]
) -> tuple[list[tuple[str, str, int, dict[str, str]]], set[str]]:
    """The `limit` newest matching records of `kind` (a heap, so memory stays bounded), and which pending ids
    the pack holds."""
    best: list[tuple[str, str, int, dict[str, str]]] = []
    seen = set()
    for count, header in enumerate(headers):
        fields = pack.fields(header)
        if fields["id"] in pending:
            seen.add(fields["id"])
        if kind is not None and fields.get("kind") != kind:
            continue
        item = (fields.get("created", ""), fields["id"], count, fields)
        if len(best) < limit:
            heapq.heappush(best, item)
        elif item[:2] > best[0][:2]:
            heapq.heapreplace(best, item)
    return best, seen


def _refreshed(ctx: Context, cache: ProjectCache) -> Freshness:
    """Refresh the cache; where it cannot be written (Codex's sandbox without the consent, a read-only home),
    answer from it as it is, stale, as `--offline` would: a search must not fail for want of a write."""
    try:
        return _refresh().refresh(ctx.store, cache)
    except OSError as exc:
        if (reason := cache_not_written(exc)) is None:
            raise  # a store's folder, a full disk: not this case
        return Freshness(error=reason)


def search_project(
    ctx: Context, query: str, *, limit: int = 10, kind: str | None = None, offline: bool = False
) -> tuple[Found, Freshness]:
    """Refresh the cache of the command's project unless `offline`, then search it: `({"project", "query",
    "results", "pending"}, how fresh the cache is)`."""
    cache = ProjectCache(ctx.bucket, ctx.project)
    freshness = Freshness(offline=True) if offline else _refreshed(ctx, cache)
    mine = pending(ctx)
    results = search(cache, query, limit=limit, kind=kind, pending_notes=mine)
    if cache.discarded and freshness.fresh:
        # fetch the damaged copies just found, and show them as they are
        freshness = _refresh().refresh(ctx.store, cache)
        results = search(cache, query, limit=limit, kind=kind, pending_notes=mine)
    waiting = summary().get(NOTES.name, 0)
    return {"project": ctx.project, "query": query, "results": results, "pending": waiting}, freshness


def _refresh() -> ModuleType:
    """`refresh`, loaded by an online search only: with the change feed, the listing and the store's network libraries
    behind it, it is what `search --offline` (the agents' most frequent command) must never pay for."""
    from . import refresh

    return refresh
