"""How long the hooks wait before they retry pending uploads again, after a retry that left some pending.

A Hub that hangs costs a Stop hook its whole budget; without this, every turn would pay it again. After a failed
retry the interval grows (1, 2, 4 ... minutes, at most an hour); any confirmed upload (a save, `pending retry`, a
hook) ends it, and so does an explicit `agent-memory pending retry`. Only the hooks wait: a command the user or
the agent runs always tries. The record is one small JSON file in the state folder, written atomically under a
lock; one that cannot be read (damaged, planted, from a clock far away) counts as no wait at all, and is never
waited on nor read past its bound (`fsutil.read_own`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from .. import paths
from ..fsutil import locked, read_own, write_json_atomic

FIRST = 60.0  # seconds
LONGEST = 3600.0
MAX_RECORD = 4096  # bytes: what the record ever holds


def record() -> Path:
    """The file of the wait (read at most MAX_RECORD bytes)."""
    return paths.state_dir() / "retry-backoff.json"


def waiting() -> float:
    """Seconds left before the hooks may retry again (0 when they may now)."""
    failures, until = _read()
    left = until - time.time()
    return left if failures and 0 < left <= LONGEST else 0.0  # beyond the longest wait: a clock that moved


def failed() -> float:
    """Record a retry that left uploads pending: the next wait doubles. Returns the wait, in seconds.

    Retries that fail within the wait already recorded count once: six Stop hooks that tried at the same moment
    (six sessions ending a turn) met one outage, and the next wait is still the first one's.
    """
    with locked(paths.state_dir() / "retry-backoff.lock"):
        failures, until = _read()
        now = time.time()
        if failures and now < until <= now + LONGEST:
            return until - now  # counted already
        failures += 1
        wait: float = min(FIRST * 2 ** min(failures - 1, 16), LONGEST)
        write_json_atomic(record(), {"failures": failures, "until": now + wait})
    return wait


def reset() -> None:
    """End the wait: an upload went through, or the user asked for a retry."""
    try:
        record().unlink()
    except OSError:  # a record left behind only makes the hooks wait: never fail an upload
        return


def _read() -> tuple[int, float]:
    try:
        value = json.loads(read_own(record(), MAX_RECORD))
        failures, until = value["failures"], value["until"]
        if isinstance(failures, int) and failures > 0 and isinstance(until, (int, float)):
            return failures, float(until)
    except (OSError, ValueError, TypeError, KeyError):
        pass  # missing, damaged or not ours: no wait (the next failure writes a good one)
    return 0, 0.0
