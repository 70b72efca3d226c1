"""The `agent-memory` command's entry point.

`hook` is routed here, before the argument parser is even imported: the agent runtimes run it at every session
start and at the end of every turn, so its start-up is kept to the interpreter's own plus a few reads.
"""

from __future__ import annotations

import os
import sys

from .budget import abandoned_work


def main() -> int:
    """Run `agent-memory` with the process's arguments; returns the exit code."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:  # routed before the command line is loaded: a hook must not pay for its parser
        from .hook import main as hook

        return _exit(hook(argv[1:]))
    from .cli import main as cli  # (and a command need not load the hook)

    return _exit(cli(argv))


def _exit(code: int) -> int:
    """`code`, or the end of the process right here if a network call is still blocked in a thread: the SDK's
    exit handlers could wait for it, and neither an agent nor its hook may be kept waiting."""
    sys.stdout.flush()
    if abandoned_work():
        sys.stderr.flush()
        os._exit(code)
    return code
