"""Skill publications pending upload: what the outbox needs to know of them (`SKILLS`), how a frozen revision is
listed and told."""

from __future__ import annotations

from .. import commands
from ..errors import AgentMemoryError
from ..outbox.kinds import Kind, Outcome, progress

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import PendingPublication, Publication
    from ..outbox.shape import Plan


class SkillUploads(Kind):
    """Skill publications in the outbox: frozen revisions, told as published or waiting to be."""

    name = "skill"
    group = "skills"

    def entry(self, plan: Plan) -> PendingPublication:
        display = plan.get("display") or {}
        return {
            "name": display.get("name"),
            "revision": plan["id"],
            "files": display.get("files", []),
            **progress(plan),
        }

    def result(self, outcome: Outcome) -> Publication:
        display = outcome.plan.get("display") or {}
        found: Publication = {
            "name": display.get("name"),
            "revision": outcome.key,
            "status": "published" if outcome.done else "pending",
            "files": display.get("files", []),
        }
        if outcome.done:
            return found
        message = (
            f"Not published yet: revision {outcome.key} is frozen on this machine and invisible to others, because "
            f"{outcome.because}."
        )
        return {**found, "message": message, "next": outcome.next_step}

    def not_waiting(self, key: str) -> AgentMemoryError:
        return AgentMemoryError(
            f"No pending publication {key} on this machine (it may have been published long ago).",
            next_step=f"{commands.line('search', '--skills')} (lists published revisions)",
        )


SKILLS = SkillUploads()
