"""Which sessions a forked session came from, as the runtime's own records say.

`claude --resume ID --fork-session` starts a new session (a new `session_id`) holding a copy of the earlier
conversation, the earlier SessionStart reminders and checkpoints included. Claude Code (2.1.328) runs SessionStart
with `source: fork` before it writes the new transcript, and the event does not name the earlier session: the
candidates are the other sessions whose transcripts lie in the same folder (`siblings`, the most recently written
first: the one forked from has just answered). Once written, the fork's transcript holds the copied messages under
the new session's id, each copied model reply marked with the session whose request made it:
`"requestSessionId":"<earlier id>"`, a key only copies carry (`earlier_sessions`, which a compaction goes by; measured
with the real CLI, see tests/test_runtime_fork.py). Those are this conversation's earlier sessions: the checkpoints
they saved are this session's too.

The transcript is the user's file and hostile data: opened without blocking, a regular file of the user only, its
first TRANSCRIPT_HEAD bytes read (the copy comes first in it), and only id-shaped values taken from it. No JSON is
parsed: a quote inside a message is escaped there, so the key with its quotes is only ever a key.
"""

from __future__ import annotations

import os
import re
import stat

TRANSCRIPT_HEAD = 1 << 20  # bytes of the transcript read at most: the copied conversation starts it
MAX_ANCESTORS = 16  # forks of forks: more than anyone makes, and each is one id
MAX_SIBLINGS = 2000  # transcripts of one folder looked at, at most: one stat each
_EARLIER = rb'"requestSessionId":"([A-Za-z0-9][A-Za-z0-9._:-]{0,127})"'
_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def earlier_sessions(payload: dict[str, object], session: str | None) -> list[str]:
    """The sessions that `session` was forked from (nearest last, as the copy holds them), [] for any other
    session or a transcript that cannot be read."""
    path = payload.get("transcript_path")
    if not session or not isinstance(path, str) or not path or "\x00" in path:
        return []
    head = _head(path)
    found: list[str] = []
    for match in re.finditer(_EARLIER, head):
        earlier = match.group(1).decode()
        if earlier != session and earlier not in found:
            found.append(earlier)
            if len(found) == MAX_ANCESTORS:
                break
    return found


def siblings(payload: dict[str, object], session: str | None) -> list[str]:
    """The other sessions with a transcript in the folder of this session's (`<id>.jsonl`), the most recently
    written first: where a fork's earlier session is, before the fork's own transcript says which it is."""
    path = payload.get("transcript_path")
    if not session or not isinstance(path, str) or not path or "\x00" in path:
        return []
    found: list[tuple[int, str]] = []
    try:
        with os.scandir(os.path.dirname(path)) as entries:
            for count, entry in enumerate(entries):
                if count == MAX_SIBLINGS:
                    break
                name = entry.name
                if name.endswith(".jsonl") and name != f"{session}.jsonl" and re.fullmatch(_ID, name[:-6]):
                    try:
                        found.append((entry.stat(follow_symlinks=False).st_mtime_ns, name[:-6]))
                    except OSError:
                        pass
    except OSError:  # no such folder, not readable
        return []
    return [name for _mtime, name in sorted(found, reverse=True)]


_ID = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"


def _head(path: str) -> bytes:
    try:
        fd = os.open(path, _OPEN)
    except OSError:  # missing (a session that wrote nothing yet), a link, not ours to read
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (os.name != "nt" and info.st_uid != os.getuid()):
            return b""
        chunks, left = [], TRANSCRIPT_HEAD
        while left and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)
