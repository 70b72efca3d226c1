"""Notes pending upload: what the outbox needs to know of them (`NOTES`: how a pending one is listed and told, that
a delivered one goes into the cache, how to tell one already in the bucket), and the notes that wait, for search and
read."""

from __future__ import annotations

from .. import commands
from ..config.context import Context
from ..errors import AgentMemoryError
from ..outbox.kinds import Kind, Outcome, progress
from ..outbox.listing import waiting
from ..store.base import StoreError
from . import notes
from .cache import ProjectCache
from .pack import HEADER_FIELDS

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import NoteUpload, PendingNote
    from ..outbox.shape import Plan
    from .shape import PendingCandidate, WaitingNote


class NoteUploads(Kind):
    """Notes in the outbox: listed with their destination, told as shared or kept here, cached once delivered."""

    name = "note"
    group = "notes"

    def entry(self, plan: Plan) -> PendingNote:
        return {
            "id": plan["id"],
            "path": plan["objects"][-1]["path"],
            "project": (plan.get("display") or {}).get("project"),
            **progress(plan),
        }

    def result(self, outcome: Outcome) -> NoteUpload:
        plan, key = outcome.plan, outcome.key
        if outcome.done:
            status, message, next_step = "saved", f"Saved {key} to {plan['bucket']}: it is shared.", None
        else:
            status, next_step = "pending", outcome.next_step
            message = (
                f"Not shared yet: {key} is kept on this machine only, because {outcome.because}; do not save it again."
            )
        return {
            "id": key,
            "project": (plan.get("display") or {}).get("project"),
            "bucket": plan["bucket"],
            "path": plan["objects"][-1]["path"],
            "status": status,
            "message": message,
            "next": next_step,
        }

    def delivered(self, plan: Plan, objects: list[tuple[str, bytes]], ctx: Context) -> None:
        """Put the note in the project's cache: it has left the outbox, and offline search must still find it before
        the next online refresh. The cache is a convenience, so a failure here fails nothing."""
        project = (plan.get("display") or {}).get("project")
        if project:
            try:
                ProjectCache(plan["bucket"], project).add({plan["id"]: objects[-1][1]})
            except OSError:
                pass

    def shared_already(self, key: str, ctx: Context) -> NoteUpload | None:
        """A note that is not pending but already in this project's bucket (saved here earlier, or elsewhere)."""
        path = notes.object_path(ctx.project, key)
        try:
            if not ProjectCache(ctx.bucket, ctx.project).note_file(key).is_file() and ctx.store.read(path) is None:
                return None
        except StoreError:
            return None
        message = f"{key} is already in {ctx.bucket}: it is shared, there is nothing to retry."
        return {
            "id": key,
            "project": ctx.project,
            "bucket": ctx.bucket,
            "path": path,
            "status": "saved",
            "message": message,
            "next": None,
        }

    def not_waiting(self, key: str) -> AgentMemoryError:
        return AgentMemoryError(
            f"No pending note {key} on this machine, and the current project's bucket has no such note.",
            next_step=f"{commands.line('pending')} (lists what waits for upload)",
        )


NOTES = NoteUploads()


def pending(ctx: Context) -> list[WaitingNote]:
    """The notes of this command's project and bucket waiting for upload, with their displayed fields and text."""
    found: list[WaitingNote] = []
    for plan, objects in waiting(NOTES):
        display = plan.get("display") or {}
        if plan["bucket"] == ctx.bucket and display.get("project") == ctx.project:
            path, data = objects[-1]
            found.append({**display, "id": plan["id"], "path": path, "content": data.decode("utf-8")})
    return found


def pending_copy(note_id: str) -> tuple[Plan, bytes] | None:
    """The plan and exact bytes of one pending note, None if it is not pending (Damaged if it is, but damaged)."""
    found = waiting(NOTES, note_id)
    return (found[0][0], found[0][1][-1][1]) if found else None


def pending_candidate(entry: WaitingNote) -> PendingCandidate:
    """A pending note as search takes it (the view lists it so): its fields as the pack would hold them, and its
    lowercased title line and body."""
    content = str(entry["content"])
    fields = {key: " ".join(str(entry.get(key) or "").split()) for key in HEADER_FIELDS}
    fields["id"] = str(entry["id"])
    fields["corrects"] = _corrects_line(content)
    text = (fields["title"] + "\n" + notes.body_text(content)).lower().encode()
    return {"fields": fields, "entry": entry, "text": text, "body": text.find(b"\n") + 1}


def _corrects_line(content: str) -> str:
    """The `corrects` field of a note this machine rendered (`notes.render`, one `corrects: ID` line in its
    frontmatter), read without parsing the YAML: the id, or ""."""
    front = content[: len(content) - len(notes.body_text(content))]
    for line in front.splitlines():
        if line.startswith("corrects: "):
            return line.removeprefix("corrects: ").strip().strip("'\"")
    return ""
