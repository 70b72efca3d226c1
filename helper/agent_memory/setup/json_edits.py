"""Edits to a user's JSON file that change only the bytes they must.

A value is inserted, replaced or deleted at a path of keys and indexes; everything else in the text (key order,
indentation, spacing, escapes, the final newline) stays exactly as the user wrote it, and what is inserted follows
the file's own layout: its indentation unit (spaces or tabs), line ending and separators. The text and its parsed
value are edited together, and `Document.text` is only trusted while it still parses to `Document.value`.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import Any

KeyPath = tuple[str | int, ...]  # keys and indexes from the top of the document
_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'(?s)"[^"\\]*(?:\\.[^"\\]*)*"')
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_BRACKET_OR_STRING = re.compile(r'(?s)[\[\]{}]|"[^"\\]*(?:\\.[^"\\]*)*"')
_INDENTED_LINE = re.compile(r"\n([ \t]+)[^ \t\r\n]")
_LINE_INDENT = re.compile(r"[ \t]*")
_COMMA_OR_STRING = re.compile(r'(?s)"[^"\\]*(?:\\.[^"\\]*)*"|,[ \t]*(?=[^ \t\r\n])')
_KEY = re.compile(r'(?s)"[^"\\]*(?:\\.[^"\\]*)*"([ \t]*:[ \t]*)?')
DEFAULT_INDENT = "  "  # what the runtimes write themselves, for a file with no layout of its own yet


class Document:
    """A JSON object's text and its value, edited together: every edit keeps the bytes it does not touch."""

    def __init__(self, text: str) -> None:
        self.text = text if text.strip() else "{}\n"
        # Any: a JSON value of any shape, which each caller checks as it reads it (json.loads gives Any too)
        self.value: Any = json.loads(self.text, parse_constant=_not_json)

    def insert(self, path: KeyPath, value: object, key: str | None = None) -> None:
        """Add `value` at the end of the array at `path` (or, with `key`, as the last member of the object there)."""
        container = _at(self.value, path)
        if key is None:
            container.append(value)
        else:
            container[key] = value
        self.text = _insert(self.text, path, value, key)

    def replace(self, path: KeyPath, value: object) -> None:
        """Put `value` in place of the value at `path`."""
        _at(self.value, path[:-1])[path[-1]] = value
        self.text = _replace(self.text, path, value)

    def delete(self, path: KeyPath) -> None:
        """Take out the member or element at `path`, with its separator."""
        del _at(self.value, path[:-1])[path[-1]]
        self.text = _delete(self.text, path)

    def spelled(self, path: KeyPath) -> str:
        """The text of the value at `path`, as the file spells it."""
        start, end = _span(self.text, path)
        return self.text[start:end]

    def respell(self, path: KeyPath, text: str) -> None:
        """Spell the value at `path` as `text` (how the user once wrote it), if `text` reads as that same value."""
        if json.loads(text, parse_constant=_not_json) == _at(self.value, path):
            start, end = _span(self.text, path)
            self.text = self.text[:start] + text + self.text[end:]

    def consistent(self) -> bool:
        """Whether the text still parses to the value (an edit that could not be made exactly shows here)."""
        try:
            return bool(json.loads(self.text, parse_constant=_not_json) == self.value)
        except (ValueError, RecursionError):
            return False


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _at(value: Any, path: KeyPath) -> Any:
    """The JSON value at `path`, which the caller read from this very value (Any: a JSON value of any shape, each
    step of the path a key of an object or an index of an array that the caller found there)."""
    for step in path:
        value = value[step]
    return value


# -- finding values in the text -----------------------------------------------------------------------------


