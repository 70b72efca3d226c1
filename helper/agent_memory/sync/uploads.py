"""Synced versions waiting for upload: what the outbox needs to know of them (`SYNC`). A push that fails stays in
the outbox, with its exact bytes, and is retried as notes are (`pending retry`, the Stop hook)."""

from __future__ import annotations

from ..outbox.kinds import Kind, Outcome, progress

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import PendingSync, SyncUpload
    from ..outbox.shape import Plan


class SyncUploads(Kind):
    """Versions of the runtimes' memory files in the outbox, one upload per sync."""

    name = "sync"
    group = "sync"

    def entry(self, plan: Plan) -> PendingSync:
        display = plan.get("display") or {}
        return {
            "id": plan["id"],
            "agent": display.get("agent"),
            "scope": display.get("scope"),
            "files": display.get("files", []),
            **progress(plan),
        }

    def result(self, outcome: Outcome) -> SyncUpload:
        plan = outcome.plan
        display = plan.get("display") or {}
        files = display.get("files", [])
        if outcome.done:
            status, next_step = "saved", None
            message = f"Pushed {len(files)} memory file version(s) to {plan['bucket']}."
        else:
            status, next_step = "pending", outcome.next_step
            message = (
                f"The memory file version(s) of {', '.join(files)} are kept on this machine only, because "
                f"{outcome.because}."
            )
        return {
            "id": outcome.key,
            "agent": display.get("agent"),
            "bucket": plan["bucket"],
            "files": files,
            "status": status,
            "message": message,
            "next": next_step,
        }


SYNC = SyncUploads()
