"""Search of a project's cache pack and its pending notes: every word of the query, in any order.

A query is words and "quoted phrases" (`terms`); a note matches when its title or body holds every one of them,
literally and ignoring case (no stemming, no synonyms: what the agent typed is what is looked for). Frontmatter
is never matched, the title aside. Ranking: the whole query as one phrase in the title, then in the body, then
every term in the title, then every term anywhere; newest first within each. When no note holds every term, the
notes that hold the most of them are shown, marked partial.

What is current: a note that another corrects (`corrects` in its frontmatter) is shown right after its
correction, marked `corrected_by`; `current` leaves corrected notes out. Setup verification notes (bootstrap's)
are left out unless asked for (`everything`, or kind `setup`).

Damaged notes (see `notes.fields`) are searched as text and ranked last; their fields are never shown.
An online search refreshes the cache first, which also heals it (see `refresh`); `--offline` answers from the cache
as it stands.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from types import ModuleType

from ..config.context import Context
from ..display import safe_tree
from ..outbox.listing import summary
from ..store.base import Freshness
from . import pack
from .cache import ProjectCache, cache_not_written
from .notes import SETUP_ID_PREFIX, SETUP_TITLE, body_text, object_path
from .pending import NOTES, pending, pending_candidate

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import TypeVar

    from ..contract import Found, Match, NoteHit
    from .shape import Candidate, HasId, PendingCandidate, WaitingNote

    Chained = TypeVar("Chained", bound=HasId)  # a search's candidates, or anything else with an id

MAX_MATCHES_PER_NOTE = 3
MATCH_TEXT_MAX = 200
SETUP = "setup"  # the kind that asks for setup verification notes
PARTIAL = 4  # the tier of a note that lacks a term (the tiers: see `Query.rank`)
# A query's bounds: each term costs a search of every candidate note, so an unbounded query (a pasted file) would
# cost minutes; agents write a handful of words. Within them, no query costs more than twice a one-word search.
MAX_TERMS = 32
MAX_QUERY_CHARS = 1000

Key = tuple[int, int, str, str, int]  # (terms found, -tier, created, id, order): the larger, the better


class Query:
    """A query's terms (lowercased, UTF-8) and the whole query as one phrase."""

    def __init__(self, text: str) -> None:
        self.words = terms(text)
        self.terms = [word.encode() for word in self.words]
        self.phrase = " ".join(self.words).encode()
        self.every = frozenset(self.terms)
        # the partial count looks for the longest terms first: the rarest, as a rule, so a note that cannot
        # reach the count of those kept is told after the fewest searches
        self.longest_first = sorted(self.terms, key=len, reverse=True)

    def rank(
        self, title: bytes, data: bytes | bytearray, body: int, stop: int, *, partial: bool = False, least: int = 1
    ) -> tuple[int, int, frozenset[bytes]]:
        """`(tier, terms found, the terms found)` of a note whose title is `title` and body `data[body:stop]`
        (lowercased), the title line ending at `body - 1`: tier 0 when the whole query is in the title, 1 in the
        body, 2 every term in the title, 3 every term anywhere, PARTIAL when a term is missing.

        Unless `partial`, a note that lacks a term is told as soon as one is missing (`(PARTIAL, 0, ∅)`): a query
        of many words then costs little more than one on the notes that cannot match. With `partial`, a note
        found to hold fewer than `least` terms is told the same way."""
        every = self.every
        if self.phrase in title:
            return 0, len(self.terms), every
        if data.find(self.phrase, body, stop) != -1:
            return 1, len(self.terms), every
        if partial:  # one search per term, title and body at once: the count is what ranks a partial note
            start, spare, found = body - len(title) - 1, len(self.terms) - least, []
            for term in self.longest_first:
                if data.find(term, start, stop) != -1:
                    found.append(term)
                elif (spare := spare - 1) < 0:  # fewer than `least` terms now: ranked below every note kept
                    return PARTIAL, 0, frozenset()
            if len(found) < len(self.terms):
                return PARTIAL, len(found), frozenset(found)
        in_title = True
        for term in self.terms:
            if term not in title:
                in_title = False
                if data.find(term, body, stop) == -1:
                    return PARTIAL, 0, frozenset()
        return (2 if in_title else 3), len(self.terms), every


