"""The outage memory: a store that did not answer (the Hub, a folder store on a hung mount) is not asked again by
every command, only once its wait is over.

A store call that fails for a reason that does not clear within seconds (refused, timed out, hung, a 5xx answer:
`StoreError.lasting`) records the bucket, what failed and when to try again, in one small file of the state folder.
Until then every command that would use that bucket answers at once from what is local (`OutageStore`): a search
from the cache, stale, saying why and when the bucket is tried again; a save goes pending with its retry line;
a read finds what is cached. The wait grows with each interval that ends in another failure (30 s, 1, 2, 4 ...
minutes, at most 5); failures of several processes within one interval (six Stop hooks at the same moment) count
once. A success anywhere ends it, and `--online`, `pending retry` and every other explicit retry always try.

The record is read with a bound and never waited on (`fsutil.read_own`); one that cannot be used (damaged,
planted, from a clock far away) counts as no outage: the next failure writes a good one.
"""

from __future__ import annotations

import builtins
import json
import time
from pathlib import Path

from .. import paths
from ..fsutil import locked, read_own, write_json_atomic
from ..names import folder_path
from .base import FolderSilent, Listing, ObjectInfo, Replay, Store, StoreError

FIRST = 30.0  # seconds of the first wait
LONGEST = 300.0  # a Hub that is back is found again within this long, whatever the outage lasted
MAX_RECORD = 4096  # bytes: what the record ever holds
MAX_DETAIL = 300


class Outage:
    """A recorded outage of `bucket`: since when, how many intervals failed, until when nothing is tried, and why."""

    __slots__ = ("bucket", "since", "until", "failures", "reason", "detail")

    def __init__(self, bucket: str, since: float, until: float, failures: int, reason: str, detail: str) -> None:
        self.bucket = bucket
        self.since = since
        self.until = until
        self.failures = failures
        self.reason = reason
        self.detail = detail

    def left(self) -> float:
        """Seconds before the bucket is tried again (0: now)."""
        return max(0.0, self.until - time.time())

    def error(self) -> StoreError:
        """The failure every call of a command meets until the wait is over: what failed last, when it is tried
        again, and how to try now or not at all."""
        at = time.strftime("%H:%M:%S", time.localtime(self.since))
        again = time.strftime("%H:%M:%S", time.localtime(self.until))
        store = "the bucket" if folder_path(self.bucket) is None else "the folder store"
        # what it did: no answer at all, or an answer that was an error (a 500), which is said as it came
        what = f"has not answered since {at}" if self.reason == "offline" else f"has failed since {at}"
        # its wait over: a probe in the background is finding out whether it answers again (`due`)
        when = f"from {again} (in {round(self.left())} s)" if self.left() > 0 else "in the background now"
        detail = (
            f"{store} {what} ({self.detail}); agent-memory tries it again {when}; "
            "--online tries it now, and search --offline never asks it"
        )
        if (folder := folder_path(self.bucket)) is not None:
            return FolderSilent(folder, detail)
        error = StoreError(self.reason, detail)
        error.lasting = True
        return error


def record() -> Path:
    """The file of the outage (read at most MAX_RECORD bytes)."""
    return paths.state_dir() / "outage.json"


def current(bucket: str) -> Outage | None:
    """The outage of `bucket` whose wait is not over, None if it may be tried now."""
    found = _read()
    if found is None or found.bucket != bucket:
        return None
    left = found.until - time.time()
    return found if 0 < left <= LONGEST else None  # beyond the longest wait: a clock that moved


