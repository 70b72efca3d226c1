"""The bucket's feed follower as a session sees it: whether the Hub's change feed, held open by a background process
(`follower`), shows that nothing changed under some folders of the bucket since a given time. A SessionStart pull
that learns so asks the bucket nothing, and loads no Hub library.

The follower writes one small record (`record.json`, owner-only, in `<state>/follow/<bucket key>/`): `since`, when
its continuous follow of the feed began (its first `ready`; a `reset` or a gap the feed cannot replay starts a new
one), `live` (a stream is open past its `ready`), `alive_at` (the last byte heard, keep-alives included), and per
folder (`DEPTH` names deep) the time it saw the newest change there, past `MAX_KEYS` folders one time for any of the
others. It holds `lock` for its whole life. A hook touches `wanted` (the follower ends when none did for `IDLE`).

Everything here is conservative: a record that is missing, damaged, oversized, stale or from a follower whose lock
is free means "ask the bucket". The record is read as anyone's (an agent's shell can write it).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from .. import paths
from ..fsutil import make_dirs, open_private, read_own, remove_tree

try:
    import fcntl
except ImportError:  # Windows: no follower, every pull asks the bucket
    fcntl = None  # type: ignore[assignment]
from ..names import hub_id

FRESH = 75.0  # seconds: the Hub sends a keep-alive about every 30 s; a follower heard later than this is in doubt
IDLE = 3600.0  # seconds without a session start before the follower ends: a working day's sessions keep one
MAX_RECORD = 64 * 1024  # bytes the record may hold; more is damage
MAX_KEYS = 200  # folders with a time of their own; past that, one time for any other change
DEPTH = 3  # names of a path that make its folder: `sync/claude/<project>`, `projects/<name>/notes`
SWITCH = "AGENT_MEMORY_FOLLOW"  # "0": no follower is started, and every pull asks the bucket


def folder(uri: str) -> Path:
    """The follower's folder for `uri`: its lock, its record, and the mark of the last session that wanted it."""
    return paths.state_dir() / "follow" / paths.bucket_key(uri)


def key(path: str) -> str:
    """The folder a changed path is counted under."""
    return "/".join(path.strip("/").split("/")[:DEPTH])


def enabled(uri: str) -> bool:
    """Whether a follower is used for `uri`: a Hub bucket (a folder store has no feed), unless turned off."""
    return hub_id(uri) is not None and os.environ.get(SWITCH, "1") != "0" and fcntl is not None


class Watch:
    """What the follower of one bucket recorded, read once by a session start."""

    def __init__(self, record: dict[str, object] | None, held: bool) -> None:
        self.record = record
        self.held = held

    def quiet(self, prefixes: list[str], start: float | None) -> bool:
        """Whether nothing changed under any of `prefixes` since `start` (the POSIX time when the last whole refresh
        of them began), as a live follower that was following already then tells; False at any doubt."""
        record = self.record
        if record is None or not self.held or start is None or record.get("live") is not True:
            return False
        now = time.time()
        since, alive = _time(record.get("since")), _time(record.get("alive_at"))
        if since is None or alive is None or not (since < start and now - FRESH <= alive <= now + 1):
            return False
        if (raw := record.get("other")) is not None and ((other := _time(raw)) is None or other >= start):
            return False
        changes = record.get("changes")
        if not isinstance(changes, dict):
            return False
        wanted = [prefix.strip("/") for prefix in prefixes]
        for name, value in changes.items():
            if (seen := _time(value)) is None:
                return False
            if seen >= start and any(_under(name, prefix) for prefix in wanted):
                return False
        return True


def watch(uri: str) -> Watch | None:
    """The follower's record of `uri` for a session start, which marks the follower wanted and starts one if none
    is alive (never waited for: this session asks the bucket); None where no follower is used."""
    if not enabled(uri):
        return None
    where = folder(uri)
    try:
        make_dirs(where)
        _touch(where / "wanted")
        held = alive(where)
    except OSError:  # a state folder we cannot use: ask the bucket, start nothing
        return None
    record = read(where)
    if not held and not _backing_off(record):
        spawn(uri)
    return Watch(record, held)


def stop_all() -> None:
    """End every follower of this machine: each ends when it finds its folder gone (at its next keep-alive)."""
    remove_tree(paths.state_dir() / "follow")


def alive(where: Path) -> bool:
    """Whether a follower holds the lock of `where` now. A session asks with a shared lock, taken and given back at
    once: two sessions that ask together never take each other for a follower (a follower's lock is exclusive, and
    one that starts meanwhile tries again, see `follower.LOCK_TRIES`)."""
    if fcntl is None:  # (no follower is ever started without it: see `enabled`)
        return False
    fd = open_private(where / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # (which gives back a lock it took)
    return False


def read(where: Path) -> dict[str, object] | None:
    """The record, None if missing or not one (bounded read, never through a link)."""
    with contextlib.suppress(OSError, ValueError):
        value = json.loads(read_own(where / "record.json", MAX_RECORD).decode("utf-8"))
        if isinstance(value, dict):
            return value
    return None


def spawn(uri: str) -> None:
    """Start the follower of `uri` in a process of its own session, its output nowhere; never wait for it."""
    from . import detached  # only here: a session start with a live follower starts nothing

    # in its own folder, not the session's, which the follower must not keep busy (an unmount)
    detached.start("agent_memory.store.follower", uri, cwd=folder(uri))


def _backing_off(record: dict[str, object] | None) -> bool:
    """Whether the last follower found the feed unfollowable (or the bucket refused) a short while ago: sessions do
    not start another one each time until its wait is over."""
    stopped = record.get("stopped") if record is not None else None
    if not isinstance(stopped, dict):
        return False
    until = _time(stopped.get("until"))
    return until is not None and time.time() < until <= time.time() + 24 * 3600


def _touch(file: Path) -> None:
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), 0o600)
    try:
        os.utime(fd)
    finally:
        os.close(fd)


def _under(name: str, prefix: str) -> bool:
    """Whether a recorded folder and a prefix overlap (either holds the other)."""
    return name == prefix or name.startswith(prefix + "/") or prefix.startswith(name + "/")


def _time(value: object) -> float | None:
    """A POSIX time from the record, None for anything else (a bool, a string, a time far outside any clock's)."""
    if type(value) is float or type(value) is int:
        return float(value) if 0 < value < 1e11 else None
    return None