def query_problem(query: str) -> str | None:
    """Why `query` is refused (longer than MAX_QUERY_CHARS, more than MAX_TERMS words and phrases), or None."""
    if len(query) > MAX_QUERY_CHARS:
        return f"The query is {len(query):,} characters long; a query has at most {MAX_QUERY_CHARS:,}."
    if (count := len(terms(query))) > MAX_TERMS:
        return f"The query has {count} words and phrases; a query has at most {MAX_TERMS}."
    return None


def terms(query: str) -> list[str]:
    """The terms of `query`, lowercased, in order, each once: its "quoted phrases" and its other words. A quote
    mark left open counts as a space; so do runs of spaces inside a phrase."""
    parts = query.lower().split('"')
    found: list[str] = []
    for index, part in enumerate(parts):
        quoted = index % 2 == 1 and index != len(parts) - 1  # after an odd quote mark, and closed
        for term in [" ".join(part.split())] if quoted else part.split():
            if term and term not in found:
                found.append(term)
    return found


def matching_lines(text: str, query: Query) -> list[Match]:
    """The body lines of `text` (numbered from 1, as `read --body` prints them) that hold the most terms of the
    query, at most MAX_MATCHES_PER_NOTE, in their order. A match in the title only shows no line."""
    if not query.words:
        return []
    scored = []
    for number, line in enumerate(body_text(text).splitlines(), start=1):
        lowered = line.lower()
        count = sum(word in lowered for word in query.words)
        if count:
            scored.append((-count, number, line.strip()))
    best = sorted(heapq.nsmallest(MAX_MATCHES_PER_NOTE, scored), key=lambda item: item[1])
    return [
        {"line": number, "text": line if len(line) <= MATCH_TEXT_MAX else line[:MATCH_TEXT_MAX] + "…"}
        for _count, number, line in best
    ]


def is_setup(fields: dict[str, str]) -> bool:
    """Whether a note is a setup verification note (bootstrap's: see `setup.bootstrap`)."""
    return fields.get("id", "").startswith(SETUP_ID_PREFIX) and fields.get("title") == SETUP_TITLE


