"""The note format: paths, titles, YAML frontmatter, and the checks a note must pass before it is stored or shown.

A note's frontmatter comes from outside (any machine or tool that can write to the bucket), so it is data read
with bounded cost: at most FRONTMATTER_MAX characters, no YAML anchors or aliases (nothing is ever expanded),
bounded nesting, and only known fields of known types and sizes are used. A note that fails is damaged: it is
searched as text, never trusted for its fields, and listed by id in `status`.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType

from .. import commands
from ..display import is_safe
from ..errors import ContentRefused, UsageError
from ..names import PROJECT_MAX, is_id

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_BYTES = 1024 * 1024
KINDS = ("note", "checkpoint")
TITLE_MAX = 120  # a derived title; one given with --title may have twice as many characters
NAME_MAX = 64  # agent and machine names
TAG_MAX = 64
TAGS_MAX = 100
SOURCE_MAX = 500
SOURCES_MAX = 100
SESSION_MAX = 200
FRONTMATTER_MAX = 128 * 1024  # characters: the most that notes saved within the limits above can need
DEPTH_MAX = 8  # nested lists and mappings in the frontmatter (a note uses 2, a SKILL.md a few more)
SETUP_TITLE = "Memory setup verification"  # bootstrap's verification note: `setup-` and a digest for its id
SETUP_ID_PREFIX = "setup-"
FUTURE_SLACK = 24 * 3600  # seconds a note's `created` may be ahead of this machine's clock

# compiled on first use (re keeps them), not at import
_HEADING = r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$"
_FENCE = r"(?m)^---[ \t\r]*$"
_ORDER = ("id", "title", "kind", "project", "created", "agent", "machine", "session", "sources", "tags", "corrects")


class Malformed(Exception):
    """A note's frontmatter that cannot be used; the message says why, in our words (never quoting the note)."""


def object_path(project: str, note_id: str) -> str:
    """Where a note lives in the bucket."""
    return f"projects/{project}/notes/{note_id}.md"


def decode_body(raw: bytes) -> str:
    """The body as text, or ContentRefused if it is empty, too large, binary or not UTF-8."""
    if len(raw) > MAX_BYTES:
        raise ContentRefused(
            f"The note is {len(raw)} bytes; the limit is {MAX_BYTES} (1 MiB).",
            next_step="split it into smaller notes, or save a summary that points at the file",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContentRefused(
            f"The note is not UTF-8 text (invalid byte at offset {exc.start}).",
            next_step="convert it to UTF-8 and save again",
        ) from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        raise ContentRefused(
            "The note contains NUL bytes: only text can be saved.",
            next_step=f"save it without them: tr -d '\\000' < NOTE.md | {commands.line('save')}",
        )
    if not text.strip():
        raise ContentRefused(
            "The note is empty.",
            next_step=f"{commands.line('save', '--title', 'T', '--file', 'NOTE.md')} (or pipe the text on stdin)",
        )
    return text


def single_line(value: str, what: str, limit: int, option: str) -> str:
    """`value` (given with `option`) as one trimmed line of at most `limit` characters, or UsageError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8, smuggled in as surrogate escapes (an environment value)
        raise UsageError(f"The {what} is not valid UTF-8 text.", next_step=f"give {option} as UTF-8 text") from None
    value = " ".join(value.split())
    if not value:
        raise UsageError(f"The {what} is empty.", next_step=f"give a non-empty {option}, or leave it out")
    if len(value) > limit:
        raise UsageError(
            f"The {what} is longer than {limit} characters.",
            next_step=f"shorten {option} to at most {limit} characters (details belong in the body)",
        )

    if not is_safe(value):
        raise UsageError(
            f"The {what} contains control characters (or bidirectional controls).",
            next_step=f"give {option} as plain text",
        )
    return value


def derive_title(body: str, title: str | None = None) -> str:
    """`title`, else the first Markdown heading, else the first non-empty line, shortened."""
    if title is not None:
        return single_line(title, "title", TITLE_MAX * 2, "--title")
    heading = first_heading(body)
    if heading is not None:
        return heading
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    return _shorten(lines[0].lstrip("#>*- ").strip() or lines[0])


def first_heading(body: str) -> str | None:
    """The text of the first Markdown heading of `body`, shortened; None if it has none."""
    for line in body.splitlines():
        if match := re.match(_HEADING, line.strip()):
            return _shorten(match.group(1))
    return None


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rstrip() + "…"


def render(meta: Mapping[str, object], body: str) -> bytes:
    """The note file: YAML frontmatter in a stable key order, then the body, ending with a newline."""
    # `sources` is always written, even empty; the other optional fields only when they have a value
    ordered = {key: meta[key] for key in _ORDER if key == "sources" or meta.get(key) not in (None, [])}
    front = _frontmatter().dump(ordered)
    if not body.endswith("\n"):
        body += "\n"
    return f"---\n{front}---\n\n{body}".encode()


def parse(data: bytes) -> tuple[dict[str, object], str]:
    """Frontmatter and body of a note or SKILL.md file; a file without usable frontmatter has empty metadata."""
    text = data.decode("utf-8", errors="replace")
    try:
        return split(text)
    except Malformed:
        return {}, text


def body_text(text: str) -> str:
    """The body of a note's text as `split` gives it (what follows the frontmatter's closing line, blank lines
    stripped from its start), found without parsing the frontmatter; all of `text` when it has no frontmatter.

    Search matches it (with the title) and numbers its lines from 1; `read --body` prints it.
    """
    text = text.removeprefix("\ufeff")
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return text
    end = re.compile(_FENCE).search(text, 4 if text.startswith("---\n") else 5)
    return text if end is None else text[end.end() :].lstrip("\r\n")


def split(text: str) -> tuple[dict[str, object], str]:
    """The frontmatter (a mapping of plain data, parsed with bounded cost) and the body; Malformed if it has none
    or it is not usable."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        raise Malformed("no frontmatter")
    start = 4 if text.startswith("---\n") else 5
    end = re.compile(_FENCE).search(text, start)
    if end is None:
        raise Malformed("the frontmatter has no closing --- line")
    if end.start() - start > FRONTMATTER_MAX:  # bounded before the YAML parser sees any of it
        raise Malformed(f"the frontmatter is longer than {FRONTMATTER_MAX} characters")
    try:
        meta = _frontmatter().load(text[start : end.start()], DEPTH_MAX)
    except ValueError as exc:
        raise Malformed(str(exc)) from None
    if not isinstance(meta, dict):
        raise Malformed("the frontmatter is not a mapping of fields")
    return meta, text[end.end() :].lstrip("\r\n")


