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
