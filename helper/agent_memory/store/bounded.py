"""A folder store under the command's budget and the outage memory, as the Hub's store is.

A folder store on a network share that stops answering (a hard NFS mount, a FUSE filesystem whose server hangs)
blocks in a system call that never returns, and no timeout of Python's can end it. So every call runs in a daemon
thread (`budget.within`) that the command leaves at its budget; one that hears nothing for `hearing_seconds()`
asks the folder once more (a stat of its root, in a thread of its own), and if that is not answered either the
store is hung: the outage is recorded (`outage`), the command's later calls fail at once, and later commands and
hooks answer from what is local until its wait is over. A blocked thread is left behind: `entry` then ends the
process with os._exit once its output is written (`budget.stuck`), as after a hung Hub.

The bytes of a store call never reach the outbox or the cache half-done: the caller gets a StoreError, and a
save goes pending as for any failed upload.
"""

from __future__ import annotations

import os
import queue
import select
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from . import outage
from .base import FolderSilent, Listing, ObjectInfo, Replay, Store, StoreError
from .budget import Budget, DeadlineExceeded, hearing_seconds, within

_END = object()  # what the reader thread of `read_many` puts last


class BoundedStore(Store):
    """`inner` (a folder store), each of its calls within `budget`; a store that did not answer is `down`."""

    def __init__(self, inner: Store, root: Path, budget: Budget) -> None:
        self.inner = inner
        self.root = root
        self.uri = inner.uri
        self.hashed = inner.hashed
        self.direct = inner.direct
        self.budget = budget
        self.down: StoreError | None = None
        self._answers = 0  # questions of `_ask` the folder answered
        self._answered = False  # a call went through: any outage recorded is over (ended once per command)

    def _call(self, fn: Callable[[], object]) -> object:
        if self.down is not None:
            raise _copy(self.down)
        try:
            found = within(self.budget, fn, ask=self._ask, heard=lambda: self._answers)
        except DeadlineExceeded as exc:
            raise self._hung(exc) from None
        self._through()
        return found

    def _through(self) -> None:
        if not self._answered:
            self._answered = True
            outage.ended()

    def _hung(self, exc: DeadlineExceeded) -> StoreError:
        """The error of a call that did not return in time; an outage unless the call had too little time to tell."""
        if not exc.judged:
            return StoreError("offline", str(exc))
        error = FolderSilent(self.root, f"the folder store {self.root} did not answer ({exc})")
        self.down = error
        outage.failed(self.uri, error)
        return error

    def _ask(self, seconds: float) -> None:
        """A stat of the root, to tell a slow folder (it answers) from a hung one: any answer counts, even an error."""

        try:
            answered = stat(self.root, seconds) is not None
        except OSError:
            answered = True
        if answered:
            self._answers += 1

    # -- the Store interface, each call bounded -------------------------------------------------------------

    def ensure(self, *, create: bool) -> bool:
        return bool(self._call(lambda: self.inner.ensure(create=create)))

    def put(self, path: str, data: bytes) -> None:
        self._call(lambda: self.inner.put(path, data))

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        self._call(lambda: self.inner.put_many(objects))

    def fetch(self, objects: list[ObjectInfo], dest: Path) -> None:
        self._call(lambda: self.inner.fetch(objects, dest))

    def holds(self, path: str, data: bytes) -> bool:
        return bool(self._call(lambda: self.inner.holds(path, data)))

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        found = self._call(lambda: self.inner.read(path, limit))
        assert found is None or isinstance(found, bytes)
        return found

    def changes(self, cursor: str | None, prefix: str) -> Replay:
        found = self._call(lambda: self.inner.changes(cursor, prefix))
        assert isinstance(found, Replay)
        return found

    def removal(self, path: str) -> str:
        return self.inner.removal(path)

    def updated_at(self) -> str | None:
        return self.inner.updated_at()  # a folder store cannot tell: no call

    def hashes(self, files: list[Path]) -> list[str | None]:
        return self.inner.hashes(files)

    def read_many(self, objects: list[ObjectInfo]) -> Iterator[tuple[ObjectInfo, bytes]]:
        """The inner store's reads, made by one thread that hands each note over: the caller waits for each at
        most as `_call` waits for a call (a fill of thousands of notes starts no thread per note)."""
        if self.down is not None:
            raise _copy(self.down)
        handed: queue.Queue[object] = queue.Queue(maxsize=32)
        stopped = threading.Event()

        def give(item: object) -> bool:
            while not stopped.is_set():
                try:
                    handed.put(item, timeout=0.2)
                    return True
                except queue.Full:
                    continue
            return False

        def read() -> None:
            try:
                for item in self.inner.read_many(objects):
                    if not give(item):
                        return
            except BaseException as exc:  # handed over to the caller's thread
                give((_END, exc))
                return
            give((_END, None))

        worker = threading.Thread(target=read, name="agent-memory-store", daemon=True)
        worker.start()
        try:
            while True:
                item = self._next(handed, worker)
                if isinstance(item, tuple) and item and item[0] is _END:
                    if item[1] is not None:
                        raise item[1]
                    self._through()
                    return
                yield item  # type: ignore[misc]
        finally:
            stopped.set()

    def _next(self, handed: queue.Queue[object], worker: threading.Thread) -> object:
        """The next item the reader hands over, within the budget; a reader that hears nothing for the hearing time
        and whose folder does not answer a stat either is hung."""
        silence = hearing_seconds()
        while True:
            try:
                return handed.get(timeout=max(0.01, min(silence, self.budget.remaining())))
            except queue.Empty:
                pass
            if self.budget.remaining() <= 0:
                self.budget.abandoned.append(worker.name)
                raise self._hung(DeadlineExceeded(f"no answer within {self.budget.seconds:.3g} s"))
            before = self._answers
            self._ask(silence)
            if self._answers == before:
                self.budget.abandoned.append(worker.name)
                raise self._hung(DeadlineExceeded(f"no answer at all within {2 * silence:.3g} s", twice=True))
            # the folder answers: the reader is slow, not hung; wait on

    def list(self, prefix: str) -> Listing:  # last: the name `list` in the class's body is this method after it
        found = self._call(lambda: self.inner.list(prefix))
        assert isinstance(found, Listing)
        return found


