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


def id_time(note_id: str) -> int | None:
    """The POSIX time (to the second) at which an id of `new_id` was made, None if `note_id` does not start like one.

    Ids from the bucket are anyone's: only the shape is checked here, the caller weighs a time in the future."""
    stamp = note_id[:15]
    if len(stamp) != 15 or stamp[8] != "-" or not (stamp[:8] + stamp[9:]).isdigit():
        return None
    try:
        moment = _parsed(stamp)
    except ValueError:
        return None
    return _timegm(moment)


def _parsed(stamp: str) -> time.struct_time:
    """`YYYYMMDD-HHMMSS` as a UTC struct_time, without `time.strptime` (which loads `_strptime`, `datetime` and
    `calendar`: several milliseconds, at every session start); ValueError if it is no real moment."""
    year, month, day = int(stamp[:4]), int(stamp[4:6]), int(stamp[6:8])
    hour, minute, second = int(stamp[9:11]), int(stamp[11:13]), int(stamp[13:15])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    lengths = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if year < 1970 or not 1 <= month <= 12 or not 1 <= day <= lengths[month - 1]:
        raise ValueError(stamp)
    if hour > 23 or minute > 59 or second > 60:  # 60: a leap second
        raise ValueError(stamp)
    yday = sum(lengths[: month - 1]) + day
    return time.struct_time((year, month, day, hour, minute, second, 0, yday, 0))


def _timegm(moment: time.struct_time) -> int:
    """The POSIX time of a UTC `struct_time` (`calendar.timegm`, without loading `calendar`)."""
    days = (moment.tm_year - 1970) * 365 + _leap_days(moment.tm_year) + moment.tm_yday - 1
    return days * 86400 + moment.tm_hour * 3600 + moment.tm_min * 60 + moment.tm_sec


def _leap_days(year: int) -> int:
    """Leap days in the years from 1970 up to (not including) `year`."""
    before = year - 1
    return (before // 4 - before // 100 + before // 400) - (1969 // 4 - 1969 // 100 + 1969 // 400)
