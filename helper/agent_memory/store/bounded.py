"""A folder store under the command's budget and the outage memory, as the Hub's store is.

A folder store on a network share that stops answering (a hard NFS mount, a FUSE filesystem whose server hangs)
blocks in a system call that never returns, and no timeout of Python's can end it. So every call is made by a child
process (`worker`) that the command leaves behind at its budget: a blocked thread would keep the process from ending.
A call that hears nothing for its budget's hearing time asks the folder once more (a stat of its root, in a child of its
own); if that is not answered either, the store is hung: the outage is recorded (`outage`), the command's later calls
fail at once, and later commands and hooks answer from what is local until a probe finds it answers again.

A call left too little of the budget to hear the folder (a hook on a loaded machine) asks that stat beside it from
the start: a folder that answers neither is hung all the same, so the first hook that meets the hang records it.

The bytes of a store call never reach the outbox or the cache half-done: the caller gets a StoreError, and a
save goes pending as for any failed upload.
"""

from __future__ import annotations

import os
import select
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from . import outage
from .base import FolderSilent, Listing, ObjectInfo, Replay, Store, StoreError
from .budget import Budget, DeadlineExceeded, within
from .detached import close_all_but

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .worker import Worker

# seconds: a call left less than this to hear the folder (and its stat beside it) gives no verdict on the folder; the
# probe, a process nobody waits for, asks it with time of its own
MIN_VERDICT = 0.5


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
        self._workers: list[Worker] = []  # one child serves every call, one at a time (`_started`)
        self._answers = 0  # questions of `_ask` the folder answered
        self._answered = False  # a call went through: any outage recorded is over (ended once per command)
        self._probed = False

    def _call(self, name: str, *args: object, **kwargs: object) -> object:
        if self.down is not None:
            raise _copy(self.down)
        if not hasattr(os, "fork"):  # no child to leave behind (Windows): a daemon thread, as the Hub's calls
            return self._in_thread(lambda: getattr(self.inner, name)(*args, **kwargs))
        worker = self._started()
        worker.send(name, *args, **kwargs)
        kind, value = self._next(worker)
        if kind == "error":
            assert isinstance(value, BaseException)
            raise value
        self._through()
        return value

    def _started(self) -> Worker:
        """The child for the next call: the command's one, unless a `read_many` still hands notes over through it
        (a call made while its notes are read then gets a child of its own)."""
        from .worker import Worker  # here: loaded by the first call, not by the commands that only open it

        free = next((worker for worker in self._workers if not worker.busy), None)
        if free is None:
            free = Worker(self.inner)
            self._workers.append(free)
        return free

    def _next(self, worker: Worker) -> tuple[str, object]:
        """The next answer of the call sent to `worker`, within the budget; a worker that hears nothing for the
        hearing time and whose folder does not answer a stat either is hung."""
        wait = self.budget.remaining()
        end = time.monotonic() + wait
        silence = self.budget.hearing()
        question: Question | None = None
        if wait > 2 * silence:
            found = worker.receive(time.monotonic() + silence)
            if found is not None:
                return found
            if not worker.heard and not self._ask(silence):
                raise self._given_up(worker, DeadlineExceeded(f"no answer at all within {2 * silence:.3g} s"))
        elif wait >= MIN_VERDICT:
            question = Question(self.root)  # beside the call: too short a wait to ask after a silence
        try:
            found = worker.receive(end)
            if found is not None:
                return found
            if question is None:
                late = DeadlineExceeded(f"no answer within {wait:.3g} s", judged=wait > 2 * silence)
                raise self._given_up(worker, late)
            answered = question.answered()
        finally:
            if question is not None:
                question.close()
        # the stat was answered in that time: a slow folder (its call was left too little time), not a hung one
        raise self._given_up(worker, DeadlineExceeded(f"no answer within {wait:.2g} s", judged=not answered))

    def _given_up(self, worker: Worker, exc: DeadlineExceeded) -> StoreError:
        """The error of a call that did not return in time, its child left behind; an outage unless the call had
        too little time to tell (a probe nobody waits for then tells)."""
        worker.abandon()
        if not exc.judged:
            self.down = StoreError("offline", f"the folder store {self.root} did not answer in time ({exc})")
            self._probe()
            return _copy(self.down)
        error = FolderSilent(self.root, f"the folder store {self.root} did not answer ({exc})")
        self.down = error
        outage.failed(self.uri, error)
        return error

    def _probe(self) -> None:
        if not self._probed:
            self._probed = True
            outage.probe_later(self.uri)

    def _through(self) -> None:
        if not self._answered:
            self._answered = True
            outage.ended()

    def _ask(self, seconds: float) -> bool:
        """Whether the root answers a stat within `seconds` (a slow folder does, a hung one not): any answer counts,
        even an error."""
        try:
            answered = stat(self.root, seconds) is not None
        except OSError:
            answered = True
        if answered:
            self._answers += 1
        return answered

    def _in_thread(self, fn: Callable[[], object]) -> object:
        try:
            found = within(self.budget, fn, ask=self._ask, heard=lambda: self._answers)
        except DeadlineExceeded as exc:
            if not exc.judged:
                raise StoreError("offline", str(exc)) from None
            self.down = FolderSilent(self.root, f"the folder store {self.root} did not answer ({exc})")
            outage.failed(self.uri, self.down)
            raise _copy(self.down) from None
        self._through()
        return found

    def close(self) -> None:
        for worker in self._workers:
            worker.close()
        self._workers.clear()

    # -- the Store interface, each call bounded -------------------------------------------------------------

    def ensure(self, *, create: bool) -> bool:
        return bool(self._call("ensure", create=create))

    def put(self, path: str, data: bytes) -> None:
        self._call("put", path, data)

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        self._call("put_many", objects)

    def fetch(self, objects: list[ObjectInfo], dest: Path) -> None:
        self._call("fetch", objects, dest)

    def holds(self, path: str, data: bytes) -> bool:
        return bool(self._call("holds", path, data))

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        found = self._call("read", path, limit)
        assert found is None or isinstance(found, bytes)
        return found

    def changes(self, cursor: str | None, prefix: str) -> Replay:
        found = self._call("changes", cursor, prefix)
        assert isinstance(found, Replay)
        return found

    def removal(self, path: str) -> str:
        return self.inner.removal(path)

    def updated_at(self) -> str | None:
        return self.inner.updated_at()  # a folder store cannot tell: no call

    def hashes(self, files: list[Path]) -> list[str | None]:
        return self.inner.hashes(files)

    def read_many(self, objects: list[ObjectInfo]) -> Iterator[tuple[ObjectInfo, bytes]]:
        """The inner store's reads, made by the child, which hands each note over as it is read: the caller waits
        for each at most as `_call` waits for a call (a fill of thousands of notes is one call)."""
        if self.down is not None:
            raise _copy(self.down)
        if not hasattr(os, "fork"):
            found = self._in_thread(lambda: list(self.inner.read_many(objects)))
            assert isinstance(found, list)
            yield from found
            return
        worker = self._started()
        worker.send("read_many", objects)
        try:
            while True:
                kind, value = self._next(worker)
                if kind == "error":
                    assert isinstance(value, BaseException)
                    raise value
                if kind == "end":
                    self._through()
                    return
                yield value  # type: ignore[misc]
        finally:
            if worker.busy:  # the caller stopped early: the child still hands notes over
                worker.abandon()

    def list(self, prefix: str) -> Listing:  # last: the name `list` in the class's body is this method after it
        found = self._call("list", prefix)
        assert isinstance(found, Listing)
        return found


