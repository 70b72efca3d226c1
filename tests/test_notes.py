"""The note format and the checks on input (the secret guard has its own tests, in test_guard.py)."""

from __future__ import annotations

import re
import time

import pytest

from agent_memory import clock, names
from agent_memory.errors import ContentRefused, UsageError
from agent_memory.memory import notes


def test_ids_are_unique_and_sort_by_creation_time():
    from datetime import datetime, timezone

    start = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    nanoseconds = int(start.replace(microsecond=0).timestamp()) * 1_000_000_000 + start.microsecond * 1000
    ids = [clock.new_id(nanoseconds + i * 7919 * 1000) for i in range(200)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 200
    same_instant = {clock.new_id(nanoseconds) for _ in range(1000)}
    assert len(same_instant) == 1000
    assert re.fullmatch(r"20260102-030405-678901-[0-9a-f]{10}", ids[0])


@pytest.mark.parametrize(
    "stamp",
    ["20260102-030405", "19700101-000000", "20240229-235959", "20991231-235959", "20261130-044012"],
)
def test_the_time_of_an_id_and_of_a_stamp_is_the_calendars(stamp):
    import calendar
    import time

    moment = calendar.timegm(time.strptime(stamp, "%Y%m%d-%H%M%S"))
    assert clock.id_time(f"{stamp}-000000-0123456789") == moment
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
    before, age, after = time.time(), clock.age_seconds(iso), time.time()
    assert age is not None and int(before - moment) <= age <= int(after - moment)


@pytest.mark.parametrize(
    "bad",
    ["20260230-000000", "20261301-000000", "20260100-000000", "20260102-240000", "19691231-235959", "2026010-0304059"]
    + ["2026-01-02-0304", "２0260102-030405", "20260102T030405", ""],
)
def test_an_id_that_names_no_real_moment_has_no_time(bad):
    assert clock.id_time(f"{bad}-000000-0123456789" if len(bad) == 15 else bad) is None


@pytest.mark.parametrize(
    "bad", ["2026-02-30T00:00:00Z", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z", "2026-1-02T03:04:05Z", "x", ""]
)
def test_a_stamp_that_is_not_one_has_no_age(bad):
    assert clock.age_seconds(bad) is None


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
    assert notes.fields(meta["id"], data) == (
        {
            "created": "2026-01-02T03:04:05Z",
            "kind": "checkpoint",
            "title": meta["title"],
            "agent": "codex",
            "machine": "",
            "corrects": "",
            "tags": "db ünïcode",
        },
        None,
    )
    assert notes.body_text(data.decode()) == body  # the body as search numbers it, without parsing the YAML


def test_notes_at_every_limit_the_helper_allows_read_back_as_valid():
    meta = {
        "id": "20260102-030405-678901-0123456789",
        "title": "T\x1b[31m: '\"#" + "é" * 229,  # a --title has up to 240 characters; a heading may hold escapes
        "kind": "note",
        "project": "p" * 100,
        "created": "2026-01-02T03:04:05Z",
        "agent": "a" * notes.NAME_MAX,
        "machine": "m" * notes.NAME_MAX,
        "session": "s" * notes.SESSION_MAX,
        "sources": ["'\"" * (notes.SOURCE_MAX // 2)] * notes.SOURCES_MAX,  # quoting doubles them
        "tags": ["\u00e9" * notes.TAG_MAX] * notes.TAGS_MAX,
        "corrects": "20260101-030405-678901-0123456789",
    }
    assert len(meta["title"]) == 2 * notes.TITLE_MAX
    values, problem = notes.fields(meta["id"], notes.render(meta, "body"))
    assert problem is None and values["machine"] == meta["machine"] and values["title"] == meta["title"]


BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    + ["title: *i"]
)
VALID = "title: t\nkind: note\ncreated: '2026-01-02T03:04:05Z'"


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        (BOMB, "the frontmatter uses YAML aliases, which notes never need"),
        ("a: &x [1, *x]\n" + VALID, "the frontmatter uses YAML aliases, which notes never need"),
        ("base: &b {kind: note}\nother:\n  <<: *b\n" + VALID, "the frontmatter uses YAML aliases"),
        ("t: &s text\nu: *s\n" + VALID, "the frontmatter uses YAML aliases"),
        ("deep: " + "[" * 9 + "]" * 9 + "\n" + VALID, "nests lists or mappings deeper than 8 levels"),
        ("deep: " + "[" * 5000, "not valid YAML"),
        (VALID + "\nbig: " + "x" * notes.FRONTMATTER_MAX, f"longer than {notes.FRONTMATTER_MAX} characters"),
        ("- a list", "not a mapping of fields"),
        ("", "not a mapping of fields"),
        ("title: [unclosed", "not valid YAML"),
        (VALID + "\nn: 1" + "0" * 5000, "not valid YAML (ValueError)"),  # more digits than int() takes
        (VALID + "\nx: !!python/object/apply:os.system [echo]", "not valid YAML (ConstructorError)"),
        ("kind: note\ncreated: '2026-01-02T03:04:05Z'", "title is missing"),
        ("title: 12\nkind: note\ncreated: '2026-01-02T03:04:05Z'", "title is not text"),
        ("title: '  '\nkind: note\ncreated: '2026-01-02T03:04:05Z'", "title is empty"),
        ("title: " + "x" * 241 + "\nkind: note\ncreated: '2026-01-02T03:04:05Z'", "title is longer than 240"),
        ("title: t\nkind: memo\ncreated: '2026-01-02T03:04:05Z'", "kind is not one of note, checkpoint"),
        ("title: t\nkind: [note]\ncreated: '2026-01-02T03:04:05Z'", "kind is not one of"),
        ("title: t\nkind: note", "created is missing"),
        ("title: t\nkind: note\ncreated: yesterday", "created is not a time"),
        ("title: t\nkind: note\ncreated: '2026-01-02T03:04:05Z and more'", "created is not a time"),
        ("title: t\nkind: note\ncreated: '2026-01-02T03:04:05'", "created is not a time"),  # text needs an offset
        ("title: t\nkind: note\ncreated: 2026-01-02", "created is a date without a time"),
        ("title: t\nkind: note\ncreated: '2026-02-30T03:04:05Z'", "created is not a valid date and time"),
        ("title: t\nkind: note\ncreated: '2026-01-02T03:04:05+25:00'", "created is not a valid date and time"),
        ("title: t\nkind: note\ncreated: '1969-12-31T23:59:59Z'", "created is before 1970"),
        ("title: t\nkind: note\ncreated: '2099-01-01T00:00:00Z'", "created is in the future"),
        (VALID + "\nagent: " + "a" * 65, "agent is longer than 64"),
        (VALID + "\nmachine: [a]", "machine is not text"),
        (VALID + "\ntags: a", "tags is not a list of text"),
        (VALID + "\ntags: [a, 1]", "tags is not a list of text"),
        (VALID + "\ntags: [" + ",".join(["a"] * 101) + "]", "tags has more than 100 items"),
        (VALID + "\nsources: [" + "x" * 501 + "]", "an item of sources is longer than 500"),
        (VALID + "\nsession: {a: 1}", "session is not text"),
        (VALID + "\ncorrects: ../x", "corrects is not a note id"),
        (VALID + "\nid: 20260102-000000-000000-other00000", "its id field is not the id in its file name"),
    ],
)
def test_frontmatter_that_cannot_be_used_makes_a_damaged_note(front, problem):
    values, found = notes.fields("20260102-030405-678901-0123456789", f"---\n{front}\n---\n\nbody\n".encode())
    assert values == {} and found is not None and problem in found


@pytest.mark.parametrize("front", [BOMB, "a: &x [1, *x]\n" + VALID])
def test_the_pure_python_parser_refuses_aliases_too(monkeypatch, front):
    import yaml

    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)  # a machine without libyaml
    assert notes.fields("x", f"---\n{front}\n---\n".encode()) == (
        {},
        "the frontmatter uses YAML aliases, which notes never need",
    )
    assert notes.fields("x", f"---\n{VALID}\n---\n".encode())[1] is None
    assert notes.fields("x", ("---\nd: " + "[" * 5000 + "\n---\n").encode())[1].startswith(
        "the frontmatter is not valid"
    )


