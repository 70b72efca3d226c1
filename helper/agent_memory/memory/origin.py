"""Where a note comes from: this machine's name, as every note saved here records it, and the SessionStart reminder
compares with the newest checkpoint's."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .. import guard, paths
from ..fsutil import read_own, write_atomic
from . import notes

MACHINE_VARIABLE = "AGENT_MEMORY_MACHINE"
SUFFIX_FILE = "machine-suffix"
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


def machine_name(*, keep: bool = False) -> str | None:
    """This machine's short name, recorded in each note it saves so that readers can tell whose notes are whose:
    `$AGENT_MEMORY_MACHINE`, else the first label of the host name, in plain letters, and this home's suffix
    (`home_suffix`).

    A host name that looks like a credential is not recorded at all; a given name is checked like the other
    fields (refused if it looks like one).
    """
    value = os.environ.get(MACHINE_VARIABLE)
    if value:
        return notes.single_line(value, "machine name", notes.NAME_MAX, MACHINE_VARIABLE)
    suffix = home_suffix(keep=keep)
    host = re.sub(r"[^A-Za-z0-9_-]+", "-", _host_name().split(".")[0]).strip("-")[: notes.NAME_MAX - len(suffix) - 1]
    return f"{host}-{suffix}" if host and not guard.scan(host) else None


def home_suffix(*, keep: bool = False) -> str:
    """Four hex digits that tell this home's agent-memory from another's on the same host (two users, or two
    homes of one user, would otherwise both be `vm`), kept in the state folder so that they stay when the home
    moves. The first value is derived from the state folder's path, not drawn at random: two processes that make
    it at once make the same, and a state folder that cannot be written (a sandbox) still gives the same name.
    Kept (`keep`) only by a command that records the name (a save, a sync): one refused changes nothing."""
    file = paths.state_dir() / SUFFIX_FILE
    try:  # a damaged or planted record: the derived value, never a wait
        kept = read_own(file, 64).decode("ascii", errors="replace").strip()
    except OSError:
        kept = ""
    if re.fullmatch(r"[0-9a-f]{4}", kept):
        return kept
    derived = _derived(paths.state_dir())
    if keep and not os.path.lexists(file):
        try:
            write_atomic(file, derived.encode("ascii"))
        except OSError:  # a state folder that cannot be written: the same name all the same
            pass
    return derived


def _derived(state: Path) -> str:
    """The suffix a state folder starts with (hashlib loaded only here: a session start reads the kept one)."""
    from ..contents import sha256

    return sha256(os.fsencode(state))[:4]


def _host_name() -> str:
    """The host name, as the system tells it (`uname`, as `socket.gethostname` does on POSIX; Windows: its
    COMPUTERNAME)."""
    return os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")
