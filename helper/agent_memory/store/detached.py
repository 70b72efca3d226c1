"""A module of this package run in a process of its own session, its output nowhere, that nobody waits for: the
outage probe (`probe`) and the bucket's feed follower (`follower`), started by hooks that return at once."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


def start(module: str, *args: str, cwd: Path | None = None) -> None:
    """Start `python -m module ARGS` detached; never wait for it. A process that cannot be started (a sandbox) is
    left out: whatever it would have found, a later command finds by asking the store itself."""
    import subprocess  # only here: the hooks that start nothing never load it

    package_root = str(Path(__file__).resolve().parents[2])  # the folder that holds agent_memory
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    with contextlib.suppress(OSError):
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