def due(bucket: str) -> tuple[Outage, bool] | None:
    """The outage of `bucket` whose wait is over but which no answer has ended yet, and whether a probe of it is to
    start now. No command asks the store then (a hung mount or Hub would hold a search, the session's start or the
    end of its turn): it answers from what is local, and leaves the question to a probe nobody waits for (`probe`).
    Whoever finds the wait over first records that it started one, so that the commands and hooks of several
    sessions start one probe; until the probe says the store answers, the store counts as down. The probe's failure
    counts as the next interval's (the wait is over), its success ends the outage."""
    now = time.time()
    try:
        with locked(paths.state_dir() / "outage.lock"):
            found = _read()
            if found is None or found.bucket != bucket or found.until > now or found.reason != "offline":
                return None  # a store that answered, if with an error (a 500), answers the command as fast
            value = json.loads(read_own(record(), MAX_RECORD))
            probed = value.get("probed")
            if isinstance(probed, (int, float)) and 0 <= now - probed < FIRST:
                return found, False  # a probe is under way: nobody asks the store meanwhile
            write_json_atomic(record(), {**value, "probed": now})
    except (OSError, ValueError):  # a read-only state: the command asks the store itself, as before
        return None
    return found, True


def probe_later(bucket: str) -> None:
    """Start the probe of `bucket` (`probe`) in a process of its own session, its output nowhere; never wait for it."""
    from .detached import start  # only here: a command whose store answers starts nothing

    start("agent_memory.store.probe", bucket)


def failed(bucket: str, error: StoreError) -> None:
    """Record a lasting failure of `bucket`. Within the wait of a failure already recorded it counts once: every
    process that met the same outage at the same moment says the same thing."""
    now = time.time()
    detail = error.detail[:MAX_DETAIL]
    try:
        with locked(paths.state_dir() / "outage.lock"):
            found = _read()
            if found is not None and found.bucket == bucket and now < found.until <= now + LONGEST:
                return  # counted already
            if found is not None and found.bucket == bucket:  # the same bucket again: one more failure
                failures, since = found.failures + 1, found.since
            else:
                failures, since = 1, now
            wait = min(FIRST * 2 ** min(failures - 1, 16), LONGEST)
            value = {"bucket": bucket, "since": since, "until": now + wait, "failures": failures}
            write_json_atomic(record(), {**value, "reason": error.reason, "detail": detail})
    except OSError:  # a read-only state: no memory
        pass


def ended() -> None:
    """A call went through: whatever was recorded is over (the bucket answers again)."""
    try:
        record().unlink()
    except OSError:  # none recorded, or a state folder it cannot write (a sandbox)
        pass


def _read() -> Outage | None:
    try:
        value = json.loads(read_own(record(), MAX_RECORD))
        found = Outage(
            value["bucket"], value["since"], value["until"], value["failures"], value["reason"], value["detail"]
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None  # missing, damaged or not ours: no outage
    numbers = (found.since, found.until)
    if not (
        all(isinstance(n, (int, float)) for n in numbers)
        and isinstance(found.failures, int)
        and found.failures > 0
        and all(isinstance(s, str) for s in (found.bucket, found.reason, found.detail))
        and found.reason in ("offline", "error")
    ):
        return None
    found.detail = found.detail[:MAX_DETAIL]
    return found


class OutageStore(Store):
    """The store of a bucket in an outage: every call fails at once with the outage's error, so that no command
    waits for a bucket that did not answer a moment ago."""

    def __init__(self, uri: str, outage: Outage) -> None:
        self.uri = uri
        self.outage = outage

    def _fail(self) -> StoreError:
        return self.outage.error()

    def ensure(self, *, create: bool) -> bool:
        raise self._fail()

    def put(self, path: str, data: bytes) -> None:
        raise self._fail()

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        raise self._fail()

    def list(self, prefix: str) -> Listing:
        raise self._fail()

    def fetch(self, objects: builtins.list[ObjectInfo], dest: Path) -> None:
        raise self._fail()

    def holds(self, path: str, data: bytes) -> bool:
        raise self._fail()

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        raise self._fail()

    def changes(self, cursor: str | None, prefix: str) -> Replay:
        raise self._fail()

    def updated_at(self) -> str | None:
        raise self._fail()
