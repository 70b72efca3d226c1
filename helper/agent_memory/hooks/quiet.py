"""The quiet record: what a hook of this session looked at when it found the runtime's synced memory in step with the
folders' records, so that the next Stop or SessionEnd hook of the session, finding all of it unchanged, is answered
by `idle` with os-level calls (one `lstat` per file and folder), before the command table, the Context or the sync
are loaded.

The record names the session, its folder (the event's `cwd`) and the agent; the files looked at (the configuration,
which maps folders to projects and turns sync on, and each folder's record); and each synced memory folder, whose
every file and subfolder is covered by its kind, inode, size and times. It is written only when nothing changed,
from a look taken before the check that said so: a file changed after the look differs from the record, and the
next hook looks again. A file changed too recently for its times to tell (within `RACY_SECONDS`, as git treats a
file changed in the second its index was written) leaves no record. Any change goes to the whole hook, which
looks again (and pushes what changed).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from .. import idle, roots
from ..config.context import Context
from ..errors import AgentMemoryError
from ..fsutil import write_atomic
from ..sync.history import History
from ..sync.index import FolderIndex
from ..sync.scopes import Scope, changed_here, scopes

# seconds within which a file's times may not tell two changes apart (filesystems that keep whole or even seconds)
RACY_SECONDS = 2.0
MAX_SESSION = 200  # characters of a session id (the runtimes send UUIDs)

Seen = tuple[list[str], list[str], "list[list[object]] | None"]  # the files, the folders, and how they were


def directory_of(event: dict[str, object]) -> str:
    """The session's folder: the event's `cwd`, else this process's (as `idle` reads it)."""
    return cwd if isinstance(cwd := event.get("cwd"), str) else os.getcwd()


def looked(ctx: Context, chosen: list[Scope]) -> Seen:
    """What a hook looks at for `chosen` (the files, the folders), and how each is now: taken before `changed_here`
    says that nothing changed."""
    files = [os.path.join(roots.config_root(), "config.json")]
    folders: list[str] = []
    for scope in chosen:
        history_folder = History.folder_of(ctx.bucket, scope.runtime, scope.scope)
        files += [str(FolderIndex.file_of(history_folder, place)) for place in scope.places]
        folders += [str(place) for place in scope.places]
    return files, folders, idle.quiet_entries(files, folders)


def remember(agent: str, event: dict[str, object], seen: Seen) -> None:
    """Record `seen` (`looked`, taken before a check found nothing changed) for the later hooks of the event's
    session; none when the event names no session or a file changed too recently for its times to tell."""
    session = event.get("session_id")
    files, folders, entries = seen
    if not isinstance(session, str) or not 0 < len(session) <= MAX_SESSION or entries is None:
        return
    since = (time.time() - RACY_SECONDS) * 1e9
    ours = set(files[1:])  # the folders' records: always replaced whole (a new inode), never changed in place
    if any(_changed_since(entry, since) for entry in entries if entry[0] not in ours):
        return
    record = {"agent": agent, "session": session, "cwd": directory_of(event), "files": files, "folders": folders}
    data = json.dumps({**record, "entries": entries}).encode("ascii")
    with contextlib.suppress(OSError):  # a state folder it cannot write (a sandbox): the hooks look again
        # not durable: a record lost in a crash, or torn, only sends the next hook the whole way
        write_atomic(Path(idle.quiet_file(agent)), data, durable=False)


def after_pull(ctx: Context, agent: str, event: dict[str, object]) -> None:
    """The SessionStart hook's record, once its pull is done: the session's first Stop then finds it. Nothing when
    the folders cannot be told (the pull's own lines say why): the Stop hook looks for itself."""
    try:
        chosen = scopes(ctx, agent, directory_of(event))
        seen = looked(ctx, chosen)
        if not any(changed_here(ctx, scope) for scope in chosen):
            remember(agent, event, seen)
    except (AgentMemoryError, OSError):
        return


def _changed_since(entry: list[object], since: float) -> bool:
    """Whether an entry of `looked` changed at `since` (nanoseconds) or later."""
    times = entry[-2:] if len(entry) > 1 else []
    return any(isinstance(value, int) and value >= since for value in times)
