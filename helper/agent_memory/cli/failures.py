"""How a failure of this machine's own files is told to the user: what the command left undone, which folder, and
the fix (Codex's sandbox, a full disk, a read-only home)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from .. import paths
from ..agents import codex
from ..errors import AgentMemoryError

# what a command left undone when one of this machine's own files could not be written, by its first words
UNDONE = {
    "save": "The note was not saved, not even on this machine",
    "publish-skill": "The skill was not published, and nothing was queued on this machine",
    "install-skill": "The skill was not installed",
    "pending retry": "Nothing was retried (what is pending stays pending)",
    "pending export": "Nothing was exported",
    "pending discard": "Nothing was discarded",
    "search": "The search did not finish",
    "read": "The note could not be read",
    "bootstrap": "Bootstrap did not finish (run it again once this is fixed: it adds only what is missing)",
    "project map": "The directory was not mapped",
    "config set": "The setting was not changed",
    "hooks": "The hooks were not changed",
    "instructions": "The instruction files were not changed",
    "codex-sandbox": "Codex's configuration was not changed",
}


# commands that write the agents' own files (or the configuration), which the consent never opens: the user runs them
YOURS = ("install-skill", "bootstrap", "hooks", "instructions", "codex-sandbox", "project", "config")


def local_error(failure: OSError, command: Sequence[str] = ()) -> AgentMemoryError:
    """The user's error for a file of this machine that `command` could not use (a full disk, a read-only home,
    Codex's sandbox): what that command left undone, which folder, and the fix."""
    undone = _undone(failure, command)
    where = Path(os.fsdecode(failure.filename)) if failure.filename else None
    reason = failure.strerror or str(failure)
    if where is None or not codex.sandboxed_write(failure):
        return AgentMemoryError(
            f"{undone}: cannot use a local file: {reason}" + (f" ({where})." if where else "."),
            next_step="check that folder's permissions and free space (see the README, section Troubleshooting)",
        )
    opened = next((root for root in (paths.state_dir(), paths.cache_dir()) if where.is_relative_to(root)), None)
    folder = opened or next((root for root in paths.roots() if where.is_relative_to(root)), where.parent)
    told = f"{undone}: Codex's sandbox does not let agent-memory write in {folder} ({reason}: {where})."
    if opened is not None and not (command and command[0] in YOURS):
        return AgentMemoryError(told, next_step=codex.SANDBOX_FIX)
    again = "agent-memory " + (shlex.join(command) if command else "COMMAND")
    return AgentMemoryError(
        told, next_step=f"{again} (the user runs it in their own terminal: the sandbox's consent does not cover it)"
    )


def _undone(failure: OSError, command: Sequence[str]) -> str:
    words = [arg for arg in command if not arg.startswith("-")][:2]
    found = UNDONE.get(" ".join(words)) or UNDONE.get(words[0] if words else "") or "The command did not finish"
    outbox = paths.state_dir() / "outbox"
    if words[:1] == ["save"] and failure.filename and not Path(os.fsdecode(failure.filename)).is_relative_to(outbox):
        return "The save did not finish (agent-memory pending says whether the note is kept on this machine)"
    return found
