"""The feed followers a test machine started (`agent_memory.store.follower`, detached from the hook that started
them): found by their command line and the agent-memory home in their environment, so that a test sees, and stops,
only its own."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

MODULE = b"agent_memory.store.follower"


def running(state: Path) -> list[int]:
    """The process ids of the followers whose AGENT_MEMORY_HOME is `state`."""
    mine = b"AGENT_MEMORY_HOME=" + str(state).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0") if MODULE in command else []
            if mine in environ and not _zombie(name):
                found.append(int(name))
    return sorted(found)


def stop(state: Path, patience: float = 1.0) -> list[int]:
    """Give the followers of `state` `patience` seconds to end by themselves (their Hub is gone), then end them;
    the ids of those that had to be ended."""
    end = time.monotonic() + patience
    while (left := running(state)) and time.monotonic() < end:
        time.sleep(0.1)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    return left


def _zombie(pid: str) -> bool:
    """Ended, not yet reaped by its new parent: gone for a test."""
    status = Path(f"/proc/{pid}/stat").read_text()
    return status.rpartition(")")[2].split()[0] == "Z"
