"""Whether the Stop hook has nothing to do after a turn, answered with os-level calls only.

The Stop hook runs after every turn of every session and almost always finds nothing to do: no upload waits in the
outbox, and no runtime's memory is synced on this machine. `start` asks here before it loads the command table,
argparse, the Context or the renderer. Any doubt answers False, and the whole hook (`cli/hook_stop`) runs and says
what it finds: another command line, a state file that is not what the helper writes (a link, a FIFO, a file too
large), an event that is not a JSON object.

A feature that gives the Stop hook work adds its own cheap check to `stop_has_nothing_to_do`. (The roots are made
owner-only by every other command, the SessionStart hook first of all; a quiet turn leaves them as they are.)
"""

from __future__ import annotations

import io
import os
import stat
import sys

from . import roots

MAX_EVENT = 1 << 20  # bytes of a hook's event read at most (`cli/render` reads it with this bound too)
MAX_CONFIG = 4 << 20  # `config.settings.MAX_BYTES`: a larger configuration is the whole command's to report
STOP = {("hook", "stop", "--agent", agent) for agent in ("codex", "claude")}  # as the hook files name it
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in place of the file must not block this open


def stop_has_nothing_to_do(argv: list[str]) -> bool:
    """True when `argv` is the Stop hook's and it has nothing to do: no operation in the outbox, no sync configured,
    and an event that looks like a JSON object (read from stdin, as the whole hook would). False hands the event on
    to the whole hook."""
    if tuple(argv) not in STOP:
        return False
    return not _outbox_holds_anything() and not _sync_configured() and _event_looks_like_json()


def _outbox_holds_anything() -> bool:
    """Whether the outbox has an operation (a folder not named `done` nor hidden, as `outbox.plans` lists them); an
    outbox that is a link counts as yes, for the whole hook to report."""
    outbox = os.path.join(roots.state_root(), "outbox")
    try:
        if stat.S_ISLNK(os.lstat(outbox).st_mode):
            return True
        with os.scandir(outbox) as entries:
            return any(not entry.name.startswith(".") and entry.name != "done" for entry in entries)
    except FileNotFoundError:
        return False
    except OSError:  # not a folder, not readable: the whole hook says what it is
        return True


def _sync_configured() -> bool:
    """Whether the configuration may turn sync on (it names `sync` at all); a configuration that is not a small
    regular file of this user's counts as yes, for the whole hook to report."""
    try:
        fd = os.open(os.path.join(roots.config_root(), "config.json"), os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG or _foreign(info):
            return True
        return b'"sync"' in os.read(fd, MAX_CONFIG + 1)
    finally:
        os.close(fd)


def _event_looks_like_json() -> bool:
    """Read the hook's event from stdin (nothing from a terminal); whether it is empty or looks like a JSON object
    (the runtimes send one; parsing it would load `json` for nothing). When it does not, the bytes are handed on,
    through `sys.stdin`, to the whole hook, which says that the event is not JSON."""
    if sys.stdin is None or sys.stdin.isatty():
        return True
    raw = sys.stdin.buffer.read(MAX_EVENT)
    event = raw.strip()
    if not event or (event.startswith(b"{") and event.endswith(b"}")):
        return True
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace")
    return False


def _foreign(info: os.stat_result) -> bool:
    return hasattr(os, "getuid") and info.st_uid != os.getuid()
