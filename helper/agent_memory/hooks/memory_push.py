"""Sync in the Stop and SessionEnd hooks: push what changed here in the runtime's memory. They run after every turn
and almost always find nothing changed: that costs one stat per file against the folders' records
(`sync.scopes.changed_here`) and loads none of the sync itself, which comes (`sync.running`: the bucket, the merge,
the outbox) only when a file changed."""

from __future__ import annotations

from .. import commands
from ..config.context import Context
from ..display import plural, some
from ..sync.scopes import changed_here, scopes
from . import quiet

MAX_NAMED = 5  # files named in a hook's line or reminder; the rest are counted


def push(ctx: Context, event: dict[str, object], agent: str, budget: float) -> str | None:
    """Push what changed here in `agent`'s memory (a failed upload stays in the outbox); a line for the runtime's
    log when something was done, else None (and no network was used)."""
    synced = scopes(ctx, agent, quiet.directory_of(event))
    seen = quiet.looked(ctx, synced)  # before the check: a file changed after it is not recorded as in step
    chosen = [scope for scope in synced if changed_here(ctx, scope)]
    if not chosen:
        quiet.remember(agent, event, seen)  # the session's next Stop, if all is still so, is answered by `idle`
        return None
    from ..sync.running import sync  # something changed here: the sync itself, loaded only now

    ctx.budget.reset(budget)
    run = sync(ctx, chosen, push=True, wait=0)
    changed = sum(len(done.pushed) + len(done.merged) for done in run.folders)
    # a file whose upload failed is not pushed yet: it is counted as kept, never as pushed
    kept = sum(len(upload["files"]) for upload in run.uploads if upload["status"] == "pending")
    refused = [item["path"] for done in run.folders for item in done.refused]
    parts = [f"{plural(changed - kept, 'file')} pushed"] if changed > kept or not kept else []
    if kept:
        parts.append(f"{plural(kept, 'file')} kept pending on this machine (the next turn's Stop hook retries)")
    if refused:
        parts.append(f"not synced: {', '.join(refused)}")
    held = [path for done in run.folders for path in done.held]
    if held:
        confirm = commands.line("sync", "now", "--allow-deletes")
        parts.append(f"deletions held until confirmed ({some(held, MAX_NAMED)}): {confirm}")
    return f"synced {agent}'s memory: " + ", ".join(parts)