def _skip(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string


def _value_end(text: str, pos: int) -> int:
    """Where the value that starts at `pos` ends; a loop, not recursion, so deep nesting costs no stack."""
    first = text[pos]
    if first == '"':
        return _STRING.match(text, pos).end()  # type: ignore[union-attr]  # the text has parsed
    if first not in "[{":
        return _SCALAR.match(text, pos).end()  # type: ignore[union-attr]  # the text has parsed
    depth = 0
    for token in _BRACKET_OR_STRING.finditer(text, pos):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
        elif mark in ("]", "}"):
            depth -= 1
            if depth == 0:
                return token.end()
    raise ValueError("unbalanced brackets")


def _items(text: str, start: int) -> tuple[list[tuple[str | None, int, int, int]], int]:
    """The items of the array or object at `start`, each `(key, item start, value start, value end)`, and the
    position of its closing bracket."""
    pos = _skip(text, start + 1)
    items: list[tuple[str | None, int, int, int]] = []
    if text[pos] in "]}":
        return items, pos
    while True:
        item_start, key = pos, None
        if text[start] == "{":
            key_end = _value_end(text, pos)
            key = json.loads(text[pos:key_end])
            pos = _skip(text, _skip(text, key_end) + 1)  # past the colon
        value_end = _value_end(text, pos)
        items.append((key, item_start, pos, value_end))
        pos = _skip(text, value_end)
        if text[pos] != ",":
            return items, pos
        pos = _skip(text, pos + 1)


def _index(items: list[tuple[str | None, int, int, int]], step: str | int) -> int:
    if isinstance(step, int):
        return step
    # the last of duplicate keys, as json.loads (and JavaScript) read them
    return max(i for i, item in enumerate(items) if item[0] == step)


def _span(text: str, path: KeyPath) -> tuple[int, int]:
    start = _skip(text, 0)
    end = _value_end(text, start)
    for step in path:
        items, _close = _items(text, start)
        _key, _item_start, start, end = items[_index(items, step)]
    return start, end


# -- the file's own layout ----------------------------------------------------------------------------------


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str | None:
    """The file's indentation step; None for a file written on one line (what is added stays on one line)."""
    start = _skip(text, 0)
    root = text[start : _value_end(text, start)]
    if "\n" not in root and _items(text, start)[0]:
        return None
    found = _INDENTED_LINE.search(root)
    return found.group(1) if found else DEFAULT_INDENT


def _separators(text: str, start: int, end: int) -> tuple[str, str]:
    """How this file joins items and keys on one line: as the container at [start, end) does, else as anywhere
    in the file does, else `", "` and `": "`."""
    item = colon = None
    for first, last in ((start, end), (0, len(text))):
        for found in _COMMA_OR_STRING.finditer(text, first, last):
            if not found.group().startswith('"'):
                item = item or found.group()
                break
        for found in _KEY.finditer(text, first, last):
            if found.group(1) is not None:
                colon = colon or found.group(1)
                break
    return item or ", ", colon or ": "


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    return _LINE_INDENT.match(text, line_start).group()  # type: ignore[union-attr]  # matches the empty string


def _render(text: str, value: object, base: str, *, inline: bool, near: tuple[int, int]) -> str:
    """`value` as JSON laid out like the file around `near`: on one line, or with inner lines indented from `base`."""
    item, colon = _separators(text, *near)
    unit = _indent_unit(text)
    if inline or unit is None:
        return json.dumps(value, ensure_ascii=False, separators=(item, colon))
    rendered = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
    return rendered.replace("\n", _newline(text) + base)


# -- the edits ----------------------------------------------------------------------------------------------


def _replace(text: str, path: KeyPath, value: object) -> str:
    start, end = _span(text, path)
    inline = "\n" not in text[start:end]
    rendered = _render(text, value, _line_indent(text, start), inline=inline, near=(start, end))
    return text[:start] + rendered + text[end:]


def _insert(text: str, path: KeyPath, value: object, key: str | None) -> str:
    start, end = _span(text, path)
    items, close = _items(text, start)
    unit = _indent_unit(text)
    newline = _newline(text)
    if items:
        before_first = text[start + 1 : items[0][1]]
        inline = "\n" not in before_first
        if inline:  # the items share a line: the new one joins them the way they are joined
            base = _line_indent(text, start)
            separator = text[items[0][3] : items[1][1]] if len(items) > 1 else _separators(text, start, end)[0]
        else:  # one item per line: the new one gets a line like the others
            base = before_first[before_first.rfind("\n") + 1 :]
            separator = "," + newline + base
        at, opening, closing = items[-1][3], separator, ""
    else:
        outer = _line_indent(text, start)
        base, inline = outer + (unit or ""), unit is None
        at = start + 1
        opening, closing = ("", "") if inline else (newline + base, newline + outer)
        text = text[:at] + text[close:]  # whatever blank space stood between the brackets makes way
    member = _render(text, value, base, inline=inline, near=(start, end))
    if key is not None:
        member = json.dumps(key, ensure_ascii=False) + _separators(text, start, end)[1] + member
    return text[:at] + opening + member + closing + text[at:]


def _delete(text: str, path: KeyPath) -> str:
    start, _end = _span(text, path[:-1])
    items, close = _items(text, start)
    i = _index(items, path[-1])
    if len(items) == 1:
        return text[: start + 1] + text[close:]
    if i < len(items) - 1:  # up to the next item: it takes this one's place, and its indentation
        return text[: items[i][1]] + text[items[i + 1][1] :]
    return text[: items[i - 1][3]] + text[items[i][3] :]  # the last: from the end of the one before it