def search(
    cache: ProjectCache,
    query: str,
    *,
    limit: int,
    kind: str | None,
    pending_notes: list[WaitingNote],
    current: bool = False,
    everything: bool = False,
) -> list[NoteHit]:
    """Results for `query`: cached notes and pending entries of the same project (see `outbox`), best first, each
    correction just before the note it corrects.

    One pass over the pack, keeping only the best `limit` candidates (a second one lists the notes with the most
    terms when none has them all, or fills the places of corrected notes that `current` left out). A cached copy
    that fails its check is shown without matching lines and removed from the cache (`cache.discarded`), to be
    fetched again.
    """
    wanted = Query(query)

    def accepted(fields: dict[str, str]) -> bool:
        if kind == SETUP:
            return is_setup(fields)
        return (everything or not is_setup(fields)) and (kind is None or fields.get("kind") == kind)

    waiting = {str(entry["id"]): pending_candidate(entry) for entry in pending_notes}
    corrections: dict[str, tuple[str, str]] = {}  # of every note, shown or not: {id: (the id it corrects, created)}
    ranked, full = _ranked(cache, wanted, limit, accepted, waiting, corrections, partial=False)
    if not ranked and len(wanted.terms) > 1:
        ranked, full = _ranked(cache, wanted, limit, accepted, waiting, None, partial=True)
    for note_id, entry in waiting.items():
        if entry["fields"]["corrects"]:
            corrections.setdefault(note_id, (entry["fields"]["corrects"], entry["fields"]["created"]))
    corrected_by = _corrected_by(corrections)
    if current and any(c["id"] in corrected_by for c in ranked):
        ranked = [c for c in ranked if c["id"] not in corrected_by]
        if full:  # the best `limit` held corrected notes: look again, leaving them out
            excluded = set(corrected_by)
            ranked = _ranked(
                cache, wanted, limit, lambda f: accepted(f) and f["id"] not in excluded, waiting, None, partial=False
            )[0]
    ranked = _in_chains(ranked, corrections)[:limit]
    copies = cache.verified([found["id"] for found in ranked if not found["pending"]])
    damaged = {note_id for note_id, data in copies.items() if data is None and cache.note_file(note_id).exists()}
    results: list[NoteHit] = []
    for found in ranked:
        if found["pending"] and found["entry"] is not None:  # (a pending note is listed with its entry)
            text = found["entry"]["content"]
        else:
            data = copies[found["id"]]
            text = data.decode("utf-8", errors="replace") if data is not None else ""
        fields = found["fields"]
        result: NoteHit = {
            "id": found["id"],
            "title": fields.get("title") or "",
            "kind": fields.get("kind") or "",
            "created": fields.get("created") or "",
            "agent": fields.get("agent") or "",
            "machine": fields.get("machine") or "",
            "damaged": fields.get("problem") or None,
            "path": object_path(cache.project, found["id"]),
            "pending": found["pending"],
            "corrects": fields.get("corrects") or None,
            "corrected_by": corrected_by.get(found["id"]),
            "partial": found["found"] < len(wanted.terms),
            "missing": [word for word in wanted.words if word.encode() not in found["has"]],
            "matches": matching_lines(text, wanted),
        }
        results.append(safe_tree(result))  # all of it comes from the note: shown to people and models alike
    if damaged:
        try:
            cache.discard(damaged)
        except OSError:  # a read-only cache (a sandbox): their text is not shown all the same
            pass
    return results


def _ranked(
    cache: ProjectCache,
    query: Query,
    limit: int,
    accepted: Callable[[dict[str, str]], bool],
    waiting: dict[str, PendingCandidate],
    corrections: dict[str, tuple[str, str]] | None,
    *,
    partial: bool,
) -> tuple[list[Candidate], bool]:
    """The best `limit` candidates of the pack and the pending notes (those `accepted`), best first, and whether
    the pack held more candidates than were kept. Only notes with every term, unless `partial`: then those with
    the most terms (at least one)."""

    def consume(hits: Iterator[pack.Hit]) -> tuple[list[tuple[Key, dict[str, str], frozenset[bytes]]], set[str], bool]:
        best: list[tuple[Key, dict[str, str], frozenset[bytes]]] = []  # a heap: memory stays bounded
        seen: set[str] = set()
        overflow = False
        wanted = len(query.terms)
        for count, hit in enumerate(hits):
            data = hit.data
            least = best[0][0][0] if len(best) == limit else 1  # a note with fewer terms ranks below every one kept
            title = bytes(data[hit.title : hit.body - 1])
            tier, found, has = query.rank(title, data, hit.body, hit.stop, partial=partial, least=least)
            if found < wanted and (not partial or not found):
                overflow = overflow or (partial and len(best) == limit)  # a partial note below every one kept
                continue
            fields = pack.fields(hit.header)
            if fields["id"] in waiting:
                seen.add(fields["id"])
            if not accepted(fields):
                continue
            key = (found, -tier, fields.get("created", ""), fields["id"], -count)
            if len(best) < limit:
                heapq.heappush(best, (key, fields, has))
            else:
                overflow = True
                if key > best[0][0]:
                    heapq.heapreplace(best, (key, fields, has))
        return best, seen, overflow

    # a pack found damaged halfway is repaired and read again: `consume` starts afresh each time
    best, seen, overflow = cache.search_hits(() if partial else tuple(query.terms), consume, corrections)
    candidates: list[tuple[Key, dict[str, str], frozenset[bytes], bool, WaitingNote | None]]
    candidates = [(key, fields, has, False, None) for key, fields, has in best]
    for note_id, entry in waiting.items():
        if note_id in seen or not accepted(entry["fields"]):
            continue  # once uploaded and cached, the note is shown from the cache
        text, body = entry["text"], entry["body"]
        tier, found, has = query.rank(text[: body - 1], text, body, len(text), partial=partial)
        if found == len(query.terms) or (partial and found):
            fields = entry["fields"]
            candidates.append(((found, -tier, fields["created"], note_id, 1), fields, has, True, entry["entry"]))
    if partial and candidates:  # the notes with the most terms, and only them
        most = max(key[0] for key, *_rest in candidates)
        candidates = [candidate for candidate in candidates if candidate[0][0] == most]
    candidates.sort(key=lambda candidate: candidate[0], reverse=True)
    ranked: list[Candidate] = [
        {"id": fields["id"], "fields": fields, "found": key[0], "has": has, "pending": is_pending, "entry": entry}
        for key, fields, has, is_pending, entry in candidates[:limit]
    ]
    return ranked, overflow


