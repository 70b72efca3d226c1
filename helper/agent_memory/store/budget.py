"""A time budget per command: every network call gets what is left of it, so nothing hangs.

The SDK's HTTP client has no timeout and hf_xet retries on its own, so the bound must come from outside:
the call runs in a daemon thread and the command stops waiting when the budget is spent. A thread that
is still blocked is abandoned; `entry` then ends the process with os._exit so that the SDK's exit handlers
cannot wait for it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

DEFAULT_SECONDS = 30.0
_abandoned: list[str] = []  # the names of the calls given up on (set by the thread that waited for them)


class DeadlineExceeded(Exception):
    """The command's time budget ran out before the call returned."""


class Budget:
    """The time left for the network part of one command."""

    def __init__(self, seconds: float | None = None) -> None:
        if seconds is None:
            seconds = command_timeout()
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self.end - time.monotonic())

    def run(self, fn: Callable[[], object]) -> object:
        """Run `fn` within the remaining budget; raise DeadlineExceeded if it does not return in time."""
        import threading  # only a command that uses the network pays for it

        result: list[object] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                result.append(fn())
            except BaseException as exc:  # handed over to the waiting thread
                error.append(exc)

        worker = threading.Thread(target=target, name="agent-memory-network", daemon=True)
        worker.start()
        worker.join(self.remaining())
        if worker.is_alive():
            _abandoned.append(worker.name)
            raise DeadlineExceeded(f"no answer within {self.seconds:g} s")
        if error:
            raise error[0]
        return result[0]


def command_timeout() -> float:
    """The per-command network budget: `AGENT_MEMORY_TIMEOUT` seconds, default 30."""
    try:
        value = float(os.environ.get("AGENT_MEMORY_TIMEOUT", DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS


def abandoned_work() -> bool:
    """Whether some network call was abandoned and may still be blocked in a thread."""
    return bool(_abandoned)
