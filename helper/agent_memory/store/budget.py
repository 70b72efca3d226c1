"""A time budget per command: every call to a store gets what is left of it, so nothing hangs.

The SDK's HTTP client has no timeout and hf_xet retries on its own, and a folder store on a hung mount blocks in a
system call that never returns, so the bound must come from outside. The Hub's store runs each call in a daemon
thread (`within`) and stops waiting when the budget is spent (`hub`); a thread that is still blocked is abandoned,
and the budget says so: `entry` then ends the process with os._exit, so that the SDK's exit handlers cannot wait for
it. A folder store's calls run in a child process instead (`bounded`, `worker`): a thread blocked in the kernel
would keep the process from ending at all.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import TypeVar

    Result = TypeVar("Result")  # what a store's call gives back

DEFAULT_SECONDS = 30.0
# how long a call may go without any answer once the store is in doubt (see `within`): a second silence in one command
# means the store is down (an outage: `outage`), and the command's later calls fail at once
SILENT_SECONDS = 2.0
# a call that would wait the whole budget may hear nothing at all from its store this long before the store is asked
# once more, and that question as long (`within`): at the default budget it is SILENT_SECONDS; a user who gives
# commands longer (AGENT_MEMORY_TIMEOUT: a slow link, a loaded machine) gives the store as much longer to answer.
HEAR_SHARE = 1 / 15


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

    def hearing(self) -> float:
        """How long a folder store's call within this budget may hear nothing before its folder is asked once more:
        `hearing_seconds()` for a command's budget, as short as SILENT_SECONDS for a hook's, whose runtime ends it
        after a few seconds whatever AGENT_MEMORY_TIMEOUT says (a hook's first call on a hung mount must be heard
        out, and the outage recorded, within the hook's own time)."""
        return max(SILENT_SECONDS, min(hearing_seconds(), self.seconds * HEAR_SHARE))

    def reset(self, seconds: float) -> None:
        """Start again with `seconds` from now: a hook has its own budget, not a command's."""
        self.seconds = seconds
        self.end = time.monotonic() + seconds


def stuck() -> bool:
    """Whether a store call is still blocked in one of our threads (a hung Hub or mount, given up on): the process
    must then end with os._exit once its output is written, since the interpreter's exit would wait for it."""
    threading = sys.modules.get("threading")  # not loaded: no thread of ours was ever started
    return threading is not None and any(
        t.name.startswith("agent-memory-") and t.is_alive() for t in threading.enumerate()
    )


def command_timeout() -> float:
    """The per-command network budget: `AGENT_MEMORY_TIMEOUT` seconds, default 30."""
    try:
        value = float(os.environ.get("AGENT_MEMORY_TIMEOUT", DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return value if value > 0 else DEFAULT_SECONDS


def within(
    budget: Budget,
    fn: Callable[[], Result],
    cap: float | None = None,
    *,
    ask: Callable[[float], object] | None = None,
    heard: Callable[[], int] = lambda: 0,
) -> Result:
    """Run `fn` within the remaining budget (and at most `cap` seconds) in a daemon thread, which the process can
    leave blocked (a Hub that never answers, a hung mount); DeadlineExceeded if it does not return in time (the
    thread that still waits is recorded in the budget as abandoned). `heard` counts the answers the store gave this
    process (the Hub's responses; a folder store's answered questions), which tell a slow store from a hung one.

    With `ask`, a store that answers nothing is not waited on for the whole budget: if nothing was heard within
    `hearing_seconds()`, `ask` puts one more question to it for as long (the Hub: a small request; a folder store: a
    stat of its folder), and if neither the call nor that question was answered by then, the store counts as hung
    (DeadlineExceeded, `twice`). A call that hears nothing is not always one the store ignores: an upload's bytes go
    through hf_xet, whose requests this process never sees, so a large note on a slow link is silent here for as long
    as it takes. The one more question is what tells that store (it answers) from
    a hung one; once anything was answered, the call has the rest of the budget, as every call had before.
    """
    import threading  # here: the hooks that use no store must not load it (about 5 ms)

    result: list[Result] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(fn())
        except BaseException as exc:  # handed over to the waiting thread
            error.append(exc)

    before = heard()
    worker = threading.Thread(target=target, name="agent-memory-network", daemon=True)
    worker.start()
    wait = budget.remaining() if cap is None else min(cap, budget.remaining())
    end = time.monotonic() + wait
    silence = hearing_seconds()
    if ask is not None and wait > 2 * silence:
        worker.join(silence)
        if worker.is_alive() and heard() == before:
            ask(silence)  # it may be answered, or the call's own request meanwhile
            if worker.is_alive() and heard() == before:
                budget.abandoned.append(worker.name)
                raise DeadlineExceeded(f"no answer at all within {2 * silence:.3g} s", twice=True)
    worker.join(max(0.0, end - time.monotonic()))
    if worker.is_alive():
        budget.abandoned.append(worker.name)
        if wait < (silence if cap is None else min(cap, silence)):
            # what was left of the budget (a loaded machine spends it starting up and on the calls before) was too
            # short to tell a silent Hub from one that answers in its time: no verdict on the Hub
            detail = f"the command's time ran out with {wait:.2g} s left for this call, too little to hear the Hub"
            raise DeadlineExceeded(detail, judged=False)
        raise DeadlineExceeded(f"no answer within {wait:.3g} s")
    if error:
        raise error[0]
    return result[0]


def hearing_seconds() -> float:
    """How long a call may hear nothing at all before the Hub is asked once more (see HEAR_SHARE)."""
    return max(SILENT_SECONDS, command_timeout() * HEAR_SHARE)


class DeadlineExceeded(Exception):
    """The command's time budget ran out before the call returned; `twice`: the Hub answered nothing at all, to the
    call or to one more request (see `_within`); not `judged`: the call was left too little of the budget to tell
    whether the Hub answers, so its failure says nothing of the Hub (no silence, no outage)."""

    def __init__(self, detail: str, *, twice: bool = False, judged: bool = True) -> None:
        super().__init__(detail)
        self.twice = twice
        self.judged = judged
