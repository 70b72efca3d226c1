"""Whether the Stop hook has nothing to do after a turn, answered with os-level calls only.

The Stop hook runs after every turn of every session (and Claude Code's SessionEnd hook, the same command, once at
its end) and almost always finds nothing to do: no upload waits in the outbox, and either no runtime's memory is
synced on this machine, or nothing changed in it since a hook of this session found it in step (`quiet`). `start`
asks here before it loads the command table, argparse, the Context or the renderer. Any doubt answers False, and the
whole hook (`cli/hook_stop`) runs and says what it finds: another command line, a state file that is not what the
helper writes (a link, a FIFO, a file too large), an event that is not a JSON object.

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
STOP = {("hook", event, "--agent", agent) for event in ("stop", "session-end") for agent in ("codex", "claude")}
MAX_QUIET = 4 << 20  # bytes of a quiet record read at most (`quiet_entries` bounds what one holds)
MAX_QUIET_ENTRIES = 20_000  # files and folders a quiet record covers at most: past that, the whole hook looks
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in place of the file must not block this open


def stop_has_nothing_to_do(argv: list[str]) -> bool:
    """True when `argv` is the Stop (or SessionEnd) hook's and it has nothing to do: no operation in the outbox, and
    either no sync configured and an event that looks like a JSON object, or this session's quiet record with
    nothing in it changed (the event read from stdin, as the whole hook would). False hands the event on to the
    whole hook."""
    if tuple(argv) not in STOP or _outbox_holds_anything():
        return False
    if not _sync_configured():
        return _event_looks_like_json()
    raw = _event()
    if _in_step(argv[3], raw):
        return True
    _hand_on(raw)
    return False


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
        return b'"sync"' in _read_own(os.path.join(roots.config_root(), "config.json"), MAX_CONFIG)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _event_looks_like_json() -> bool:
    """Read the hook's event from stdin (nothing from a terminal); whether it is empty or looks like a JSON object
    (the runtimes send one; parsing it would load `json` for nothing). When it does not, the bytes are handed on,
    through `sys.stdin`, to the whole hook, which says that the event is not JSON."""
    raw = _event()
    event = raw.strip()
    if not event or (event.startswith(b"{") and event.endswith(b"}")):
        return True
    _hand_on(raw)
    return False


def _event() -> bytes:
    """The hook's event as it came on stdin (nothing from a terminal)."""
    if sys.stdin is None or sys.stdin.isatty():
        return b""
    return sys.stdin.buffer.read(MAX_EVENT)


def _hand_on(raw: bytes) -> None:
    """The event's bytes, put back as `sys.stdin` for the whole hook to read."""
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", errors="replace")


def quiet_file(agent: str) -> str:
    """Where the last hook of `agent` that found its synced memory in step recorded what it looked at (`hooks.quiet`
    writes it)."""
    return os.path.join(roots.state_root(), f"quiet-{agent}.json")


def quiet_entries(files: list[str], folders: list[str]) -> list[list[object]] | None:
    """What each of `files` and everything below each of `folders` is now (kind, inode, size, times; links not
    followed), in a stable order: a change to any of them, a file made, removed or renamed in any of those folders,
    changes this. None past MAX_QUIET_ENTRIES. One `lstat` per entry: this is what a quiet turn costs."""
    found: list[list[object]] = []
    for path in files:
        found.append([path, *_stat(path)])
    pending = list(reversed(folders))
    while pending:
        folder = pending.pop()
        found.append([folder, *_stat(folder)])
        try:
            with os.scandir(folder) as listed:
                entries = sorted((entry.name, entry.path, entry.is_dir(follow_symlinks=False)) for entry in listed)
        except OSError:  # not a folder, gone, unreadable: its own entry above says what it is
            entries = []
        found += [[path, *_stat(path)] for _name, path, is_folder in entries if not is_folder]
        pending += [path for _name, path, is_folder in reversed(entries) if is_folder]  # then each, in name order
        if len(found) > MAX_QUIET_ENTRIES:
            return None
    return found


def _stat(path: str) -> list[int]:
    """A path's kind, inode, device, size and change times ([] if it is not there); a link is not followed."""
    try:
        info = os.lstat(path)
    except OSError:
        return []
    return [info.st_mode, info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _in_step(agent: str, raw: bytes) -> bool:
    """Whether this session's synced memory is as a hook of this session last found it in step with its records:
    the quiet record names this session, its folder and every file and folder it looked at, each unchanged since.
    Within a session the runtime's memory folders stay where they were when it started (the record is this
    session's only), and the configuration that maps a folder to a project is among the files looked at."""
    import json  # only where sync is on: a quiet turn without it never parses the event

    try:
        event = json.loads(raw)
        record = json.loads(_read_own(quiet_file(agent), MAX_QUIET))
    except (OSError, ValueError):
        return False
    if not isinstance(event, dict) or not isinstance(record, dict):
        return False
    session, directory = event.get("session_id"), event.get("cwd")
    if not isinstance(directory, str):
        directory = os.getcwd()
    if not isinstance(session, str) or not session or record.get("session") != session:
        return False
    files, folders = record.get("files"), record.get("folders")
    if record.get("cwd") != directory or not _strings(files) or not _strings(folders):
        return False
    return quiet_entries(files, folders) == record.get("entries")  # type: ignore[arg-type]  # _strings held them


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _read_own(path: str, limit: int) -> bytes:
    """A small regular file of this user's (OSError for anything else: a link, a FIFO, a file too large)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit or _foreign(info):
            raise OSError(f"{path} is not a small file of this user's")
        return os.read(fd, limit + 1)
    finally:
        os.close(fd)


def _foreign(info: os.stat_result) -> bool:
    return hasattr(os, "getuid") and info.st_uid != os.getuid()
