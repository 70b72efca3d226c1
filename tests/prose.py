"""Measures Markdown prose: its sentences' lengths and its paragraphs' lengths, as a reader meets them.

Code blocks, tables, headings, images and HTML comments carry no prose. A paragraph is a run of lines of text; a
list item is a unit of its own (its sentences count, but it is no paragraph). An inline code span or a link counts
as one word: a command is read as one thing.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_SKIPPED = re.compile(r"^\s*(\||#|!\[|<!--|-->|<)")
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')]*\s+(?=[A-Z`\"'(*\[])")


@dataclass
class Unit:
    """One paragraph or list item: its text, whether it is a paragraph, and the line it starts on."""

    text: str
    paragraph: bool
    line: int

    def words(self) -> int:
        return len(_plain(self.text).split())

    def sentences(self) -> list[str]:
        plain = _plain(self.text).strip()
        return [s for s in _SENTENCE_END.split(plain) if s.strip()] if plain else []


def _plain(text: str) -> str:
    """The text as read: a code span or a link is one word; emphasis marks go."""
    text = _CODE.sub("CODE", text)
    text = _LINK.sub(lambda m: m.group(1).replace(" ", "_") or "LINK", text)
    return text.replace("**", "")


def units(markdown: str) -> list[Unit]:
    """The paragraphs and list items of a Markdown text, in order."""
    found: list[Unit] = []
    current: list[str] = []
    kind_paragraph = True
    start = 0
    in_fence = False
    in_comment = False

    def close() -> None:
        if current:
            found.append(Unit(" ".join(line.strip() for line in current), kind_paragraph, start))
            current.clear()

    for number, line in enumerate(markdown.splitlines(), 1):
        if _FENCE.match(line):
            close()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if in_comment or line.lstrip().startswith("<!--"):
            close()
            in_comment = "-->" not in line
            continue
        if not line.strip() or _SKIPPED.match(line):
            close()
            continue
        if _ITEM.match(line):
            close()
            current.append(_ITEM.sub("", line, count=1))
            kind_paragraph, start = False, number
            continue
        if not current:
            # text indented under a list item, after a blank line, belongs to that item
            kind_paragraph, start = not line.startswith((" ", "\t")), number
        current.append(line)
    close()
    return found


def sentence_lengths(markdown: str) -> list[int]:
    """The number of words of every sentence of the text's prose."""
    return [len(sentence.split()) for unit in units(markdown) for sentence in unit.sentences()]


def median_sentence(markdown: str) -> float:
    """The median sentence length in words (0 for a text without prose)."""
    lengths = sentence_lengths(markdown)
    return statistics.median(lengths) if lengths else 0.0


def long_paragraphs(markdown: str, limit: int) -> list[Unit]:
    """The paragraphs of more than `limit` words."""
    return [unit for unit in units(markdown) if unit.paragraph and unit.words() > limit]
