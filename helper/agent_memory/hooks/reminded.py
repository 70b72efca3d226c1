"""What the SessionStart hook already told: which sessions got the reminder (and the pending uploads it named), and
which unmapped folders were told today that they have no memory project.

Both runtimes keep a resumed session's earlier context, the SessionStart reminders included, and run SessionStart
again (`source: resume`, the same `session_id`): Codex keeps every one of them (`codex exec resume`), Claude Code
keeps every one that differs from an earlier one (`--resume`, `--continue`; measured with both CLIs, see
tests/test_runtime_resume.py). A second reminder would stack on the first, and its changing facts ("2 notes",
"1 upload not shared yet") would leave stale ones beside new ones. So a resumed session that already got its
reminder gets nothing, or, when the uploads pending here changed since it was told, one line saying so.

Each record is one small file in the state folder, changed under a lock and written atomically, bounded (the newest
KEEP entries). A record that cannot be read, or holds anything else (damaged, planted, not ours), counts as empty:
the session gets its reminder again, which only costs a repeated line.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from .. import paths
from ..contents import sha256
from ..fsutil import locked, read_own, write_atomic

KEEP = 200  # sessions (and folders) remembered: far more than anyone resumes, and a few KB to read
ID_MAX = 128
DIGEST = 16  # hex digits of what was told about pending uploads
LIMIT = KEEP * (ID_MAX + DIGEST + 2)  # bytes: a record any larger is not ours, and is not read further
UNKNOWN = ""  # what a session was told, in a record written before that was kept: nothing more is said to it
# the digest of no lines, written out (tests/test_reminder.py computes it): most sessions start with nothing
# pending, and hashing would load OpenSSL on every session start (tests/test_import_paths.py holds it off that path)
NOTHING_PENDING = "e3b0c44298fc1c14"  # sha256(b"")[:DIGEST]
_ID_FORM = rb"[A-Za-z0-9][A-Za-z0-9._:-]{0,%d}" % (ID_MAX - 1)
_ID = re.compile(_ID_FORM)
_SESSION_LINE = re.compile(rb"(%s)(?: ([0-9a-f]{%d}))?" % (_ID_FORM, DIGEST))
_FOLDER_LINE = re.compile(rb"(\d{4}-\d\d-\d\d) ([0-9a-f]{%d})" % DIGEST)


def _sessions() -> Path:
    return paths.state_dir() / "reminded-sessions"


def _folders() -> Path:
    return paths.state_dir() / "unmapped-told"


def records() -> list[Path]:
    """The files of both records (each read at most LIMIT bytes), for `status` to check."""
    return [_sessions(), _folders()]


def session_id(payload: dict[str, object]) -> str | None:
    """The event's `session_id`, if it has the shape of one (the runtimes send UUIDs)."""
    value = payload.get("session_id")
    if isinstance(value, str) and _ID.fullmatch(value.encode("utf-8", errors="replace")):
        return value
    return None


def digest(lines: list[str]) -> str:
    """A short digest of the lines told (the pending uploads): whether a session was told what holds now."""
    return sha256("\n".join(lines).encode())[:DIGEST] if lines else NOTHING_PENDING


def told(session: str) -> str | None:
    """The digest of what `session` was told about pending uploads, UNKNOWN for a session recorded without one,
    None when it never got the reminder (or the record cannot be read)."""
    return dict(_read_sessions()).get(session)


def first_told(sessions: list[str]) -> str | None:
    """`told` of the first of `sessions` that got the reminder (the record read once), None if none did."""
    known = dict(_read_sessions())
    return next((known[session] for session in sessions if session in known), None)


def add(session: str, told_digest: str) -> None:
    """Remember that `session` got the reminder, told `told_digest` (the oldest beyond KEEP are forgotten)."""
    with locked(paths.state_dir() / "reminded-sessions.lock"):
        kept = [(known, was) for known, was in _read_sessions() if known != session][-(KEEP - 1) :]
        lines = (f"{known} {was}\n" if was else f"{known}\n" for known, was in [*kept, (session, told_digest)])
        # not durable: every session start writes it, and an fsync costs the session milliseconds on a busy disk; a
        # record lost in a crash costs a resumed session one more reminder
        write_atomic(_sessions(), "".join(lines).encode(), durable=False)


def first_today(folder: str) -> bool:
    """Whether `folder` is told today for the first time (and remember that it was): once per folder and day."""
    today, key = time.strftime("%Y-%m-%d", time.gmtime()), digest([folder])
    with locked(paths.state_dir() / "unmapped-told.lock"):
        kept = [entry for entry in _read(_folders(), _FOLDER_LINE) if entry[0] == today]
        if (today, key) in kept:
            return False
        write_atomic(_folders(), "".join(f"{day} {k}\n" for day, k in [*kept[-(KEEP - 1) :], (today, key)]).encode())
    return True


def _read_sessions() -> list[tuple[str, str]]:
    return [(session, was or UNKNOWN) for session, was in _read(_sessions(), _SESSION_LINE)]


def _read(record: Path, line: re.Pattern[bytes]) -> list[tuple[str, str | None]]:
    """The record's entries, oldest first; [] if it is missing, damaged or not ours."""
    try:
        data = read_own(record, LIMIT)
    except OSError:  # missing, a link, another user's, not a regular file, too large (UnsafeLocalFile)
        return []
    lines = data.split(b"\n")
    found = [line.fullmatch(each) for each in lines[:-1]]
    if lines[-1] != b"" or not all(found):
        return []
    return [(m.group(1).decode(), m.group(2).decode() if m.group(2) is not None else None) for m in found if m]
