"""Claiming an operation of the outbox: one worker at a time, and a lock file that is never pulled from under
its holder.

Each operation has a lock file in `<outbox>/.locks/`. A worker takes the lock before it reads the plan, so two
workers never upload the same plan at once, and the second one, once it gets the lock, finds the result the
first one recorded. A lock file is only deleted by a worker that holds it, and a worker that got a lock checks
that its file is still the one at that path (same inode): if it was deleted meanwhile, it takes the new one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a concurrent retry there at worst checks twice
    fcntl = None  # type: ignore[assignment]  # Windows has no fcntl: every use tests for None

from ..fsutil import UnsafeLocalFile, open_own, open_private
from . import plans

_POLL_SECONDS = 0.05


def _lock_file(op: str) -> Path:
    return plans.root() / ".locks" / f"{op}.lock"


@contextlib.contextmanager
def claimed(op: str, wait_seconds: float) -> Iterator[bool]:
    """Hold the lock of `op`, waiting up to `wait_seconds`; yields False if another worker kept it that long."""
    if fcntl is None:
        yield True
        return
    path = _lock_file(op)
    end = time.monotonic() + wait_seconds
    while True:
        fd = open_private(path, os.O_RDWR)  # never a planted link or another user's file (UnsafeLocalFile)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= end:
                yield False
                return
            time.sleep(_POLL_SECONDS)
            continue
        if _still_at(path, fd):
            break
        os.close(fd)  # the file was deleted by its previous holder: lock the one at the path now
    try:
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def forget(ops: list[str]) -> None:
    """Delete the lock files of operations that are long finished, each only while holding it."""
    if fcntl is None:
        return
    for op in ops:
        path = _lock_file(op)
        try:
            fd = open_own(path, os.O_RDWR)
        except (FileNotFoundError, UnsafeLocalFile):  # a link is not ours to tidy: `claimed` reports it
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _still_at(path, fd):
                os.unlink(path)
        except BlockingIOError:
            pass  # someone holds it right now: leave it
        finally:
            os.close(fd)


def _still_at(path: Path, fd: int) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False
