"""Time stamps and time-ordered ids: the creation time of notes, the revision of skills, the age of uploads."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:  # the C module has no stubs of its own: its classes are the ones `datetime` declares
    from datetime import datetime, timedelta, timezone
else:
    try:  # `datetime`'s own classes, from the C module it re-exports, without loading its pure-Python twin (1-2 ms)
        from _datetime import datetime, timedelta, timezone
    except ImportError:  # an interpreter without the C module
        from datetime import datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SECOND = timedelta(seconds=1)


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
    shape = stamp[4:5] + stamp[7:8] + stamp[10:11] + stamp[13:14] + stamp[16:17] + stamp[19:]
    if len(stamp) != 20 or shape != "--T::Z":
        return None
    then = _posix(stamp[0:4], stamp[5:7], stamp[8:10], stamp[11:13], stamp[14:16], stamp[17:19])
    return None if then is None else int(time.time() - then)


def id_time(note_id: str) -> int | None:
    """The POSIX time (to the second) at which an id of `new_id` was made, None if `note_id` does not start like one.

    Ids from the bucket are anyone's: only the shape is checked here, the caller weighs a time in the future."""
    stamp = note_id[:15]
    if len(stamp) != 15 or stamp[8] != "-" or not (stamp[:8] + stamp[9:]).isdigit():
        return None
    moment = _posix(stamp[0:4], stamp[4:6], stamp[6:8], stamp[9:11], stamp[11:13], stamp[13:15])
    return moment if moment is not None and moment >= 0 else None


def _posix(*fields: str) -> int | None:
    """The POSIX time of a UTC moment given as digit fields (year, month, day, hour, minute, second), None if they are
    not digits or name no real moment (a 13th month, a 30th of February).

    `datetime` rather than `time.strptime` and `calendar.timegm`: the same arithmetic, without loading `_strptime`
    and `calendar` (with `locale` and the whole `datetime`), which cost the SessionStart hook and `status` a third of
    the interpreter's own start-up."""
    if not all(field.isascii() and field.isdigit() for field in fields):
        return None
    try:
        year, month, day, hour, minute, second = (int(field) for field in fields)
        moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    except ValueError:
        return None
    return (moment - _EPOCH) // _SECOND
