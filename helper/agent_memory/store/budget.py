"""A time budget per command: every network call gets what is left of it, so nothing hangs.

The SDK's HTTP client has no timeout and hf_xet retries on its own, so the bound must come from outside: the Hub's
store runs each call in a daemon thread and stops waiting when the budget is spent (`hub`). A thread that is still
blocked is abandoned, and the budget says so: `entry` then ends the process with os._exit, so that the SDK's exit
handlers cannot wait for it.
"""

from __future__ import annotations

import os
import time

DEFAULT_SECONDS = 30.0


class Budget:
    """The time left for the network part of one command, and whether a call was given up on."""

    def __init__(self, seconds: float | None = None) -> None:
        if seconds is None:
            seconds = command_timeout()
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.abandoned: list[str] = []  # the names of the calls given up on, still blocked in their threads

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.end - time.monotonic())

    def reset(self, seconds: float) -> None:
        """Start again with `seconds` from now: a hook has its own budget, not a command's."""
        self.seconds = seconds
        self.end = time.monotonic() + seconds


def command_timeout() -> float:
    """The per-command network budget: `AGENT_MEMORY_TIMEOUT` seconds, default 30."""
    try:
        value = float(os.environ.get("AGENT_MEMORY_TIMEOUT", DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS
