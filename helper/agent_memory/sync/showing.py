"""What `sync history` shows of a file's versions: each one's text, and the differences between versions (a unified
diff from `difflib`), bounded, with every credential masked (`guard.redact`); the caller makes each line safe to
print.

A version's text comes from this machine's record of the bucket's versions (`history`): texts anyone could have
pushed, so nothing of them is shown whole or raw.
"""

from __future__ import annotations

import difflib

from .. import commands, guard
from ..errors import UsageError
from .history import History
from .versions import Refused

MAX_LINES = 40  # lines of one version's text shown (the file itself, or `sync restore`, has the rest)
MAX_LINE = 500  # characters of one line shown
MAX_DIFF_LINES = 400  # lines of one diff shown


class Shown:
    """Some lines of a text, and how many more there were."""

    def __init__(self, lines: list[str], more: int) -> None:
        self.lines = lines
        self.more = more


def text_of(history: History, version_id: str) -> Shown | None:
    """The first lines of a version's text (None: a tombstone); a kept text that is damaged says so."""
    try:
        text = history.text(version_id)
    except Refused as exc:
        return Shown([f"({exc})"], 0)
    if text is None:
        return None
    return _bounded(text.splitlines(), MAX_LINES)


def diff(history: History, path: str, older: str | None, newer: str) -> Shown:
    """The unified diff from version `older` (None: no file) to version `newer` of `path`, bounded."""
    before, after = _lines(history, older), _lines(history, newer)
    found = difflib.unified_diff(before, after, f"{path} {older or '(none)'}", f"{path} {newer}", lineterm="")
    return _bounded(list(found), MAX_DIFF_LINES)


def pairs(history: History, path: str, chosen: list[str]) -> list[tuple[str | None, str]]:
    """The versions to compare: `chosen` as given (two ids), or with none given each version against the one it
    was based on (a merge: against its first base), the first version against no file. UsageError for an id
    that is not a version of `path`, or a count other than none or two."""
    known = {str(meta["id"]): meta for meta in history.of(path)}
    again = commands.line("sync", "history", path, "--agent", history.runtime)  # the agent whose versions these are
    if len(chosen) not in (0, 2):
        raise UsageError(
            f"--diff takes no version id (each version against the one before it) or two ids, not {len(chosen)}.",
            next_step=commands.line("sync", "history", path, "--agent", history.runtime, "--diff", "ID", "ID"),
        )
    for version_id in chosen:
        if version_id not in known:
            raise UsageError(f"{version_id} is not a version of {path}.", next_step=again)
    if chosen:
        return [(chosen[0], chosen[1])]
    found: list[tuple[str | None, str]] = []
    for version_id, meta in known.items():
        bases = [str(base) for base in meta["bases"] if base in known]
        found.append((bases[0] if bases else None, version_id))
    return found


def _lines(history: History, version_id: str | None) -> list[str]:
    if version_id is None:
        return []
    try:
        text = history.text(version_id)
    except Refused as exc:
        return [f"({exc})"]
    return [] if text is None else text.splitlines()


def _bounded(lines: list[str], limit: int) -> Shown:
    """At most `limit` lines, each cut to MAX_LINE characters, with every credential masked (a whole line is
    masked before it is cut, so a token at the cut is still found)."""
    shown = [_cut(guard.redact(line)) for line in lines[:limit]]
    return Shown(shown, max(0, len(lines) - limit))


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