def _copy(error: StoreError) -> StoreError:
    again = StoreError(error.reason, error.detail)
    again.lasting = error.lasting
    return again


class Question:
    """A stat of `folder` asked now in a forked child with no stdin, stdout or stderr of ours, answered later: a call
    into a hung mount blocks in the kernel where no signal ends it, and a process with such a thread can neither be
    reaped nor close its output, so the agent that runs a hook would wait for it. Only the child, which nobody waits
    for, is left blocked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # the child calls nothing but os.stat and os._exit
            self.pid = os.fork()
        if self.pid == 0:  # the child
            try:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                close_all_but(write_end)
                try:
                    info = os.stat(folder)
                    answer = f"{info.st_uid} {info.st_mode}"
                except OSError as exc:
                    answer = f"E {exc.errno or 0}"
                os.write(write_end, answer.encode())
            finally:
                os._exit(0)
        os.close(write_end)

    def answered(self) -> bool:
        """Whether the folder has answered by now (an error is an answer too)."""
        return bool(select.select([self._read_end], [], [], 0)[0])

    def answer(self, seconds: float) -> tuple[int, int] | None:
        """The folder's owner and mode, None if it did not answer within `seconds`; OSError as os.stat raises it."""
        if not select.select([self._read_end], [], [], seconds)[0]:
            return None  # the child stays blocked, reaped by init once the mount answers or goes away
        answer = os.read(self._read_end, 64).decode()
        os.waitpid(self.pid, 0)
        self.pid = 0
        first, _, second = answer.partition(" ")
        if first == "E":
            number = int(second)
            raise OSError(number, os.strerror(number), str(self.folder))
        return int(first), int(second)

    def close(self) -> None:
        os.close(self._read_end)
        if self.pid:
            try:
                os.waitpid(self.pid, os.WNOHANG)  # reaped if it answered; else left to init
            except ChildProcessError:
                pass
            self.pid = 0


def stat(folder: Path, seconds: float) -> tuple[int, int] | None:
    """The folder's owner and mode, None if it did not answer within `seconds` (a hung mount, see `Question`);
    OSError as os.stat raises it."""
    if not hasattr(os, "fork"):
        return _stat_here(folder)
    question = Question(folder)
    try:
        return question.answer(seconds)
    finally:
        question.close()


def _stat_here(folder: Path) -> tuple[int, int]:
    info = os.stat(folder)
    return info.st_uid, info.st_mode