def _corrected_by(corrections: dict[str, tuple[str, str]]) -> dict[str, str]:
    """`{id: the newest note that corrects it}`, from `{id: (the id it corrects, created)}`."""
    newest: dict[str, tuple[str, str]] = {}
    for note_id, (target, created) in corrections.items():
        if target not in newest or (created, note_id) > newest[target]:
            newest[target] = (created, note_id)
    return {target: note_id for target, (_created, note_id) in newest.items()}


def _in_chains(ranked: list[Chained], corrections: dict[str, tuple[str, str]]) -> list[Chained]:
    """`ranked` with each chain of corrections together, where its best-ranked note is: the latest correction
    first, the note it corrects right after it, and so on to the first note of the chain."""

    def chain(note_id: str) -> tuple[str, int]:  # the chain's first note, and how many corrections away
        root, depth, visited = note_id, 0, {note_id}
        while (target := corrections.get(root, ("", ""))[0]) and target not in visited:
            visited.add(target)
            root, depth = target, depth + 1
        return root, depth

    placed: dict[str, list[tuple[int, int, Chained]]] = {}
    for order, found in enumerate(ranked):
        root, depth = chain(found["id"])
        placed.setdefault(root, []).append((-depth, order, found))
    return [found for group in placed.values() for _depth, _order, found in sorted(group, key=lambda m: m[:2])]


def _refreshed(ctx: Context, cache: ProjectCache) -> Freshness:
    """Refresh the cache; where it cannot be written (Codex's sandbox without the consent, a read-only home),
    answer from it as it is, stale, as `--offline` would: a search must not fail for want of a write."""
    try:
        fresh: Freshness = _refresh().refresh(ctx.store, cache)  # (the module is loaded here: typed as it is)
        return fresh
    except OSError as exc:
        if (reason := cache_not_written(exc)) is None:
            raise  # a store's folder, a full disk: not this case
        return Freshness(error=reason)


def search_project(
    ctx: Context,
    query: str,
    *,
    limit: int = 10,
    kind: str | None = None,
    offline: bool = False,
    current: bool = False,
    everything: bool = False,
) -> tuple[Found, Freshness]:
    """Refresh the cache of the command's project unless `offline`, then search it: `({"project", "query",
    "results", "pending"}, how fresh the cache is)`."""
    cache = ProjectCache(ctx.bucket, ctx.project)
    freshness = Freshness(offline=True) if offline else _refreshed(ctx, cache)
    mine = pending(ctx)

    def find() -> list[NoteHit]:
        return search(cache, query, limit=limit, kind=kind, pending_notes=mine, current=current, everything=everything)

    results = find()
    if cache.discarded and freshness.fresh:
        # fetch the damaged copies just found, and show them as they are
        freshness = _refresh().refresh(ctx.store, cache)
        results = find()
    waiting = summary().get(NOTES.name, 0)
    return {"project": ctx.project, "query": query, "results": results, "pending": waiting}, freshness


def _refresh() -> ModuleType:
    """`refresh`, loaded by an online search only: with the change feed, the listing and the store's network libraries
    behind it, it is what `search --offline` (the agents' most frequent command) must never pay for."""
    from . import refresh

    return refresh
