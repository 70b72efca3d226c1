"""How a store's failure is told to the user: the one table from `StoreError` to an error with its exit code and
next step, and the `sync` object that says how fresh a search's answer is.

Domain code lets a StoreError travel up (saying, on the way, what failed because of it) or keeps working from its
cache; only the command's boundary (the command line, a hook, bootstrap's verification) turns it into words here.
"""

from __future__ import annotations

import errno
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from . import paths
from .agents import codex
from .display import safe, safe_tree
from .errors import AccessError, AgentMemoryError, ContentRefused
from .store import BucketMissing, BucketPublic, Freshness, NoCredentials, StoreError, UnsafeObject

# what fixes a failure of each reason; `{again}` is the command that failed, to run once it is fixed
NEXT = {
    "auth": "restore this machine's access to the bucket (for a Hugging Face bucket: hf auth login, yourself, in "
    "your own terminal), then run: {again}",
    "offline": "check this machine's network (for a folder store: that its drive is mounted), then run: {again}",
    "error": "agent-memory status (it names the bucket and what failed last), then run: {again}",
}
# said of a bucket that cannot be reached from Codex's sandbox, which closes the network (the consent opens it)
NO_NETWORK = "This runs in Codex's sandbox, which gives commands no network unless the user allows it"


def user_error(failure: StoreError, command: Sequence[str] = ()) -> AgentMemoryError:
    """The user's error for a store failure met by `command` (the arguments after `agent-memory`)."""
    again = "agent-memory " + (shlex.join(command) if command else "COMMAND (the same command again)")
    what = failure.what or "The bucket could not be used"
    if isinstance(failure, UnsafeObject):  # nothing to retry: an object that is not to be trusted
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
    next_step = NEXT.get(failure.reason, NEXT["error"]).format(again=again)
    return error(f"{what}: {failure.detail}.", next_step=safe(next_step))


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


def cache_not_written(failure: OSError) -> StoreError | None:
    """Why a refresh answers from the cache as it is, when the cache could not be written (Codex's sandbox without
    the consent, a read-only home); None for any other failure (a store's own folder, a full disk), which is not
    this case."""
    where = Path(os.fsdecode(failure.filename)) if failure.filename is not None else None
    if (
        failure.errno not in (errno.EROFS, errno.EACCES, errno.EPERM)
        or not where
        or not where.is_relative_to(paths.cache_dir())
    ):
        return None
    return StoreError(
        "error",
        f"the local cache cannot be written here ({failure.strerror}: {failure.filename}), so it was not refreshed; "
        "in Codex's sandbox, the user can allow it with: agent-memory codex-sandbox allow",
    )


def sync(freshness: Freshness) -> dict[str, object]:
    """The `sync` object of a search: `{"status": "fresh"|"stale", "reason", "detail", "kind", "skipped"}`; `kind`
    is how a fresh cache was brought up to date: `changes` (the change feed) or `listing` (the whole project)."""
    if freshness.offline:
        found = {"status": "stale", "reason": "offline", "detail": "--offline: the bucket was not consulted"}
    elif freshness.error is not None:
        detail = freshness.error.detail
        if freshness.error.reason == "offline" and codex.network_blocked():
            detail += f" ({NO_NETWORK}: agent-memory codex-sandbox allow)"
        found = {"status": "stale", "reason": freshness.error.reason, "detail": detail}
    else:
        found = {"status": "fresh", "reason": None, "detail": None}
    skipped = [{"path": s.path, "detail": s.detail, "next": s.next_step} for s in freshness.skipped]
    return safe_tree({**found, "kind": freshness.kind if freshness.fresh else None, "skipped": skipped})
