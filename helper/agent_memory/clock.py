"""Time stamps and time-ordered ids: the creation time of notes, the revision of skills, the age of uploads.

From `time`, not `datetime`: every command stamps something, and datetime costs a few milliseconds to load.
"""

from __future__ import annotations

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
    return int(time.time() - _timegm(then))


def _timegm(moment: time.struct_time) -> int:
    """The POSIX time of a UTC `struct_time` (`calendar.timegm`, without loading `calendar`)."""
    days = (moment.tm_year - 1970) * 365 + _leap_days(moment.tm_year) + moment.tm_yday - 1
    return days * 86400 + moment.tm_hour * 3600 + moment.tm_min * 60 + moment.tm_sec


def _leap_days(year: int) -> int:
    """Leap days in the years from 1970 up to (not including) `year`."""
    before = year - 1
    return (before // 4 - before // 100 + before // 400) - (1969 // 4 - 1969 // 100 + 1969 // 400)
