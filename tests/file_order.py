"""The order in which the parallel run hands out test files: the longest first, as measured, so that it ends on
short files rather than on one long file while the other processes idle.

Each file's time is the sum of its tests' durations (setup, call and teardown) in the last whole run that passed:
kept in pytest's cache by every such run, and in `tests/durations.json` by a run given `--record-durations`, which
a fresh clone (CI) starts from. Only the order of the files depends on it, never what a test does.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

RECORD = Path(__file__).parent / "durations.json"
CACHE_KEY = "agent-memory/file-durations"


class FileTimes:
    """The files' measured times, and the run's own as its reports arrive."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.measured = _load(config)
        self.seen: dict[str, float] = defaultdict(float)

    def order(self, items: list[pytest.Item]) -> None:
        """Sort `items` in place: the longest files first, a file with a slow test before one without (a file not
        measured yet), each file's tests in their own order."""
        slow = {item.path.name for item in items if item.get_closest_marker("slow")}
        items.sort(key=lambda item: (-self.measured.get(item.path.name, 0.0), item.path.name not in slow))

    def add(self, report: pytest.TestReport) -> None:
        self.seen[Path(report.nodeid.split("::")[0]).name] += report.duration

    def finish(self, session: pytest.Session, exitstatus: int) -> None:
        """After a whole run that passed, keep its times (the cache; the record too with --record-durations)."""
        whole = not session.config.args or session.config.args == list(session.config.getini("testpaths"))
        if exitstatus != 0 or not whole or not self.seen:
            return
        times = {name: round(seconds, 1) for name, seconds in sorted(self.seen.items(), key=lambda kv: -kv[1])}
        cache = getattr(session.config, "cache", None)  # None with `-p no:cacheprovider`
        if cache is not None:
            cache.set(CACHE_KEY, times)
        if session.config.getoption("record_durations"):
            RECORD.write_text(json.dumps(times, indent=1) + "\n")


def _load(config: pytest.Config) -> dict[str, float]:
    cache = getattr(config, "cache", None)  # None with `-p no:cacheprovider`
    cached = cache.get(CACHE_KEY, None) if cache is not None else None
    if isinstance(cached, dict) and cached:
        return cached
    try:
        recorded = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}
