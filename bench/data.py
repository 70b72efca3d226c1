"""Deterministic synthetic notes in the bucket layout: realistic Markdown with frontmatter, of mixed sizes.

Sizes follow a log-normal distribution (median about 1.5 KB, clipped to about 300 B .. 20 KB). A few notes, spread
evenly over time, contain the query phrase, once in a different letter case, so that search must be
case-insensitive to find them all.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

QUERY = "stale lockfile"
PHRASE = f'"{QUERY}"'  # as one phrase, as agent-memory search takes it (unquoted, its words match apart)
WORDS = "lockfile worker killed"  # three words of the sentence that holds QUERY, in another order
PROJECT = "bench"
MATCHES_PER_1000 = 3  # notes that contain QUERY, per thousand notes (at least 3)
MIN_BYTES, MEDIAN_BYTES, MAX_BYTES = 300, 1350, 20_000

_VOCABULARY = (
    "cache index bucket upload retry timeout deadline parser token schema migration worker queue thread lock "
    "handler request response header payload config setting default fallback module package import version "
    "release build wheel test fixture mock emulator endpoint listing page cursor offset batch commit revision "
    "snapshot manifest checksum hash digest encoding unicode newline path folder symlink permission owner "
    "branch merge rebase conflict patch diff review comment docstring type hint annotation coverage benchmark "
    "latency throughput memory leak profile trace log warning error exception traceback signal process "
    "interpreter startup import time compile bytecode virtualenv dependency pin constraint resolver wheel "
    "sdist metadata entry point console script argument option flag subcommand help usage exit code stderr "
    "stdout pipe shell environment variable home directory platform linux macos windows container image "
    "registry credential secret redact guard scan rule refuse pending confirm verify idempotent atomic rename "
    "replace fsync journal crash recovery rollback backup restore skill agent codex claude hook reminder "
    "budget session checkpoint note title tag source project mapping resolve canonical absolute relative"
)
_WORDS = _VOCABULARY.split()
VOCABULARY_WORDS = tuple(_WORDS)  # the words notes are made of (some repeated)
_TAGS = ("ci", "tests", "perf", "hub", "cache", "search", "release", "docs", "windows", "flaky", "design")
_AGENTS = ("codex", "claude-code", "unknown")
_FILES = ("helper/agent_memory/memory/cache.py", "tests/test_hub_memory.py", "pyproject.toml", "README.md", "cli.py")


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(6, 18))
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def _body(rng: random.Random, target: int, title: str, needle: str | None) -> str:
    parts = [f"# {title}", ""]
    size = len(title) + 3
    while size < target:
        roll = rng.random()
        if roll < 0.15:
            block = f"## {_sentence(rng)[:-1]}"
        elif roll < 0.30:
            block = "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
        elif roll < 0.38:
            code = "\n".join(f"    {rng.choice(_WORDS)}_{rng.choice(_WORDS)}({rng.randint(0, 99)})" for _ in range(3))
            block = f"```python\n{code}\n```"
        else:
            block = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
        parts += [block, ""]
        size += len(block) + 2
    if needle is not None:  # the phrase in a random body line, never only in the title
        at = rng.randrange(2, len(parts) + 1)
        parts.insert(at, f"Root cause: a {needle} left behind by the killed worker, see {rng.choice(_FILES)}.")
    return "\n".join(parts)


def _note(rng: random.Random, created: datetime, needle: str | None) -> tuple[str, bytes]:
    note_id = f"{created:%Y%m%d-%H%M%S}-{created.microsecond:06d}-{rng.getrandbits(40):010x}"
    title = _sentence(rng)[:-1][:80]
    tags = rng.sample(_TAGS, rng.randint(0, 3))
    front = [
        "---",
        f"id: {note_id}",
        f"title: {title}",
        f"kind: {'checkpoint' if rng.random() < 0.2 else 'note'}",
        f"project: {PROJECT}",
        f"created: '{created:%Y-%m-%dT%H:%M:%SZ}'",
        f"agent: {rng.choice(_AGENTS)}",
        "sources:",
        *(f"- {source}" for source in rng.sample(_FILES, rng.randint(0, 2))),
        *(["tags:", *(f"- {tag}" for tag in tags)] if tags else []),
        "---",
        "",
    ]
    target = int(min(MAX_BYTES, max(MIN_BYTES, rng.lognormvariate(0, 0.8) * MEDIAN_BYTES)))
    header = "\n".join(front) + "\n"
    text = header + _body(rng, target - len(header), title, needle) + "\n"
    return note_id, text.encode()


def notes(count: int, seed: int = 1) -> dict[str, bytes]:
    """`count` notes as `{bucket path: bytes}`; the same count and seed always give the same bytes."""
    rng = random.Random(f"{seed}-{count}")
    matching = set(range(0, count, max(1, count // max(3, count * MATCHES_PER_1000 // 1000))))
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    step = timedelta(days=700) / max(count, 1)  # ids sort by time: spread them over about two years
    found = {}
    for index in range(count):
        needle = None
        if index in matching:
            needle = QUERY if index % 2 else QUERY.title()
        note_id, data = _note(rng, start + step * index + timedelta(microseconds=index), needle)
        found[f"projects/{PROJECT}/notes/{note_id}.md"] = data
    return found


def matching_ids(files: dict[str, bytes], query: str = QUERY) -> set[str]:
    """Ids of the notes whose bytes contain `query`, ignoring case (ASCII): the expected search result."""
    wanted = query.lower().encode()
    return {path.rsplit("/", 1)[1][:-3] for path, data in files.items() if wanted in data.lower()}


def skill_folder(files: int = 40, seed: int = 1) -> dict[str, bytes]:
    """A skill of `files` files: SKILL.md (name bench-skill) and references/scripts of mixed sizes."""
    rng = random.Random(f"skill-{seed}")
    folder = {
        "SKILL.md": (
            "---\nname: bench-skill\ndescription: A synthetic skill for the agent-memory benchmarks.\n---\n\n"
            "# Bench skill\n\n" + "\n".join(_sentence(rng) for _ in range(20)) + "\n"
        ).encode()
    }
    for index in range(1, files):
        where = "references" if index % 3 else "scripts"
        body = "\n\n".join(" ".join(_sentence(rng) for _ in range(4)) for _ in range(rng.randint(1, 12)))
        folder[f"{where}/part-{index:02d}.md"] = f"# Part {index}\n\n{body}\n".encode()
    return folder
