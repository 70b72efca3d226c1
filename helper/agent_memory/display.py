"""Text from outside (notes, skills, the bucket, the disk), made safe to print and to put in a model's context.

One rule, applied everywhere: every control character (C0, DEL, C1), bidirectional control (U+061C,
U+200E/F, U+202A-202E, U+2066-2069), line or paragraph separator (U+2028/9; U+0085 is C1) and lone surrogate
(the bytes of a file name that is not UTF-8, which no UTF-8 stream can write) is replaced by its visible escape,
`\\u` and four hex digits. A terminal then never sees an escape sequence (window titles, colours, cursor moves,
line erases), text cannot be reordered on screen, and one field stays one line.
Standard library only.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import TypeVar

    Tree = TypeVar("Tree")

# Searched only in text that is not printable (`str.isprintable`: none of these characters is), which most text is.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def safe(text: str) -> str:
    """`text` with every control, bidi control and line separator replaced by its visible `\\uXXXX` escape."""
    return text if text.isprintable() else _UNSAFE.sub(_escape, text)


def is_safe(text: str) -> bool:
    """Whether `safe` would leave `text` as it is."""
    return text.isprintable() or _UNSAFE.search(text) is None


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def safe_tree(value: Tree) -> Tree:
    """A copy of a JSON-like value with `safe` applied to every string in it, keys included."""
    return _safe_tree(value)  # type: ignore[return-value]  # the same shape: only the strings in it are made safe


def _safe_tree(value: object) -> object:
    if isinstance(value, str):
        return safe(value)
    if isinstance(value, dict):
        return {_safe_tree(key): _safe_tree(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe_tree(item) for item in value]
    return value


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 attempt`, `2 attempts`: a count with its noun in the right number (`many` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def some(names: list[str], limit: int) -> str:
    """`a, b and 3 more`: the first `limit` of `names`, and how many more there are."""
    rest = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + rest


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