def test_an_alias_bomb_is_refused_before_anything_is_expanded():
    import time

    start = time.perf_counter()
    for _ in range(100):
        assert notes.fields("x", f"---\n{BOMB}\n---\nbody".encode())[0] == {}
    assert time.perf_counter() - start < 2  # expanded once, it took a minute and more than 4 GB
    assert notes.parse(f"---\n{BOMB}\n---\nbody".encode()) == ({}, f"---\n{BOMB}\n---\nbody")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"no frontmatter at all\n", "no frontmatter"),
        (b"---\ntitle: t\nno closing line\n", "no closing --- line"),
        (b"---\ntitle: \xff\n---\n", "not UTF-8"),
    ],
)
def test_a_note_without_usable_frontmatter_is_damaged(raw, problem):
    assert notes.fields("x", raw) == ({}, notes.fields("x", raw)[1]) and problem in notes.fields("x", raw)[1]


@pytest.mark.parametrize(
    ("created", "expected"),
    [
        ("'2026-01-02T03:04:05Z'", "2026-01-02T03:04:05Z"),
        ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"),  # unquoted: a YAML timestamp
        ("2026-01-02 03:04:05", "2026-01-02T03:04:05Z"),  # YAML: no offset means UTC
        ("'2026-01-02T03:04:05.123456789+02:00'", "2026-01-02T01:04:05Z"),
        ("2026-01-02T03:04:05-05:30", "2026-01-02T08:34:05Z"),
    ],
)
def test_created_is_a_strict_time_kept_in_utc(created, expected):
    values, problem = notes.fields("x", f"---\ntitle: t\nkind: note\ncreated: {created}\n---\n".encode())
    assert problem is None and values["created"] == expected


