"""What the outbox knows of a kind of upload: only what its own domain tells it.

The outbox plans, claims, delivers and confirms every upload alike and returns a neutral `Outcome`. A domain
(notes in `memory`, skill publications in `skills`) describes its kind with a `Kind`: how a waiting upload is
listed, the result and message a delivery gives its command, what to do once the bucket has confirmed it, and
how to tell that a retried upload is already in the bucket although the outbox no longer has it.
"""

from __future__ import annotations

from .. import commands
from ..config.context import Context
from ..errors import AgentMemoryError

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Delivered, NoteUpload, Progress, Waiting
    from .shape import Plan

RETRY = commands.line("pending", "retry")  # the one retry command every hint names
WHY = {
    "offline": "the bucket could not be reached",
    "auth": "authentication or access to the bucket failed",
    "error": "the upload failed",
    "busy": "another agent-memory process is uploading it right now",
    "budget": "the time budget ran out before it was tried",
}


def progress(plan: Plan) -> Progress:
    """Where an upload goes and how its attempts went, as `pending` and `status` list every kind."""
    return {
        "bucket": plan["bucket"],
        "queued": plan.get("queued"),
        "attempts": plan.get("attempts", 0),
        "last_error": plan.get("last_error"),
    }


class Outcome:
    """What became of one upload: `done` (the bucket confirmed it) or `pending`, with the reason, its detail, and
    what fixes it (`StoreError.fix`: in words of the store that failed) if something must be fixed first."""

    __slots__ = ("plan", "done", "reason", "detail", "fix")

    def __init__(
        self, plan: Plan, *, done: bool, reason: str = "error", detail: str = "", fix: str | None = None
    ) -> None:
        self.plan = plan
        self.done = done
        self.reason = reason
        self.detail = detail
        self.fix = fix

    @property
    def key(self) -> str:
        """The note id or skill revision."""
        return self.plan["id"]

    @property
    def because(self) -> str:
        """Why it is still pending, in words (a clause: "the bucket could not be reached: DETAIL")."""
        return WHY.get(self.reason, WHY["error"]) + (f": {self.detail}" if self.detail else "")

    @property
    def retry(self) -> str:
        """The command that retries it."""
        return f"{RETRY} {self.key}"

    @property
    def next_step(self) -> str:
        """Its `Next:` line: what fixes the failure first, if anything does, then the retry."""
        return f"{self.fix}, then run: {self.retry}" if self.fix else self.retry


class Kind:
    """One kind of upload, described by its domain; subclasses say what differs."""

    name = ""  # the plan's kind, and the prefix of its folder in the outbox
    group = ""  # the key that lists the waiting ones in `pending` and `status`

    def entry(self, plan: Plan) -> Waiting:
        """How `pending` and `status` list one that waits."""
        raise NotImplementedError

    def result(self, outcome: Outcome) -> Delivered:
        """The command's result for one delivery, its `message` included."""
        raise NotImplementedError

    def delivered(self, plan: Plan, objects: list[tuple[str, bytes]], ctx: Context) -> None:
        """What to do once the bucket has confirmed the upload (nothing, unless the domain says)."""

    def shared_already(self, key: str, ctx: Context) -> NoteUpload | None:
        """The result for a retry of `key` that the outbox no longer holds, if the bucket has it; else None."""
        return None

    def not_waiting(self, key: str) -> AgentMemoryError:
        """The error for a retry of `key`, of this kind alone, that is neither waiting nor in the bucket."""
        return not_waiting(key)


def not_waiting(key: str) -> AgentMemoryError:
    """The error for a retry of `key` that is neither waiting in the outbox nor in the bucket."""
    return AgentMemoryError(
        f"Nothing with the id {key} is waiting in the outbox, and the bucket has no such upload.",
        next_step=f"{commands.line('pending')} (lists what waits for upload)",
    )


def damaged_error(key: str, problem: str) -> AgentMemoryError:
    """The error for an outbox entry that cannot be uploaded as written."""
    return AgentMemoryError(
        f"The pending upload {key} is damaged, so it was not uploaded: {problem}. Its bytes are kept.",
        next_step=f"{commands.line('pending', 'export', key, '--to', 'PATH')} (then save or publish it again), "
        f"or {commands.line('pending', 'discard', key)}",
    )
