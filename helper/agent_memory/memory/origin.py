"""Where a note comes from: this machine's name, as every note saved here records it, and the SessionStart reminder
compares with the newest checkpoint's."""

from __future__ import annotations

import os
import re

from .. import guard, paths
from ..fsutil import read_own, write_atomic
from . import notes

MACHINE_VARIABLE = "AGENT_MEMORY_MACHINE"
MACHINE_ID_MAX = 256  # bytes of the machine's id read at most (32 hex digits are written)


def machine_id() -> str:
    """A random id for this machine's agent-memory state, created once (never derived from the hardware): unlike
    the name, it tells apart two homes on one host."""
    file = paths.state_dir() / "machine-id"
    try:  # a FIFO or link planted there: refused with its fix, never waited on
        return read_own(file, MACHINE_ID_MAX).decode("utf-8", errors="replace").strip()
    except FileNotFoundError:
        pass
    # made beside it, then linked into place only if no other process made it first: processes started at once
    # (two hooks, parallel syncs) all read the one id that won, which names this machine's scope of the bucket
    made = file.with_name(f".machine-id.{os.urandom(6).hex()}")
    write_atomic(made, os.urandom(16).hex().encode())
    try:
        os.link(made, file)
    except FileExistsError:
        pass
    finally:
        os.unlink(made)
    return read_own(file, MACHINE_ID_MAX).decode("utf-8", errors="replace").strip()


def machine_name() -> str | None:
    """This machine's short name, recorded in each note it saves so that readers can tell whose notes are whose:
    `$AGENT_MEMORY_MACHINE`, else the first label of the host name, in plain letters.

    A host name that looks like a credential is not recorded at all; a given name is checked like the other
    fields (refused if it looks like one).
    """
    value = os.environ.get(MACHINE_VARIABLE)
    if value:
        return notes.single_line(value, "machine name", notes.NAME_MAX, MACHINE_VARIABLE)
    host = re.sub(r"[^A-Za-z0-9_-]+", "-", _host_name().split(".")[0]).strip("-")[: notes.NAME_MAX]
    return host if host and not guard.scan(host) else None


def _host_name() -> str:
    """The host name, as the system tells it (`uname`, as `socket.gethostname` does on POSIX; Windows: its
    COMPUTERNAME)."""
    return os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
