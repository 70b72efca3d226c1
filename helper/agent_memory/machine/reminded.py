"""The sessions that already got the SessionStart reminder, so that a resumed session is not given a second one.

Codex keeps a session's earlier context when it resumes it (`codex exec resume`), the SessionStart hook's included,
and runs SessionStart again with `source: resume` and the same `session_id`: a reminder at each resume would stack
(three after two resumes). Claude Code does not keep it (a resumed session shows only the new one), so only runtimes
that keep it skip the reminder (`KEEPS_SESSION_START_ON_RESUME`).

The record is one small file in the state folder: the newest KEEP session ids, one a line, changed under a lock
and written atomically. A record that cannot be read, or holds anything but ids (damaged, planted, not ours),
counts as empty: the session gets its reminder again, which only costs a repeated line.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths
from ..fsutil import locked, open_own, write_atomic

KEEP = 200  # sessions remembered: far more than anyone resumes, and a few KB to read
ID_MAX = 128
LIMIT = KEEP * (ID_MAX + 1)  # bytes: a record any larger is not ours, and is not read further
_ID = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:-]{0,%d}" % (ID_MAX - 1))


def _record() -> Path:
    return paths.state_dir() / "reminded-sessions"


def session_id(payload: dict[str, object]) -> str | None:
    """The event's `session_id`, if it has the shape of one (the runtimes send UUIDs)."""
    value = payload.get("session_id")
    if isinstance(value, str) and _ID.fullmatch(value.encode("utf-8", errors="replace")):
        return value
    return None


def seen(session: str) -> bool:
    """Whether `session` already got the reminder (False when the record cannot be read)."""
    return session in _read()


def add(session: str) -> None:
    """Remember that `session` got the reminder (the oldest ids beyond KEEP are forgotten)."""
    with locked(paths.state_dir() / "reminded-sessions.lock"):
        kept = [known for known in _read() if known != session][-(KEEP - 1) :]
        write_atomic(_record(), "".join(f"{known}\n" for known in [*kept, session]).encode())


def _read() -> list[str]:
    """The remembered ids, oldest first; [] if the record is missing, damaged or not ours."""
    try:
        with open(open_own(_record()), "rb") as handle:
            data = handle.read(LIMIT + 1)
    except OSError:  # missing, a link, another user's (UnsafeLocalFile is an OSError)
        return []
    lines = data.split(b"\n")
    if len(data) > LIMIT or lines[-1] != b"" or not all(_ID.fullmatch(line) for line in lines[:-1]):
        return []
    return [line.decode() for line in lines[:-1]]
