"""A module of this package run in a process of its own session, its output nowhere, that nobody waits for: the
outage probe (`probe`) and the bucket's feed follower (`follower`), started by hooks that return at once; and what a
child that may be left blocked must not hold (`close_all_but`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def start(module: str, *args: str, cwd: Path | None = None) -> None:
    """Start `python -m module ARGS` detached; never wait for it. A process that cannot be started (a sandbox) is
    left out: whatever it would have found, a later command finds by asking the store itself."""
    import subprocess  # only here: the hooks that start nothing never load it

    package_root = str(Path(__file__).resolve().parents[2])  # the folder that holds agent_memory
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    try:  # (not contextlib.suppress: `close_all_but` is on the read path, which never loads contextlib)
        subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env=env,
        )
    except OSError:
        pass


def close_all_but(*keep: int) -> None:
    """Close every descriptor from 3 on but `keep`, in a child that may be left blocked (a stat's, a worker's): it must
    hold none of the command's (a pipe the agent reads to its end, a lock, another child's pipe, whose end that child
    would then never see)."""
    top = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, top)
