"""What a command that failed prints: the one error renderer (redacted and display-safe, for the commands and the
hooks alike), and the translation of what stopped it: a store's failure (`store.failures`), a file of this
machine's own (what the command left undone, which folder, and the fix: Codex's sandbox, a full disk, a read-only
home), or anything unexpected.

Loaded by `entry` when a command fails: a command that succeeds never needs the secret guard that redacts."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import paths
from ..agents import codex
from ..commands import PROGRAM
from ..display import safe
from ..errors import AgentMemoryError, UsageError
from ..errors import render as lines
from ..guard import redact
from ..store.base import StoreError
from ..store.failures import user_error
from .render import HOOK_PREFIX, emit

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Failure


def report(error: AgentMemoryError, as_json: bool) -> int:
    """Print `error` (on stderr, and as the JSON object with `--json`); its exit code."""
    message, next_step = _shown(error.message), _shown(error.next_step)
    if as_json:
        failure: Failure = {"error": message, "next": next_step, "exit_code": error.exit_code}
        emit(failure, "", True)
    print(lines(message, next_step), file=sys.stderr)
    return error.exit_code


def user_facing(failure: Exception, command: Sequence[str]) -> AgentMemoryError:
    """The user's error for what stopped `command` (the arguments after `agent-memory`); what is not ours to
    explain is re-raised with AGENT_MEMORY_DEBUG=1 (a traceback)."""
    if isinstance(failure, AgentMemoryError):
        return failure
    if isinstance(failure, StoreError):  # the one translation of a store's failure
        return user_error(failure, command)
    if isinstance(failure, OSError):  # the local disk: a full disk, a read-only home, an agent's sandbox
        return local_error(failure, command)
    if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
        raise failure
    return AgentMemoryError(
        f"Unexpected {type(failure).__name__}: {failure}", next_step="rerun with AGENT_MEMORY_DEBUG=1 and report it"
    )


def hook_failure(failure: Exception, event: str, parser: argparse.ArgumentParser | None) -> None:
    """A hook's one line about what went wrong (with its usage, for arguments it could not read); with
    AGENT_MEMORY_DEBUG=1, the traceback first. The session goes on whatever happened."""
    if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
        sys.excepthook(type(failure), failure, failure.__traceback__)
    if isinstance(failure, UsageError) and parser is not None:
        text = f"{failure.message.rstrip('.')} ({parser.format_usage().strip()})"
    else:
        text = f"{event} failed: {type(failure).__name__}: {failure}"
    print(HOOK_PREFIX + _shown(text)[:300], file=sys.stderr)  # cut once redacted: a cut secret is not recognised


def _shown(text: str) -> str:
    """Outside text as it may be printed: no credential, no control character (paths and store errors hold anything)."""
    return safe(redact(text))


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
    "uninstall": "Uninstall did not finish (run it again once this is fixed: it takes out only what is left)",
}


# commands that write the agents' own files (or the configuration), which the consent never opens: the user runs them
YOURS = ("install-skill", "bootstrap", "hooks", "instructions", "codex-sandbox", "project", "config", "uninstall")


def local_error(failure: OSError, command: Sequence[str] = ()) -> AgentMemoryError:
    """The user's error for a file of this machine that `command` could not use (a full disk, a read-only home,
    Codex's sandbox): what that command left undone, which folder, and the fix."""
    undone = _undone(failure, command)
    where = _where(failure)
    reason = failure.strerror or str(failure)
    if where is None or not codex.sandboxed_write(failure):
        return AgentMemoryError(
            f"{undone}: cannot use a local file: {reason}" + (f" ({where})." if where else "."),
            next_step="check that folder's permissions and free space "
            "(see docs/troubleshooting.md#a-state-folder-cannot-be-written)",
        )
    opened = next((root for root in (paths.state_dir(), paths.cache_dir()) if where.is_relative_to(root)), None)
    folder = opened or next((root for root in paths.roots() if where.is_relative_to(root)), where.parent)
    told = f"{undone}: Codex's sandbox does not let agent-memory write in {folder} ({reason}: {where})."
    if opened is not None and not (command and command[0] in YOURS):
        return AgentMemoryError(told, next_step=codex.SANDBOX_FIX)
    again = shlex.join([PROGRAM, *command]) if command else f"{PROGRAM} COMMAND"
    return AgentMemoryError(
        told, next_step=f"{again} (the user runs it in their own terminal: the sandbox's consent does not cover it)"
    )


def _where(failure: OSError) -> Path | None:
    """The file an OSError names, None if it names none: a call on an open folder (`dir_fd`) names it by its
    descriptor, a number, which is no path."""
    name = failure.filename
    return Path(os.fsdecode(name)) if isinstance(name, (str, bytes, os.PathLike)) and name else None


def _undone(failure: OSError, command: Sequence[str]) -> str:
    words = [arg for arg in command if not arg.startswith("-")][:2]
    found = UNDONE.get(" ".join(words)) or UNDONE.get(words[0] if words else "") or "The command did not finish"
    outbox = paths.state_dir() / "outbox"
    where = _where(failure)
    if words[:1] == ["save"] and where is not None and not where.is_relative_to(outbox):
        return "The save did not finish (agent-memory pending says whether the note is kept on this machine)"
    return found
