"""Merging two versions of a file line by line against the version both started from.

A change is a hunk of the common version's lines replaced (or a point where lines were inserted). The two sides'
changes merge when no hunk of one touches a hunk of the other (an identical change on both sides counts once);
lines both sides only added at the same point are kept, this machine's first (two machines appending to an index
such as MEMORY.md is the usual case, and neither loses a line). Anything else is a conflict (Conflicting), and the
caller keeps both texts whole.
"""

from __future__ import annotations

import difflib

Hunk = tuple[int, int, list[str]]  # the common version's lines [start, end) replaced by these lines


class Conflicting(Exception):
    """The two sides changed the same lines, or one deleted what the other changed: no merge."""


def merge(base: str | None, ours: str | None, theirs: str | None) -> str | None:
    """The merged text (None: the file is deleted on both sides, or deleted on one and untouched on the other);
    Conflicting when the changes touch the same lines, or one side deleted what the other changed."""
    if ours == theirs:
        return ours
    if base == ours:
        return theirs
    if base == theirs:
        return ours
    if ours is None or theirs is None or base is None:
        raise Conflicting  # deleted on one side and changed on the other, or made on both without a common version
    base_lines = base.splitlines(keepends=True)
    mine, other = _hunks(base_lines, ours), _hunks(base_lines, theirs)
    merged: list[Hunk] = []
    for hunk in sorted(mine + other, key=lambda h: (h[0], h[1])):
        if merged and _touch(merged[-1], hunk):
            joined = _join(merged[-1], hunk)
            if joined is None:
                raise Conflicting
            merged[-1] = joined
        else:
            merged.append(hunk)
    out, at = [], 0
    for start, end, lines in merged:
        out += base_lines[at:start] + lines
        at = end
    return "".join(out + base_lines[at:])


def _hunks(base: list[str], text: str) -> list[Hunk]:
    lines = _terminated(text.splitlines(keepends=True), base)
    matcher = difflib.SequenceMatcher(None, base, lines, autojunk=False)
    return [(i1, i2, lines[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _terminated(lines: list[str], base: list[str]) -> list[str]:
    """A last line without its newline, where the common version's had one, is compared as the same line (an
    editor that drops the final newline has not changed that line)."""
    if lines and base and not lines[-1].endswith("\n") and lines[-1] + "\n" in base[-1:]:
        return [*lines[:-1], lines[-1] + "\n"]
    return lines


def _touch(first: Hunk, second: Hunk) -> bool:
    """Whether two hunks (sorted by start) overlap or meet: they then touch the same lines."""
    return second[0] <= first[1]


def _join(first: Hunk, second: Hunk) -> Hunk | None:
    """Two touching hunks as one, where they can be: the same change, or two insertions at the same point."""
    if first == second:
        return first
    if first[0] == first[1] == second[0] == second[1]:  # both only added lines here: this machine's first
        extra = [line for line in second[2] if line not in first[2]]
        return (first[0], first[1], first[2] + extra)
    return None