def test_display_safe_escapes_every_control_bidi_and_separator_visibly():
    from agent_memory.display import is_safe, safe

    unsafe = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x2028, 0x202F)]
    unsafe += range(0x2066, 0x206A)
    for code in unsafe:
        assert safe(f"a{chr(code)}b") == f"a\\u{code:04x}b" and not is_safe(chr(code))
    kept = "plain ASCII, ünïcödé, 漢字, emoji 🙂, quotes \"' and a backslash \\ — NBSP\u00a0 ZWJ\u200d"
    assert safe(kept) == kept and is_safe(kept)
    assert safe(safe("\x1b[2K\u202e")) == safe("\x1b[2K\u202e") == "\\u001b[2K\\u202e"  # applying it twice is once


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


def test_created_in_the_form_the_helper_writes_is_checked_as_any_other_time(monkeypatch):
    """`created` as the helper writes it (UTC, whole seconds) is read by a shorter path: it gives what the general one
    gives for the same time written with its offset, at every edge (calendar, clock, 1970, the future's limit)."""
    from agent_memory.memory import frontmatter

    monkeypatch.setattr(frontmatter.time, "time", lambda: 1_800_000_000.75)
    limit = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_800_000_000 + 3600))
    after = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_800_000_000 + 3601))
    stamps = [limit, after, "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0000-01-01T00:00:00Z"]
    stamps += ["2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z"]
    stamps += ["2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-02T24:00:00Z", "2026-01-02T23:60:00Z"]
    stamps += ["2026-01-02T23:59:60Z", "2026-01-02T03:04:05Z", "\u0662\u0660\u0662\u0666-01-02T03:04:05Z"]

    def checked(value):
        try:
            return frontmatter.created(value, 3600)
        except ValueError as exc:
            return str(exc)

    for stamp in stamps:
        assert checked(stamp) == checked(stamp[:-1] + "+00:00"), stamp
    assert checked(limit) == limit and checked(after) == "created is in the future"
    assert checked(stamps[-1]) == "2026-01-02T03:04:05Z"  # digits of another script: read by the general path
