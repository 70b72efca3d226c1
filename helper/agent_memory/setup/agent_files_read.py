"""The reading half of the agent files pair (`agent_files_write` edits; `status` loads only this half).

The agents' own files that setup reads and edits (instruction files, hook settings, Codex's config.toml), as
text: read as UTF-8 (a file that is not is refused, nothing changed), split into lines as their formats count
them, and the marked blocks that agent-memory keeps in some of them. This is their format; changing them safely
(the lock, the backup, the atomic write) is `agent_files_write`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import AgentMemoryError


def read_text(path: Path) -> str | None:
    """The file's text, None if it does not exist; refuses (nothing changed) a file that is unreadable or not UTF-8."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AgentMemoryError(
            f"Cannot read {path}: {exc.strerror}; nothing was changed.",
            next_step=f"make {path} readable by you, then run the command again",
        ) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentMemoryError(
            f"{path} cannot be edited safely: it is not valid UTF-8 (invalid byte at offset {exc.start}). "
            "Nothing was changed.",
            next_step=f"fix {path} by hand (save it as UTF-8), then run the command again",
        ) from exc


def lines_of(text: str) -> list[str]:
    """The text's lines with their endings, split at LF only: as TOML and Markdown count lines, not at the other
    separators `str.splitlines` knows, which may stand in a user's text."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def marked_blocks(
    lines: list[str], eligible: Iterable[int], begin: str, end: str, malformed: Callable[[str], AgentMemoryError]
) -> list[tuple[int, int]]:
    """The numbers (from 0) of each marked block's `begin` and `end` lines, in order.

    Only the `eligible` lines can be markers: those that the file's own syntax reads as plain lines of its own
    (not code in a Markdown file, not a string in a TOML file), so that a user's example of the markers stays
    theirs. Markers that do not pair up are refused (`malformed(why)`): guessing would lose the user's lines.
    """
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    for number in eligible:
        text = lines[number].strip()
        if text == begin:
            if start is not None:
                raise malformed("a begin marker follows another begin marker without an end marker")
            start = number
        elif text == end:
            if start is None:
                raise malformed("an end marker comes before any begin marker")
            blocks.append((start, number))
            start = None
    if start is not None:
        raise malformed("a begin marker has no end marker")
    return blocks
