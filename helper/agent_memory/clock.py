"""Time stamps and time-ordered ids: the creation time of notes, the revision of skills, the age of uploads."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from datetime import datetime


def new_id(now: datetime | None = None) -> str:
    """A fresh, globally unique id that sorts by creation time, e.g. `20261130-044012-123456-3f9a1c2b7d`.

    UTC to the microsecond, then 40 random bits against collisions.
    """
    from datetime import datetime, timezone

    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%d-%H%M%S}-{now.microsecond:06d}-{os.urandom(5).hex()}"


def utc_now() -> str:
    """The current time as UTC ISO 8601, to the second."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