def fields(note_id: str, data: bytes) -> tuple[dict[str, str], str | None]:
    """`(fields, None)`: a note's known fields, checked, each as one line of text ("" when absent); or
    `({}, problem)` for a damaged note."""
    found, problem, _body = checked(note_id, data)
    return found, problem


def checked(note_id: str, data: bytes) -> tuple[dict[str, str], str | None, str]:
    """`fields` of a note, and its body as `body_text` gives it (of its text decoded with replacements if it is not
    UTF-8), found with the frontmatter: what the search pack holds of a note."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return {}, "the note is not UTF-8 text", body_text(data.decode("utf-8", errors="replace"))
    try:
        meta, body = split(text)
        return _known(note_id, meta), None, body
    except Malformed as exc:
        return {}, str(exc), body_text(text)


def _known(note_id: str, meta: dict[str, object]) -> dict[str, str]:
    if meta.get("id", note_id) != note_id:
        raise Malformed("its id field is not the id in its file name")
    kind = meta.get("kind")
    if kind not in KINDS:
        raise Malformed(f"kind is not one of {', '.join(KINDS)}")
    corrects = _text(meta, "corrects", 128)

    if corrects and not is_id(corrects):
        raise Malformed("corrects is not a note id")
    tags = _list(meta, "tags", TAGS_MAX, TAG_MAX)  # shown to nobody; kept in the search pack, one line, for `import`
    _list(meta, "sources", SOURCES_MAX, SOURCE_MAX)
    _text(meta, "session", SESSION_MAX)

    _text(meta, "project", PROJECT_MAX)
    return {
        "created": _created(meta.get("created")),
        "kind": kind,
        "title": _text(meta, "title", TITLE_MAX * 2, required=True),
        "agent": _text(meta, "agent", NAME_MAX),
        "machine": _text(meta, "machine", NAME_MAX),
        "corrects": corrects,
        "tags": " ".join(" ".join(tag.split()) for tag in tags),
    }


def _text(meta: dict[str, object], key: str, limit: int, *, required: bool = False) -> str:
    """Field `key` as one line: a string of at most `limit` characters (or absent, unless `required`)."""
    value = meta.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise Malformed(f"{key} is {'missing' if value is None else 'not text'}")
    if len(value) > limit:
        raise Malformed(f"{key} is longer than {limit} characters")
    line = " ".join(value.split())
    if required and not line:
        raise Malformed(f"{key} is empty")
    return line


def _list(meta: dict[str, object], key: str, count: int, limit: int) -> list[str]:
    """Field `key`: a list of at most `count` strings of at most `limit` characters each (absent: empty)."""
    value = meta.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(f"{key} is not a list of text")
    longest = 0
    for item in value:  # one loop, not two generators: a fill checks thousands of notes
        if not isinstance(item, str):
            raise Malformed(f"{key} is not a list of text")
        longest = max(longest, len(item))
    if len(value) > count:
        raise Malformed(f"{key} has more than {count} items")
    if longest > limit:
        raise Malformed(f"an item of {key} is longer than {limit} characters")
    return value


@functools.cache  # then a lookup, not an import statement, per call: a fill parses thousands of notes
def _frontmatter() -> ModuleType:
    """The YAML of frontmatter (`frontmatter`): PyYAML takes about 10 ms to load (two thirds of the interpreter's own
    start-up), so it is loaded when a note is first written or parsed, which a search or a read of cached notes
    never does (their fields were checked when they were cached)."""
    from . import frontmatter

    return frontmatter


def _created(value: object) -> str:
    """`created` as `YYYY-MM-DDTHH:MM:SSZ` (UTC); Malformed if it is no time with its offset, or is in the future."""
    try:
        created: str = _frontmatter().created(value, FUTURE_SLACK)  # (the module is loaded here: typed as it is)
        return created
    except ValueError as exc:
        raise Malformed(str(exc)) from None
