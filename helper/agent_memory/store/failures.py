"""How a store's failure is told to the user: the one table from `StoreError` to an error with its exit code and
next step.

Domain code lets a StoreError travel up (saying, on the way, what failed because of it) or keeps working from its
cache; only the command's boundary (`entry`, bootstrap's verification) turns it into words here.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .. import commands
from ..agents import codex
from ..commands import PROGRAM
from ..display import safe
from ..errors import AccessError, AgentMemoryError, ContentRefused
from .base import (
    BucketMissing,
    BucketPublic,
    FolderDenied,
    FolderMissing,
    NoCredentials,
    OversizedObject,
    StoreError,
    UnsafeObject,
)

# what fixes a failure of each reason met by the Hub (a folder store's own failures say what fixes them: `fix`)
NEXT = {
    "auth": "restore this machine's access to the Hugging Face bucket (hf auth login, yourself, in your own terminal)",
    "offline": "check this machine's network",
    "error": commands.line("status") + " (it names the bucket and what failed last)",
}
# said of a bucket that cannot be reached from Codex's sandbox, which closes the network (the consent opens it)
NO_NETWORK = "This runs in Codex's sandbox, which gives commands no network unless the user allows it"


def fix(failure: StoreError) -> str:
    """What fixes `failure`, in words that speak of its own store alone: a folder store's folder, or the Hub."""
    if isinstance(failure, FolderMissing):  # another store would not do: what waits is planned for this one
        return f"mount the drive that holds {failure.root} (or move the folder back there)"
    if isinstance(failure, FolderDenied):
        where = shlex.quote(failure.path)
        return f"make {where} yours to read and write again (ls -ld {where} shows its owner and mode)"
    return NEXT.get(failure.reason, NEXT["error"])


def then(first: str | None, again: str) -> str:
    """A `Next:` line: what fixes the failure, if anything needs fixing, then the command to run again."""
    return f"{first}, then run: {again}" if first else again


def user_error(failure: StoreError, command: Sequence[str] = ()) -> AgentMemoryError:
    """The user's error for a store failure met by `command` (the arguments after `agent-memory`)."""
    again = shlex.join([PROGRAM, *command]) if command else f"{PROGRAM} COMMAND (the same command again)"
    what = failure.what or "The bucket could not be used"
    if isinstance(failure, (UnsafeObject, OversizedObject)):  # nothing to retry: an object not to be trusted or read
        return ContentRefused(f"{what}: {failure.detail}.", next_step=failure.next_step)
    if isinstance(failure, NoCredentials):
        return AccessError(
            "No valid Hugging Face credentials on this machine. Set them up yourself, outside the chat: run `hf "
            "auth login`, or export HF_TOKEN in your shell. Never paste a token into a chat or a command line.",
            next_step=safe(f"hf auth login, then run: {again}"),
        )
    if isinstance(failure, BucketPublic):
        return AccessError(
            f"The bucket {failure.uri} is public. agent-memory only uses private buckets, and never changes "
            "visibility.",
            next_step="make it private yourself on huggingface.co, or choose another bucket with --bucket",
        )
    if isinstance(failure, BucketMissing):
        return AccessError(
            f"The bucket {failure.uri} does not exist or this account cannot access it; no other bucket was created.",
            next_step="check the name, or run bootstrap without --bucket to create your own private bucket",
        )
    error = AccessError if failure.reason == "auth" else AgentMemoryError
    if failure.reason == "offline" and codex.network_blocked():
        return error(f"{what}: {failure.detail}. {NO_NETWORK}.", next_step=codex.SANDBOX_FIX)
    return error(f"{what}: {failure.detail}.", next_step=safe(then(fix(failure), again)))
