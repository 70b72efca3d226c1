"""A folder store's calls, made by a child process that the command can leave behind.

A call into a hung mount (a hard NFS mount, a FUSE filesystem whose server went away) blocks in the kernel where no
signal or timeout ends it. A thread so blocked keeps its whole process from ending, since the exit waits for every
thread, and the agent that runs a hook waits for that process. So a command makes its folder store's calls in one
child, forked at the first call and handed each call through a pipe (`Worker`). The command waits for an answer as
long as its budget allows; a child that did not answer is killed and left behind (`abandon`). The command then ends
as usual, its output flushed: the child holds none of its descriptors and is reaped by init once the mount answers.

Only the child changes anything in the store. A caller that gave up treats the call as failed, as after any failed
upload (a save goes pending with its id and bytes), and its next call forks a new child.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import struct
import time
import warnings

from .base import Store, StoreError
from .detached import close_all_but

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct(">Q")  # the length of the pickled message that follows
MAX_MESSAGE = 1 << 31  # bytes: more than any call of ours answers; a longer header is a damaged answer
_left: list[int] = []  # children given up on, reaped when they end (not waited for)


class Ended(StoreError):
    """The child ended without a whole answer (killed, or its answer cut short): the call failed, nothing is known
    of what it did (a write is checked or retried as after a lost answer)."""

    def __init__(self, detail: str) -> None:
        super().__init__("error", f"the folder store's call ended without an answer ({detail})")


class Worker:
    """One child that makes the calls of `store`, one at a time: `send` a call, then `receive` its answers."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pid = 0
        self._requests = -1  # ours to write
        self._answers = -1  # ours to read
        self._buffer = bytearray()
        self.heard = False  # bytes of an answer came since the last `receive` began
        self.busy = False  # a call was sent and its last answer not read yet

    def send(self, name: str, *args: object, **kwargs: object) -> None:
        """Hand the call `name(*args, **kwargs)` to the child (forked now if there is none)."""
        if self.pid == 0:
            self._start()
        message = pickle.dumps((name, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self._requests, _HEADER.pack(len(message)) + message)
        except OSError as exc:  # the child is gone
            self.abandon()
            raise Ended(f"its process ended: {exc.strerror or exc}") from None
        self.busy = True

    def receive(self, until: float) -> tuple[str, object] | None:
        """The next answer to the call sent, None if it did not come whole before the monotonic time `until`: a
        kind (`ok`, `item`, `end`, `error`) and what it holds; Ended if the child ended without it."""
        self.heard = False
        while True:
            if len(self._buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self._buffer)
                if size > MAX_MESSAGE:
                    self.abandon()
                    raise Ended("a damaged answer")
                if len(self._buffer) >= _HEADER.size + size:
                    body = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
                    del self._buffer[: _HEADER.size + size]
                    kind, value = pickle.loads(body)  # our own child's answer
                    if kind in ("ok", "end", "error"):
                        self.busy = False
                    return kind, value
            left = until - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                return None
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                why = "its answer was cut short" if self._buffer else "its process ended"
                self.abandon()
                raise Ended(why)
            self.heard = True
            self._buffer += chunk

    def abandon(self) -> None:
        """Kill the child and never wait for it: one blocked in a hung mount ends when the mount answers."""
        if self.pid:
            import signal  # here: a command whose calls were answered never needs it

            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            _left.append(self.pid)
        self._forget()

    def close(self) -> None:
        """End the child: an idle one ends when its pipe closes (not waited for: a command that used its store
        would pay for the child's exit); a busy one is abandoned."""
        if self.busy:
            self.abandon()
            return
        pid = self.pid
        self._forget()
        if pid and not _reap(pid, block=False):
            _left.append(pid)  # it ends at its pipe's end, within milliseconds: reaped later, or by init

    def _forget(self) -> None:
        for fd in (self._requests, self._answers):
            if fd >= 0:
                os.close(fd)
        self._requests = self._answers = -1
        self.pid = 0
        self.busy = False
        self._buffer.clear()
        for pid in list(_left):  # the children left earlier that have ended since
            if _reap(pid, block=False):
                _left.remove(pid)

    def _start(self) -> None:
        requests_in, requests_out = os.pipe()
        answers_in, answers_out = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # forked with threads: the child uses none of them
            pid = os.fork()
        if pid == 0:  # the child: it serves until its pipe closes, and never returns into the command
            try:
                _detach(keep=(requests_in, answers_out))
                _serve(self.store, requests_in, answers_out)
            finally:
                os._exit(0)
        os.close(requests_in)
        os.close(answers_out)
        self.pid, self._requests, self._answers = pid, requests_out, answers_in


def _detach(keep: tuple[int, int]) -> None:
    """The child's descriptors: nothing of the command's (its output, which the agent reads to the end; its locks)
    but the two pipes. (Ctrl-C reaches it too: its call fails with KeyboardInterrupt, as the command's own does.)"""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    close_all_but(*keep)


def _serve(store: Store, requests: int, answers: int) -> None:
    """Make each call read from `requests`, and write its answers to `answers` (a `read_many` gives one per note)."""
    while (call := _read_message(requests)) is not None:
        name, args, kwargs = call
        try:
            if name == "read_many":
                for item in store.read_many(*args):
                    _send(answers, "item", item)
                _send(answers, "end", None)
            else:
                _send(answers, "ok", getattr(store, name)(*args, **kwargs))
        except BaseException as exc:  # handed over to the command, which raises it
            _send(answers, "error", _portable(exc))


def _send(fd: int, kind: str, value: object) -> None:
    _write_all(fd, _framed(kind, value))


def _framed(kind: str, value: object) -> bytes:
    """The answer as it goes through the pipe: its length, then the pickle (`_Pickler`, which carries our errors)."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((kind, value))
    return _HEADER.pack(len(buffer.getvalue())) + buffer.getvalue()


class _Pickler(pickle.Pickler):
    """A pickler for the child's answers: our errors (alone, or in a listing's `skipped`) take other arguments
    than they keep, so each goes as its class, arguments and attributes and is rebuilt without its constructor."""

    def reducer_override(self, obj: object) -> Any:  # noqa: ANN401 (pickle's own type: a reduction, or NotImplemented)
        if isinstance(obj, BaseException) and not isinstance(obj, OSError):  # OSError pickles itself, errno and all
            return _rebuilt, (type(obj), obj.args, dict(getattr(obj, "__dict__", {})))
        return NotImplemented


def _read_message(fd: int) -> Any:  # noqa: ANN401 (our own child's message, unpacked by _serve)
    """The next message on `fd`, None at its end (the command closed it, or ended)."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    found = bytearray()
    while len(found) < size:
        chunk = os.read(fd, min(size - len(found), 1 << 20))
        if not chunk:
            return None
        found += chunk
    return bytes(found)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _portable(exc: BaseException) -> BaseException:
    """The error itself, unless it cannot go through a pipe: then a StoreError with its words."""
    try:
        _framed("error", exc)
    except Exception:
        return StoreError("error", str(exc))
    return exc


def _rebuilt(cls: type[BaseException], args: tuple[object, ...], state: dict[str, object]) -> BaseException:
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def _reap(pid: int, *, block: bool) -> bool:
    """Whether the child `pid` has ended (and is reaped now)."""
    try:
        done, _status = os.waitpid(pid, 0 if block else os.WNOHANG)
    except ChildProcessError:
        return True  # reaped already (a handler of someone else's, or init after a fork)
    return done == pid
