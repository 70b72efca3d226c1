"""The recall benchmark's corpus: engineering memory as agents write it, and the notes each query means.

The target notes and their queries are data (`recall_notes.py`); distractors are generated deterministically
from the same vocabulary (checkpoints, reviews, stand-ups), so that most query words also appear in notes
that are not meant. Two corrections (`corrects`) make pairs that some queries mean together.

`build()` gives the files in the bucket layout and the queries with the ids of the notes they mean; the same
arguments always give the same bytes. `check()` proves each query has its declared style and that every word
and quoted phrase of it is in each note it means (title or body, ignoring case): a literal search can find
them all, so a miss is the search's, never the corpus's.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import recall_notes

from agent_memory import guard
from agent_memory.memory import notes as note_format

PROJECT = "recall"
DISTRACTORS = 300


@dataclass(frozen=True)
class Query:
    """A query, its style, and the ids of the notes it means."""

    style: str
    text: str
    expected: tuple[str, ...]


@dataclass
class Corpus:
    """The files (`{bucket path: bytes}`), the queries, and which note id each target key became."""

    files: dict[str, bytes]
    queries: list[Query]
    distractors: int
    ids: dict[str, str] = field(default_factory=dict)


def terms(query: str) -> list[str]:
    """The quoted phrases of `query`, then its other words: what every-word matching needs to find."""
    phrases = re.findall(r'"([^"]+)"', query)
    return phrases + re.sub(r'"[^"]*"', " ", query).split()


def _distractor(rng: random.Random) -> tuple[str, str, str]:
    area = rng.choice(recall_notes.AREAS)
    title = rng.choice(recall_notes.TITLES).format(area=area)
    title = title[0].upper() + title[1:]
    picked = rng.sample(recall_notes.SENTENCES, rng.randint(3, 7))
    if title.startswith("Checkpoint") or rng.random() < 0.3:
        cut = rng.randint(1, len(picked) - 1)
        body = "Done:\n" + "\n".join(f"- {s}" for s in picked[:cut]) + "\n\nNext:\n"
        body += "\n".join(f"- {s}" for s in picked[cut:])
        return title, body, "checkpoint" if title.startswith("Checkpoint") else "note"
    return title, " ".join(picked[:3]) + "\n\n" + " ".join(picked[3:]), "note"


def _note_id(created: datetime, rng: random.Random) -> str:
    return f"{created:%Y%m%d-%H%M%S}-{created.microsecond:06d}-{rng.getrandbits(40):010x}"


def build(distractors: int = DISTRACTORS, seed: int = 1) -> Corpus:
    """The notes and the queries, deterministic for a given `distractors` count and `seed`."""
    rng = random.Random(f"recall-{seed}-{distractors}")
    start = datetime(2024, 1, 8, 9, 0, tzinfo=timezone.utc)
    # every note gets its own moment within two years; a correction always comes after what it corrects
    moments = sorted(rng.sample(range(2 * 365 * 24 * 60), len(recall_notes.TARGETS) + distractors))
    order = list(range(len(recall_notes.TARGETS) + distractors))
    rng.shuffle(order)
    slot = dict(zip(order, moments, strict=True))
    keys = {target.key: index for index, target in enumerate(recall_notes.TARGETS)}
    for index, target in enumerate(recall_notes.TARGETS):
        if target.corrects is not None and slot[index] < slot[keys[target.corrects]]:
            slot[index], slot[keys[target.corrects]] = slot[keys[target.corrects]], slot[index]

    corpus = Corpus(files={}, queries=[], distractors=distractors)
    entries: list[tuple[int, str, str, str, str | None, tuple[str, ...], str | None]] = []
    for index, target in enumerate(recall_notes.TARGETS):
        entries.append((index, target.title, target.body, target.kind, target.corrects, target.tags, target.key))
    for index in range(len(recall_notes.TARGETS), len(recall_notes.TARGETS) + distractors):
        title, body, kind = _distractor(rng)
        tags = tuple(rng.sample(recall_notes.TAGS, rng.randint(0, 2)))
        entries.append((index, title, body, kind, None, tags, None))
    for index, title, body, kind, corrects, tags, key in sorted(entries, key=lambda entry: slot[entry[0]]):
        created = start + timedelta(minutes=slot[index], seconds=rng.randrange(60))
        note_id = _note_id(created, rng)
        if key is not None:
            corpus.ids[key] = note_id
        meta = {
            "id": note_id,
            "title": title,
            "kind": kind,
            "project": PROJECT,
            "created": f"{created:%Y-%m-%dT%H:%M:%SZ}",
            "agent": rng.choice(recall_notes.AGENTS),
            "machine": rng.choice(recall_notes.MACHINES),
            "sources": [],
            "tags": list(tags),
            "corrects": corpus.ids[corrects] if corrects is not None else None,
        }
        corpus.files[note_format.object_path(PROJECT, note_id)] = note_format.render(meta, f"# {title}\n\n{body}\n")
    for target in recall_notes.TARGETS:
        corpus.queries += [Query(style, text, (corpus.ids[target.key],)) for style, text in target.queries]
    for style, text, keys in recall_notes.PAIRS:
        corpus.queries.append(Query(style, text, tuple(corpus.ids[key] for key in keys)))
    return corpus


def _first(text: str, word: str) -> int:
    return text.lower().find(word.lower())


def _style_problem(query: str, style: str, title: str, body: str) -> str | None:
    """Why `query` is not of `style` for the note (`title`, `body`), or None if it is."""
    text = f"{title}\n{body}"
    words = query.split()
    if style == "phrase":
        return None if query.lower() in text.lower() else "is not in the note as written"
    if style == "quoted":
        return None if '"' in query and len(terms(query)) > 1 else "needs a quoted phrase and another word"
    if style == "case":
        return None if not all(word in text for word in terms(query)) else "has the note's own letter case"
    if len(words) < 2:
        return "needs two words or more"
    if style in ("words", "reordered") and query.lower() in text.lower():
        return "stands in the note as a phrase"
    positions = [_first(text, word) for word in words]
    if style == "words":
        return None if positions == sorted(positions) else "is not in the note's order"
    if style == "reordered":
        return None if positions != sorted(positions) else "is in the note's order"
    if style == "title+body":
        in_title = [word for word in words if _first(title, word) >= 0]
        only_body = [word for word in words if _first(title, word) < 0]
        return None if in_title and only_body else "needs a word of the title and one found only in the body"
    return f"has an unknown style {style!r}"


def check(corpus: Corpus) -> None:
    """RuntimeError unless every query has its style and every term of it is in each of its expected notes."""
    problems = []
    by_id = {corpus.ids[target.key]: target for target in recall_notes.TARGETS}
    for query in corpus.queries:
        if query.style not in recall_notes.STYLES:
            problems.append(f"{query.text!r}: unknown style {query.style!r}")
        for note_id in query.expected:
            target = by_id[note_id]
            text = f"{target.title}\n{target.body}".lower()
            missing = [term for term in terms(query.text) if term.lower() not in text]
            if missing:
                problems.append(f"{query.text!r}: {missing} not in {target.key}")
        first = by_id[query.expected[0]]
        if len(query.expected) == 1 and (problem := _style_problem(query.text, query.style, first.title, first.body)):
            problems.append(f"{query.text!r} ({query.style}) {problem}")
    if len(by_id) != len(recall_notes.TARGETS) or len(corpus.files) != len(recall_notes.TARGETS) + corpus.distractors:
        problems.append("note ids are not unique")
    refused = [path for path, data in corpus.files.items() if guard.scan_bytes(data)]
    if refused:
        problems.append(f"the secret guard would refuse {refused}")
    if problems:
        raise RuntimeError("the recall corpus is inconsistent:\n" + "\n".join(problems))


def literal_candidates(corpus: Corpus, query: Query) -> int:
    """How many notes hold every term of `query` (ignoring case), expected or not: how ambiguous it is."""
    wanted = [term.lower() for term in terms(query.text)]
    return sum(all(term in data.decode().lower() for term in wanted) for data in corpus.files.values())


def styles_of(queries: Iterable[Query]) -> dict[str, int]:
    """How many queries of each style, in the order of `recall_notes.STYLES`."""
    counts = {style: 0 for style in recall_notes.STYLES}
    for query in queries:
        counts[query.style] += 1
    return counts
