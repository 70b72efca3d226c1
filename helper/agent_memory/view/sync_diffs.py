"""The sync's side of the view: every synced file with its versions, the differences between them (difflib, line by
line, side by side), and a conflict's two texts with the commands that settle it."""

from __future__ import annotations

import difflib
from itertools import combinations
from typing import Any

from .. import commands

PAIRS_ALL = 8  # versions of a file up to which every pair is compared; past it, each with the one before and the heads
ROWS = 2000  # rows of one comparison shown (then the command that shows it all)
PAGE_ROWS = 100_000  # rows of every comparison together: past them, a file's versions are listed, not compared


def sync_view(files: list[dict[str, Any]]) -> list[dict[str, object]]:
    """What the template shows of each synced file (see `sources.sync_files`)."""
    shown = []
    budget = PAGE_ROWS
    for number, file in enumerate(files):
        versions = file["versions"]
        texts = {v["id"]: v["text"] for v in versions}
        ids = [v["id"] for v in versions]
        heads = set(file["heads"])
        pairs = list(combinations(ids, 2)) if len(ids) <= PAIRS_ALL else _some_pairs(ids, heads)
        history = commands.line("sync", "history", file["path"], "--agent", file["agent"])
        compared = []
        for a, b in pairs if budget > 0 else []:
            rows, cut = side_by_side(texts.get(a), texts.get(b))
            budget -= len(rows)
            compared.append({"from": a, "to": b, "rows": rows, "cut": cut})
        only = None
        if len(versions) == 1 and versions[0]["text"] is not None:  # no pair to compare: its text, as it was synced
            lines = versions[0]["text"].splitlines()
            budget -= min(len(lines), ROWS)
            only = {"lines": lines[:ROWS], "cut": len(lines) > ROWS}
        conflict = None
        if file["conflict"] and len(file["conflict"]["heads"]) >= 2:
            left, right = file["conflict"]["heads"][:2]
            if right == file["here"]:  # this machine's file on the left, as `sync status` tells it first
                left, right = right, left
            conflict = {
                "left": left,
                "right": right,
                "here": left == file["here"],
                "rows": side_by_side(texts.get(left), texts.get(right))[0],
                "kept": file["conflict"]["kept"],
                # the texts in the order shown (the file here first), then any further head
                "settle": [_restore(file, head) for head in dict.fromkeys([left, right, *file["conflict"]["heads"]])],
            }
        shown.append(
            {
                "number": number,
                "agent": file["agent"],
                "scope": file["scope"],
                "path": file["path"],
                "versions": [
                    {
                        "id": v["id"],
                        "machine": v["machine"],
                        "time": v["time"],
                        "deleted": v["hash"] is None,
                        "head": v["id"] in heads,
                        "here": v["id"] == file["here"],
                        "problem": v["problem"],
                    }
                    for v in versions
                ],
                "pairs": compared,
                "only": only,
                "history": history,
                "conflict": conflict,
            }
        )
    return shown


def _some_pairs(ids: list[str], heads: set[str]) -> list[tuple[str, str]]:
    pairs = list(zip(ids, ids[1:], strict=False))
    pairs += [(other, head) for head in sorted(heads) for other in ids if other != head]
    return list(dict.fromkeys(pairs))


def _restore(file: dict[str, Any], head: str) -> str:
    return commands.line("sync", "restore", file["path"], "--version", head, "--agent", file["agent"])


def side_by_side(one: str | None, other: str | None) -> tuple[list[dict[str, object]], bool]:
    """The rows of two texts side by side (`{"tag": same|changed|removed|added, "left", "right", "ln", "rn"}`; a
    deleted file is an empty text), at most ROWS of them, and whether there were more."""
    left, right = (one or "").splitlines(), (other or "").splitlines()
    rows: list[dict[str, object]] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            if len(rows) > ROWS:
                return rows[:ROWS], True
            has_left, has_right = i1 + k < i2, j1 + k < j2
            kind = {"equal": "same", "replace": "changed", "delete": "removed", "insert": "added"}[tag]
            rows.append(
                {
                    "tag": kind,
                    "ln": i1 + k + 1 if has_left else "",
                    "left": left[i1 + k] if has_left else "",
                    "rn": j1 + k + 1 if has_right else "",
                    "right": right[j1 + k] if has_right else "",
                }
            )
    return rows, False