def _copy(error: StoreError) -> StoreError:
    again = StoreError(error.reason, error.detail)
    again.lasting = error.lasting
    return again


def stat(folder: Path, seconds: float) -> tuple[int, int] | None:
    """The folder's owner and mode, None if it did not answer within `seconds` (a hung mount); OSError as os.stat
    raises it.

    The stat runs in a forked child with no stdin, stdout or stderr of ours: a call into a hung mount blocks in the
    kernel where no signal ends it, and a process with such a thread can neither be reaped nor close its output, so
    the agent that runs a hook would wait for it. Only the child, which nobody waits for, is left blocked.
    """
    if not hasattr(os, "fork"):
        return _stat_here(folder)
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the child calls nothing but os.stat and os._exit
        pid = os.fork()
    if pid == 0:  # the child
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                info = os.stat(folder)
                answer = f"{info.st_uid} {info.st_mode}"
            except OSError as exc:
                answer = f"E {exc.errno or 0}"
            os.write(write_end, answer.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], seconds)
        if not ready:
            return None  # the child stays blocked, reaped by init once the mount answers or goes away
        answer = os.read(read_end, 64).decode()
        os.waitpid(pid, 0)
    finally:
        os.close(read_end)
    first, _, second = answer.partition(" ")
    if first == "E":
        number = int(second)
        raise OSError(number, os.strerror(number), str(folder))
    return int(first), int(second)


def _stat_here(folder: Path) -> tuple[int, int]:
    info = os.stat(folder)
    return info.st_uid, info.st_mode
