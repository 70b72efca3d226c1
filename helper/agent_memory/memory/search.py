"""Case-insensitive literal search over a project's cache pack and its pending notes, most recent first.

Kept free of network and YAML imports: `search --offline` must start about as fast as the interpreter.
"""

from __future__ import annotations

from typing import Any

from .cache import HEADER_FIELDS, ProjectCache
from .notes import object_path

MAX_MATCHES_PER_NOTE = 3
MATCH_TEXT_MAX = 200


def _headers_matching(pack: bytes, needle: bytes) -> list[bytes]:
    """Header lines of the pack records whose text contains `needle` (all records if it is empty)."""
    if not needle:
        return [chunk[: chunk.find(b"\n")] for chunk in pack.split(b"\x00")[1:]]
    headers = []
    pos = pack.find(needle)
    while pos != -1:
        start = pack.rfind(b"\x00", 0, pos)
        header_end = pack.find(b"\n", start)
        if pos <= header_end:  # inside a header (id, agent...): search that record's text instead
            pos = pack.find(needle, header_end + 1)
            continue
        headers.append(pack[start + 1 : header_end])
        next_record = pack.find(b"\x00", pos)
        if next_record == -1:
            break
        pos = pack.find(needle, next_record)
    return headers


def matching_lines(text: str, query: str) -> list[dict[str, Any]]:
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


def _matches(numbered: list[tuple[int, str]], wanted: str) -> list[dict[str, Any]]:
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
    pending_notes: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Results for `query`: cached notes, then pending entries of the same project (see `outbox`)."""
    candidates: dict[str, dict[str, Any]] = {}
    for header in _headers_matching(cache.read_pack(), query.lower().encode("utf-8")):
        fields = dict(zip(HEADER_FIELDS, header.decode("utf-8", errors="replace").split("\t"), strict=False))
        candidates[fields["id"]] = {**fields, "pending": False}
    for entry in pending_notes:
        if entry["id"] in candidates or query.lower() not in entry["content"].lower():
            continue
        fields = {key: entry.get(key) or "" for key in HEADER_FIELDS}
        candidates[entry["id"]] = {**fields, "pending": True, "content": entry["content"]}
    ranked = sorted(
        (c for c in candidates.values() if kind is None or c.get("kind") == kind),
        key=lambda c: (c.get("created") or "", c["id"]),
        reverse=True,
    )[:limit]
    results = []
    for found in ranked:
        text = found.pop("content", None)
        if text is None:
            try:
                text = cache.note_file(found["id"]).read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                text = ""
        results.append(
            {
                "id": found["id"],
                "title": found.get("title") or "",
                "kind": found.get("kind") or "",
                "created": found.get("created") or "",
                "agent": found.get("agent") or "",
                "path": object_path(cache.project, found["id"]),
                "pending": found["pending"],
                "matches": matching_lines(text, query),
            }
        )
    return results


def search_project(query: str, *, limit: int = 10, kind: str | None = None, offline: bool = False) -> dict[str, Any]:
    """Refresh the current project's cache (unless `offline`), then search it: the command's JSON result."""
    from .. import config as config_file
    from .. import outbox
    from .projects import resolve

    config = config_file.load()
    bucket = config_file.bucket(config)
    project = resolve(config=config)["project"]
    cache = ProjectCache(bucket, project)
    if offline:
        sync = {"status": "stale", "reason": "offline", "detail": "--offline: the bucket was not consulted"}
    else:
        sync = _refresh(bucket, cache)
    mine = outbox.pending_notes(bucket, project)
    waiting = outbox.summary()["notes"]
    return {
        "project": project,
        "query": query,
        "results": search(cache, query, limit=limit, kind=kind, pending_notes=mine),
        "sync": sync,
        "pending": waiting,
    }


def _refresh(bucket: str, cache: ProjectCache) -> dict[str, Any]:
    from ..store import StoreError, open_store
    from .refresh import refresh

    try:
        refresh(open_store(bucket), cache)
    except StoreError as exc:
        return {"status": "stale", "reason": exc.reason, "detail": exc.detail}
    return {"status": "fresh", "reason": None, "detail": None}
