"""The note format: paths, titles, YAML frontmatter, and the checks a note must pass before it is stored."""

from __future__ import annotations

import re

from ..errors import ContentRefused, UsageError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 1024 * 1024
KINDS = ("note", "checkpoint")
TITLE_MAX = 120

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_ORDER = ("id", "title", "kind", "project", "created", "agent", "session", "sources", "tags", "corrects")


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
            next_step="save it without them: tr -d '\\000' < NOTE.md | agent-memory save",
        )
    if not text.strip():
        raise ContentRefused(
            "The note is empty.", next_step="agent-memory save --title T --file NOTE.md (or pipe the text on stdin)"
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
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise UsageError(f"The {what} contains control characters.", next_step=f"give {option} as plain text")
    return value


def derive_title(body: str, title: str | None = None) -> str:
    """`title`, else the first Markdown heading, else the first non-empty line, shortened."""
    if title is not None:
        return single_line(title, "title", TITLE_MAX * 2, "--title")
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    for line in lines:
        if match := _HEADING.match(line):
            return _shorten(match.group(1))
    return _shorten(lines[0].lstrip("#>*- ").strip() or lines[0])


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rstrip() + "…"


def check_secrets(body: str, meta: dict[str, Any], origins: dict[str, str] | None = None) -> None:
    """ContentRefused naming the body line or field and the rule (never the value) if the note holds a credential.

    Every string of `meta` is scanned, lists included, so a field added later is covered without a change here;
    `origins` says where a field's value came from (an option, an environment variable), for the message.
    """
    from .. import guard

    problems = [f"body line {f.line}: {f.label} (rule {f.rule})" for f in guard.scan(body)]
    for key, value in meta.items():
        texts = [item for item in (value if isinstance(value, list) else [value]) if isinstance(item, str)]
        found = {(f.label, f.rule): None for text in texts for f in guard.scan(text)}  # once per field, in order
        origin = f" (from {origins[key]})" if origins and key in origins else ""
        problems += [f"field {key}{origin}: {label} (rule {rule})" for label, rule in found]
    if problems:
        raise ContentRefused(
            "The note looks like it contains a credential, so it was not saved: " + "; ".join(problems) + ".",
            next_step="remove the secret (describe where it is kept instead) and save again",
        )


def render(meta: dict[str, Any], body: str) -> bytes:
    """The note file: YAML frontmatter in a stable key order, then the body, ending with a newline."""
    import yaml

    # `sources` is always written, even empty; the other optional fields only when they have a value
    ordered = {key: meta[key] for key in _ORDER if key == "sources" or meta.get(key) not in (None, [])}
    front = yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)
    if not body.endswith("\n"):
        body += "\n"
    return f"---\n{front}---\n\n{body}".encode()


def parse(data: bytes) -> tuple[dict[str, Any], str]:
    """Frontmatter and body of a note file; a file without valid frontmatter has empty metadata."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser is ten times faster
    text = data.decode("utf-8", errors="replace")
    if text.startswith("---\n") or text.startswith("---\r\n"):
        end = re.search(r"^---\s*$", text[4:], flags=re.MULTILINE)
        if end:
            try:
                meta = yaml.load(text[4 : 4 + end.start()], Loader=loader)  # a safe loader: plain data only
            except yaml.YAMLError:
                meta = None
            if isinstance(meta, dict):
                return meta, text[4 + end.end() :].lstrip("\r\n")
    return {}, text
