"""The first code of every `agent-memory` process: the console script's `main`, and `python -m agent_memory`.

It answers, with os-level calls only, the command lines that must cost almost nothing: the Stop hook after a turn
that left nothing to do (`idle`: every turn of every session), and a bare `--version` (what people and scripts run to
check an install). Every other command line goes to `entry`, loaded in `_entry` (the one place), which parses it
and runs it (`--version` among other arguments too).
"""

from __future__ import annotations

import gc
import sys
from types import ModuleType

from . import __version__, idle
from .roots import APP


def main() -> int:
    """The `agent-memory` process; returns the exit code."""
    argv = sys.argv[1:]
    if argv == ["--version"]:
        print(f"{APP} {__version__}")
        return 0
    if idle.stop_has_nothing_to_do(argv):
        return 0
    # The modules a command loads make tens of thousands of objects that live as long as the process: the collector
    # would scan them again and again while they load (a tenth of the start-up). `entry` turns it on again once the
    # command's module is loaded, with what exists by then set aside for good (`entry.loaded`).
    gc.disable()
    code: int = _entry().main()  # (the module is loaded here: typed as it is)
    return code


def _entry() -> ModuleType:
    """`entry`, loaded when the command line is not one answered here: the command table, argparse, the Context and
    the renderer, which the Stop hook after a quiet turn (every turn of every session) must not pay for."""
    from . import entry

    return entry
