"""How a store's failure is told to the user: the one table from `StoreError` to an error with its exit code and
next step.

Domain code lets a StoreError travel up (saying, on the way, what failed because of it) or keeps working from its
cache; only the command's boundary (`entry`, bootstrap's verification) turns it into words here.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..agents import codex
from ..commands import PROGRAM
from ..display import safe
from ..errors import AccessError, AgentMemoryError, ContentRefused
from .base import BucketMissing, BucketPublic, NoCredentials, OversizedObject, StoreError, UnsafeObject


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
        return error(f"{what}: {failure.detail}. {codex.NO_NETWORK}.", next_step=codex.SANDBOX_FIX)
    return error(f"{what}: {failure.detail}.", next_step=safe(f"{failure.fix}, then run: {again}"))
