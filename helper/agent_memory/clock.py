"""Time stamps and time-ordered ids: the creation time of notes, the revision of skills, the age of uploads."""

from __future__ import annotations

import calendar
import os
import time


def new_id(now_ns: int | None = None) -> str:
    """A fresh, globally unique id that sorts by creation time, e.g. `20261130-044012-123456-3f9a1c2b7d`.

    UTC to the microsecond (of `now_ns`, nanoseconds since the epoch, default now), then 40 random bits against
    collisions.
    """
    seconds, nanoseconds = divmod(time.time_ns() if now_ns is None else now_ns, 1_000_000_000)
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime(seconds))}-{nanoseconds // 1000:06d}-{os.urandom(5).hex()}"


def utc_now() -> str:
    """The current time as UTC ISO 8601, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def age_seconds(stamp: str) -> int | None:
    """How many seconds ago a `utc_now()` stamp was, None if it is not one."""
    try:
        then = time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return int(time.time() - calendar.timegm(then))


def id_time(note_id: str) -> int | None:
    """The POSIX time (to the second) at which an id of `new_id` was made, None if `note_id` does not start like one.

    Ids from the bucket are anyone's: only the shape is checked here, the caller weighs a time in the future."""
    stamp = note_id[:15]
    if len(stamp) != 15 or stamp[8] != "-" or not (stamp[:8] + stamp[9:]).isdigit():
        return None
    try:
        moment = time.strptime(stamp, "%Y%m%d-%H%M%S")
    except ValueError:  # no real moment (a 13th month, a 30th of February)
        return None
    return calendar.timegm(moment) if moment.tm_year >= 1970 else None
