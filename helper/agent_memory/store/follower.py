"""The feed follower: a detached process that holds a Hub bucket's change feed open and records what it saw, so that
a session start with nothing changed asks the bucket nothing (`follow` is what sessions read, and how they start it).

It follows `GET /api/buckets/{id}/events`: a replay after its cursor, `ready`, then live changes. When the server
ends a stream (`reconnect`, a closed connection, a read that timed out) it opens the next one at its cursor, whose
replay covers the gap: its follow goes on. A `reset` (the gap is older than the server's buffer) or an event it does
not understand starts a new follow, which counts from its own `ready`. It ends when no session wanted it for
`follow.IDLE`, when its folder is gone, and when the Hub refuses the feed or cannot be reached: it records why, and
sessions start no other one until the wait recorded with it is over (they ask the bucket meanwhile).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..fsutil import try_locked, write_json_atomic
from ..names import hub_id
from . import change_feed
from .follow import FRESH, IDLE, MAX_KEYS, folder, key

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    Opener = Callable[[dict[str, str]], AbstractContextManager[Iterator[bytes]]]

MAX_KEY = 200  # characters of a folder with a time of its own: MAX_KEYS of them fit far within the record's bound
LOCK_TRIES = 20  # times 0.05 s: a session start holds the lock for an instant to see whether a follower holds it
WRITE_EVERY = 5.0  # seconds between records of keep-alives alone (a change is recorded at once)
MAX_OPENS = 5  # streams in a row that end before `ready`: the feed is left alone for SHORT_WAIT
SHORT_WAIT = 120.0  # seconds after the Hub could not be reached or failed (a 5xx) before a session starts another
SHORT_STREAM = 5.0  # seconds: a stream that ended sooner is followed by a pause before the next (doubling)
MAX_PAUSE = 60.0
LONG_WAIT = 3600.0  # seconds after the Hub refused the feed or the bucket (401, 403, 404, 501, a non-stream answer)


class Stop(Exception):
    """The follower ends: why, and how long sessions leave the feed alone (None: a new follower may start at once;
    `gone`: its folder is gone, and nothing is recorded)."""

    def __init__(self, reason: str, wait: float | None, *, gone: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.gone = gone


class Gap(Exception):
    """The stream broke off (timed out, cut): the next one resumes at the cursor."""


class Follower:
    """What one follower has seen, and its record."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.since: float | None = None  # when the continuous follow began: its first `ready`
        self.live = False  # a stream is open past its `ready`: a change now reaches this process within moments
        self.heard = time.time()
        self.changes: dict[str, float] = {}
        self.other: float | None = None
        self.cursor: str | None = None
        self.written = 0.0

    def save(self, stopped: dict[str, object] | None = None) -> None:
        record: dict[str, object] = {
            "pid": os.getpid(),
            "since": self.since,
            "live": self.live,
            "alive_at": self.heard,
            "changes": self.changes,
            "other": self.other,
        }
        if stopped is not None:
            record["stopped"] = stopped
        write_json_atomic(self.where / "record.json", record)
        self.written = time.monotonic()

    def saw(self, paths: list[str]) -> None:
        """Record that `paths` changed, now (recorded at once: a session that starts next must ask the bucket)."""
        now = time.time()
        for path in paths:
            name = key(path)
            if len(name) > MAX_KEY:  # a folder name of the bucket's choosing: kept short, the record stays small
                self.other = now
                continue
            if name not in self.changes and len(self.changes) >= MAX_KEYS:  # the oldest joins "any other change"
                oldest = min(self.changes, key=self.changes.__getitem__)
                self.other = max(self.other or 0.0, self.changes.pop(oldest))
            self.changes[name] = now
        if paths:
            self.save()

    def new_follow(self) -> None:
        """What was followed has a gap the feed cannot replay: the next stream starts a new follow at its head."""
        self.since, self.cursor, self.live = None, None, False
        self.save()

    def run(self, open_stream: Opener) -> None:
        """Follow until a Stop."""
        failed, pause = 0, 0.0
        while True:
            self.check()
            ready, opened = False, time.monotonic()
            try:
                with open_stream({"cursor": self.cursor} if self.cursor else {}) as chunks:
                    ready = self._follow(chunks)
            except Gap:
                pass
            except change_feed.Unfollowable:  # an event it could not read: whatever it said is not lost, only asked
                self.other = time.time()
                self.new_follow()
            if self.live:
                self.live = False
                self.save()
            failed = 0 if ready else failed + 1
            if failed >= MAX_OPENS:
                raise Stop(f"the change feed ended {MAX_OPENS} times before it was ready", SHORT_WAIT)
            # a stream that ends at once is not opened again at once: a server that keeps doing so is not hammered
            pause = 0.0 if time.monotonic() - opened >= SHORT_STREAM else min(max(1.0, 2 * pause), MAX_PAUSE)
            time.sleep(pause)

    def _follow(self, chunks: Iterator[bytes]) -> bool:
        """Read one stream until it ends; whether it got `ready`."""
        ready = False
        for name, data in change_feed.events(self._heard(chunks), math.inf, None):
            if name == "changes":
                found: dict[str, change_feed.Change] = {}
                self.cursor = change_feed.apply(data, found, "")
                self.saw(list(found))
            elif name == "ready":
                self.cursor = _cursor(data) or self.cursor
                ready, self.live = True, True
                self.since = self.since if self.since is not None else time.time()
                self.save()
            elif name == "reset":
                self.new_follow()
                break
            elif name == "reconnect":
                self.cursor = _cursor(data) or self.cursor
                break
        return ready

    def _heard(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.heard = time.time()
            self.check()
            if time.monotonic() - self.written >= WRITE_EVERY:
                self.save()
            yield chunk

    def check(self) -> None:
        """Stop when the folder is gone, or no session wanted this follower for IDLE seconds."""
        try:
            wanted = os.stat(self.where / "wanted").st_mtime
        except OSError:
            raise Stop("its folder is gone", None, gone=True) from None
        if not -IDLE <= time.time() - wanted <= IDLE:  # (a time far ahead is no session's)
            raise Stop("no session wanted it", None)


def _cursor(data: str) -> str | None:
    with contextlib.suppress(ValueError):
        payload = json.loads(data) if data.strip() else {}
        got = payload.get("cursor") if isinstance(payload, dict) else None
        if isinstance(got, str) and 0 < len(got) <= change_feed.MAX_PATH:
            return got
    return None


def _opener(bucket_id: str) -> Opener:
    """Streams of the bucket's feed through the SDK's session and our transport (no retries of its own)."""
    import httpx2
    from huggingface_hub.utils import build_hf_headers, get_session

    from . import hub
    from .budget import Budget

    store = hub.HubStore(bucket_id, budget=Budget())  # sets up the SDK: our transport, the endpoint
    url = f"{store.endpoint}/api/buckets/{bucket_id}/events"

    @contextlib.contextmanager
    def open_stream(params: dict[str, str]) -> Iterator[Iterator[bytes]]:
        headers = {**build_hf_headers(), "accept": "text/event-stream"}
        try:
            timeout = httpx2.Timeout(FRESH, connect=10.0)  # no byte for this long: a gap, resumed at the cursor
            with get_session().stream("GET", url, headers=headers, params=params, timeout=timeout) as response:
                status = response.status_code
                if status == 400 and "cursor" in params:  # a cursor it will not take: a new follow, from its head
                    raise change_feed.Unfollowable("refused", "the change feed refused the cursor")
                if status >= 400:  # refused (401, 403, 404)
                    raise Stop(f"the change feed answered {status}", LONG_WAIT)
                if not response.headers.get("content-type", "").startswith("text/event-stream"):
                    raise Stop("the change feed answered something else", LONG_WAIT)
                yield response.iter_bytes()
        except hub._ServerAnswer as exc:  # 501: not served here; another 5xx: failing now
            raise Stop(str(exc), LONG_WAIT if exc.status == 501 else SHORT_WAIT) from None
        except hub._Unreachable as exc:  # refused, unreachable: the Hub (or the emulator) is gone
            raise Stop(str(exc), SHORT_WAIT) from None
        except httpx2.HTTPError:  # timed out between bytes, cut in the middle
            raise Gap() from None

    return open_stream


def main(uri: str) -> int:
    """Follow the feed of `uri` while wanted; 0 when it ended as it should."""
    where = folder(uri)
    bucket_id = hub_id(uri)
    if bucket_id is None or not where.is_dir():
        return 2
    for _try in range(LOCK_TRIES):
        with try_locked(where / "lock") as ours:
            if ours:
                return _follow(bucket_id, where)
        time.sleep(0.05)
    return 0  # another follower holds it


def _follow(bucket_id: str, where: Path) -> int:
    follower = Follower(where)
    follower.save()  # a record of this follower's own: nothing followed yet
    try:
        follower.run(_opener(bucket_id))
    except Stop as stop:
        if stop.gone:
            return 0
        follower.since, follower.live = None, False
        wait = stop.wait
        follower.save({"reason": stop.reason[:300], "until": time.time() + wait} if wait is not None else None)
        return 0
    except Exception as exc:  # noqa: BLE001 (a follower that fails leaves a record no session trusts)
        follower.since, follower.live = None, False
        follower.save({"reason": f"{type(exc).__name__}"[:300], "until": time.time() + SHORT_WAIT})
        return 1
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1])
    sys.stdout.flush()
    os._exit(code)
