"""The literal scan of frontmatter in the helper's simple form (`frontmatter.simple`): exactly what PyYAML reads, or
nothing (then PyYAML reads it), on the helper's own notes, on generated ones and on damaged ones."""

from __future__ import annotations

import random

import pytest
import yaml

from agent_memory.memory import frontmatter, notes, pack

NOTE_ID = "20260102-030405-678901-0123456789"
# pieces of values: everything YAML gives a meaning to, its whitespace and line breaks, non-ASCII text
TOKENS = [
    *"abcXYZ019 :#'\"-?,[]{}&*!|>%@`~.\\/=<+_\t\r\x1b\x7f\x85\xa0\u2028\u2029\ufeffé😀",
    *["yes", "No", "TRUE", "off", "On", "null", "Null", "y", "n", "1", "-1", "0x1f", "0o7", "1_000", "1.5", ".inf"],
    *[".NaN", "2026-01-02", "2026-01-02T03:04:05Z", "2026-01-02 03:04:05", "12:30", "<<", "=", "- ", ": ", " #"],
    *["'", "''", "word", " two words ", "https://example.org/x?y=1#z", "src/a.py:12", "C#", "a: b", "---", "..."],
]
LETTERS = [*"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]
ORDINARY = [*LETTERS, *"0123456789 .,()/-_é"]  # after a letter: what agents write as titles, names and tags


def _yaml(text: str, loader: type) -> object:
    return yaml.load(text, Loader=loader)  # noqa: S506 - the safe loaders only


LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


def _same_as_yaml(text: str) -> dict | None:
    """The scan's result on `text`, checked against both YAML loaders when it gives one."""
    found = frontmatter.simple(text)
    if found is not None:
        for loader in LOADERS:
            assert _yaml(text, loader) == found, (loader, text)
        assert all(isinstance(v, str | list | type(None)) for v in found.values())
    return found


def _value(rng: random.Random, alphabet: list[str]) -> str:
    first = rng.choice(LETTERS if alphabet is ORDINARY else alphabet)
    return first + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))


def _meta(rng: random.Random, alphabet: list[str]) -> dict[str, object]:
    return {
        "id": NOTE_ID,
        "title": _value(rng, alphabet),
        "kind": rng.choice(notes.KINDS),
        "project": "demo",
        "created": "2026-01-02T03:04:05Z",
        "agent": _value(rng, alphabet),
        "machine": rng.choice([None, _value(rng, alphabet)]),
        "session": rng.choice([None, "0b7e-11"]),
        "sources": [_value(rng, alphabet) for _ in range(rng.randint(0, 3))],
        "tags": [_value(rng, alphabet) for _ in range(rng.randint(0, 3))],
        "corrects": rng.choice([None, "20260101-030405-678901-0123456789"]),
    }


def _front(data: bytes) -> str:
    text = data.decode()
    return text[4 : text.index("\n---\n", 3) + 1]


def test_the_helpers_ordinary_notes_are_read_by_the_scan_exactly_as_yaml_reads_them():
    rng = random.Random(1)
    for _ in range(600):
        front = _front(notes.render(_meta(rng, ORDINARY), "body"))
        assert _same_as_yaml(front) is not None, front  # what agents save is never left to the parser


def test_the_helpers_notes_with_any_text_are_read_as_yaml_reads_them_or_left_to_it():
    rng, scanned = random.Random(2), 0
    for _ in range(1500):
        front = _front(notes.render(_meta(rng, TOKENS), "body"))
        scanned += _same_as_yaml(front) is not None
    assert scanned > 100  # the sweep reaches the scan often, not only the parser


def test_changed_frontmatter_is_read_as_yaml_reads_it_or_left_to_it():
    """Damage and hand edits: a character put in, a line repeated or indented, a line cut."""
    rng, scanned = random.Random(3), 0
    for _ in range(2000):
        lines = _front(notes.render(_meta(rng, ORDINARY), "body")).splitlines(keepends=True)
        at = rng.randrange(len(lines))
        change = rng.randrange(4)
        if change == 0:
            cut = rng.randint(0, len(lines[at]))
            lines[at] = lines[at][:cut] + rng.choice(TOKENS) + lines[at][cut:]
        elif change == 1:
            lines.insert(at, lines[at])
        elif change == 2:
            lines[at] = rng.choice([" ", "  ", "\t", "- "]) + lines[at]
        else:
            lines[at] = lines[at][: rng.randint(0, len(lines[at]))]
        text = "".join(lines)
        try:
            scanned += _same_as_yaml(text) is not None
        except yaml.YAMLError:
            raise AssertionError(f"the scan read what YAML refuses: {text!r}") from None
    assert scanned > 500


@pytest.mark.parametrize(
    "text",
    [
        "title: yes\n",
        "title: 12\n",
        "title: ~\n",
        "title: null\n",
        "title: 1.5\n",
        "created: 2026-01-02T03:04:05Z\n",  # a timestamp
        "title: a # comment\n",
        "# comment\ntitle: a\n",
        'title: "double"\n',
        "title: a\n  continued\n",
        "tags:\n  - indented\n",
        "title: tab\there\n",
        "title: cr\r\n",
        "title: &anchor x\n",
        "title: *alias\n",
        "title: !!str x\n",
        "title: a\ntitle: b\n",
        "on: x\n",
        "yes: x\n",
        "title: [a]\n",
        "title: {a: 1}\n",
        "title: |\n  block\n",
        "title: >\n  folded\n",
        "title: 'a'b'\n",
        "title: 'unclosed\n",
        "title: a:\n",
        "title: key: inside\n",
        "- a\n",
        "title:  two spaces\n",
        "title:\n-\n",
        "title: x\u2028y\n",
        "title: x\x85y\n",
        "title: \ufeffx\n",
        "tags: []\n- a\n",
        "title: a\n\nkind: note\n",
        "title: a",  # no final newline
        "",
    ],
)
def test_anything_outside_the_simple_form_is_left_to_yaml(text):
    assert frontmatter.simple(text) is None
    try:
        expected = _yaml(text, LOADERS[-1])
    except yaml.YAMLError:
        with pytest.raises(ValueError, match="not valid YAML"):
            frontmatter.load(text, notes.DEPTH_MAX)
    else:
        assert frontmatter.load(text, notes.DEPTH_MAX) == expected


def test_the_search_pack_records_are_the_same_as_with_yaml_alone(monkeypatch):
    rng = random.Random(4)
    data = [notes.render(_meta(rng, rng.choice([ORDINARY, TOKENS])), f"# Body {i}\ntext") for i in range(500)]
    data += [b"---\ntitle: t\nkind: note\ncreated: '2026-01-02T03:04:05Z'\ntags: yes\n---\nbody\n"]  # damaged
    scanned = [pack.record(NOTE_ID, note) for note in data]
    monkeypatch.setattr(frontmatter, "simple", lambda _text: None)
    assert [pack.record(NOTE_ID, note) for note in data] == scanned
