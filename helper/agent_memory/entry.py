"""The `agent-memory` command's entry point.

`hook` is routed here, before the argument parser is even imported: the agent runtimes run it at every session
start and at the end of every turn, so its start-up is kept to the interpreter's own plus a few reads.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run `agent-memory` with the process's arguments; returns the exit code."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from .hook import main as hook

        return hook(argv[1:])
    from .cli import main as cli

    return cli(argv)
