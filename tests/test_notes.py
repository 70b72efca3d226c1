"""The note format and the checks on input (the secret guard has its own tests, in test_guard.py)."""

from __future__ import annotations

import re

import pytest

from agent_memory import clock, names
from agent_memory.errors import ContentRefused, UsageError
from agent_memory.memory import notes


def test_ids_are_unique_and_sort_by_creation_time():
    from datetime import datetime, timedelta, timezone

    start = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    ids = [clock.new_id(start + timedelta(microseconds=i * 7919)) for i in range(200)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 200
    same_instant = {clock.new_id(start) for _ in range(1000)}
    assert len(same_instant) == 1000
    assert re.fullmatch(r"20260102-030405-678901-[0-9a-f]{10}", ids[0])


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "a..b", "x" * 129, "a b", "a\\b", "a\n", "a\r"])
def test_invalid_ids_are_refused(bad):
    with pytest.raises(UsageError):
        names.note_id(bad)


@pytest.mark.parametrize(
    ("body", "title", "expected"),
    [
        ("intro line\n\n## The decision ##\ntext", None, "The decision"),
        ("\n\n  first line here\nsecond", None, "first line here"),
        ("- a bullet as first line", None, "a bullet as first line"),
        ("# heading", "  Given   title ", "Given title"),
        ("x" * 300, None, "x" * 119 + "…"),
    ],
)
def test_title_comes_from_option_then_heading_then_first_line(body, title, expected):
    assert notes.derive_title(body, title) == expected


def test_render_and_parse_round_trip_with_awkward_values():
    meta = {
        "id": "20260102-030405-678901-0123456789",
        "title": 'Decision: "quotes", colons: and # hashes',
        "kind": "checkpoint",
        "project": "demo",
        "created": "2026-01-02T03:04:05Z",
        "agent": "codex",
        "session": None,
        "sources": ["src/a.py:12", "https://example.org/x?y=1"],
        "tags": ["db", "ünïcode"],
        "corrects": None,
    }
    data = notes.render(meta, "Body line\n---\nnot frontmatter")
    parsed, body = notes.parse(data)
    assert parsed == {k: v for k, v in meta.items() if v is not None}
    assert body == "Body line\n---\nnot frontmatter\n"
    assert list(parsed) == ["id", "title", "kind", "project", "created", "agent", "sources", "tags"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"", "empty"),
        (b"  \n\t\n", "empty"),
        (b"\xff\xfeabc", "not UTF-8"),
        (b"a\x00b", "NUL"),
        (b"x" * (1024 * 1024 + 1), "limit"),
    ],
)
def test_bad_bodies_are_refused(raw, fragment):
    with pytest.raises(ContentRefused, match=fragment):
        notes.decode_body(raw)


def test_a_body_of_exactly_the_limit_is_accepted():
    assert len(notes.decode_body(b"y" * (1024 * 1024))) == 1024 * 1024
