"""How agents and hooks call this helper: by absolute path, since the caller's PATH may not have it."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


def helper_command() -> str:
    """The absolute command that runs this helper, quoted for POSIX sh.

    Codex runs the model's commands in a login shell that drops the caller's PATH (X6), and hooks run with
    whatever PATH the runtime had, so neither may find a bare `agent-memory`.
    """
    script = Path(sys.executable).parent / "agent-memory"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m agent_memory"


def guarded(command: str) -> str:
    """`command`, a line that runs this helper (`helper_command()` first), made to exit 0 in silence once the helper
    is gone (uninstalled, its virtual environment or clone deleted): a hook whose helper is gone must not show a
    failure at every session and turn. In POSIX sh, testing the file the helper command runs."""
    script = Path(sys.executable).parent / "agent-memory"
    if script.is_file() and os.access(script, os.X_OK):
        return f"[ ! -x {shlex.quote(str(script))} ] || {command}"
    package = Path(__file__).resolve().parent.parent / "__main__.py"  # what `python -m agent_memory` runs
    return f"[ ! -f {shlex.quote(str(package))} ] || {command}"
