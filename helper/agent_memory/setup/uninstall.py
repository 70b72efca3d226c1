"""`agent-memory uninstall`: take out of this machine what bootstrap put into the agents' files, in the reverse order
of bootstrap, with the same care: the PATH link, Codex's sandbox consent, the hooks of both runtimes, the managed
blocks (and the instruction files bootstrap created that hold nothing else), the skills the product installed
(shared ones, then the core skill). Every file edit changes only our bytes and keeps a backup of the previous file
(`agent_files_write`); a skill folder with local edits is backed up before it goes.

The store, the cache, the outbox and the configuration stay: they are the user's memory, not the install (a later
bootstrap finds them again). What the configuration records of the install goes with it: the link, the instruction
files bootstrap created, the core skill's version, and the sync of the agents' own memory, which the hooks ran and
which writes into the agents' folders (turned off, so that a later bootstrap does not start it again unasked;
nothing is deleted: the memory files, the versions in the bucket and what this machine knows of them stay).

Uploads still pending would stay undelivered, with no hook left to retry them: uninstall refuses while any is
pending unless told to leave them (`discard_pending`), after offering their export.
"""

from __future__ import annotations

import os

from .. import agents, commands, paths
from ..config import settings as config_file
from ..errors import REFUSED, AgentMemoryError
from ..fsutil import locked
from ..outbox.listing import summary
from ..skills.install_write import uninstall_all
from ..store import follow
from ..sync import settings as sync_settings
from . import (
    agent_files_write,
    hook_config_read,
    hook_config_write,
    instructions,
    on_path,
    sandbox_consent_read,
    sandbox_consent_write,
)

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..contract import Uninstall, UninstallStep


def uninstall(*, discard_pending: bool) -> Uninstall:
    """Remove the install; what each step removed, what stays, and how many uploads were left undelivered. One
    uninstall at a time: each step takes out what is left, so a second one waits, then finds nothing to do."""
    with locked(paths.state_dir() / "uninstall.lock"):
        return _uninstall(discard_pending)


def _uninstall(discard_pending: bool) -> Uninstall:
    counts = summary()
    waiting = sum(counts.values())
    if waiting and not discard_pending:
        it = "it" if waiting == 1 else "them"
        raise AgentMemoryError(
            f"{_uploads(waiting)} not shared yet, and once the hooks are gone nothing retries {it}. "
            f"Nothing was removed. Share {it} first, or keep a copy of each "
            f"({commands.line('pending', 'export', 'ID', '--to', 'PATH')}, the IDs from {commands.line('pending')}) "
            f"and uninstall with --discard-pending, which leaves {it} unsent in the outbox.",
            next_step=commands.line("pending", "retry"),
            exit_code=REFUSED,
        )
    hook_config_write.check("both")  # a hook file we could not edit safely: refused before anything is removed
    if sandbox_consent_read.status()["state"] == "unreadable":
        raise AgentMemoryError(
            f"{agents.codex.config_file()} cannot be read, so the sandbox consent in it cannot be taken out safely. "
            "Nothing was removed.",
            next_step=f"fix {agents.codex.config_file()} by hand, then run: {commands.line('uninstall')}",
        )
    steps: list[UninstallStep] = []
    sync_off = []
    if sync_settings.enabled(config_file.load()):  # first, so that no hook syncs while the rest goes
        with config_file.editing() as config:
            sync_off = sync_settings.enabled(config)
            config.pop("sync", None)
    follow.stop_all()  # no session starts a feed follower now: the running ones end within a keep-alive
    link = None
    if config_file.load().get(on_path.LINKED):  # bootstrap made the link: it goes, and its record with it
        with config_file.editing() as config:
            link = on_path.remove_link(config)
    steps.append(_step("command", [link["path"]] if link and link["state"] == "removed" else [], []))
    consent = sandbox_consent_write.remove()
    steps.append(_step("codex-sandbox", [consent["file"]] if consent["changed"] else [], [consent.get("backup")]))
    found = hook_config_write.remove("both")
    steps.append(_step("hooks", [h["file"] for h in found if h.get("changed")], [h.get("backup") for h in found]))
    files = {name: agents.runtime(name).instructions_file() for name in agents.RUNTIMES}
    blocks = instructions.remove_blocks(files)
    steps.append(_step("instructions", blocks["removed"], blocks["backups"]))
    skills = uninstall_all("both")
    steps.append(_step("skills", skills["removed"], skills["backups"]))
    if "core_skill" in config_file.load():  # the record of the core skill that just went
        with config_file.editing() as config:
            config.pop("core_skill", None)
    warnings = agent_files_write.left_alone()  # linked files whose targets cannot be written: told, not an error
    if link and link["state"] == "other":
        warnings.append(f"{link['path']} is not a link to this agent-memory, so it was left as it is.")
    if own := [
        h["file"] for h in found if {hook_config_read.OWN, hook_config_read.OWN_OUTDATED} & set(h["events"].values())
    ]:
        warnings.append(
            f"Hook entries of your own that run agent-memory stay in {', '.join(own)}: remove them by hand."
        )
    return {
        "steps": steps,
        "kept": {"config": str(paths.config_dir()), "cache": str(paths.cache_dir()), "state": str(paths.state_dir())},
        "pending": waiting,
        "sync_off": sync_off,
        "warnings": warnings,
        "changed": bool(sync_off) or any(step["removed"] for step in steps),
    }


def _uploads(count: int) -> str:
    return f"{count} upload saved on this machine is" if count == 1 else f"{count} uploads saved on this machine are"


def _step(name: str, removed: list[str], backups: Sequence[str | None]) -> UninstallStep:
    """One step's result; `deleted`: the agents' files it emptied, and so took away (none held anything else)."""
    files = name in ("codex-sandbox", "hooks", "instructions")
    return {
        "step": name,
        "removed": removed,
        "deleted": [path for path in removed if files and not os.path.lexists(path)],
        "backups": [backup for backup in backups if backup],
    }
