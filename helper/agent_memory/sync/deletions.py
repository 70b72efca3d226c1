"""Which deletions a sync may carry: a file counts as deleted only when it vanished from a real folder that was
read whole and still holds its folder's other files; and many deletions at once are held until the user confirms
(`sync now --allow-deletes`), as rclone bisync's `--max-delete` holds them.

The same bound holds on the side that receives deletions: a machine whose helper is older or damaged, or a folder
lost there, must not empty this machine's folder either. The user confirms here with the same command.
"""

from __future__ import annotations

from . import folders
from .folders import Local
from .history import History
from .index import ELSEWHERE, GONE, HERE, LINK, NOT_FOLDER, FolderIndex
from .versions import Refused

MAX_DELETES = 3  # deletions of one folder in one sync carried without asking; more are held


def too_many(count: int, total: int) -> bool:
    """Whether `count` deletions among a folder's `total` files are to be held: more than MAX_DELETES, or more
    than half of the files."""
    return count > MAX_DELETES or 2 * count > total


def refill(index: FolderIndex) -> None:
    """A folder recorded as not synced (gone, a link, a file) that is a real folder again (the runtime made it
    again, or the user did): what its files were is forgotten, so that each file there is matched with the
    versions again, the bucket's files come back into it, and nothing counts as deleted."""
    for where in list(index.blocked):
        probe = f"{where}/x" if where else "x"
        if folders.missing_folder(index.folder, probe) is None:
            for path in [path for path in index.files if folders.under(path, [where]) is not None]:
                del index.files[path]
            del index.blocked[where]


def held(
    history: History,
    index: FolderIndex,
    local: dict[str, Local],
    skipped: dict[str, Refused],
    blocked: dict[str, str],
) -> dict[str, str]:
    """The deletions of this pass to hold (`{path: HERE or ELSEWHERE}`), by the bound of `too_many`; a folder with
    a part that could not be read records no deletion at all (its vanished files are held too)."""
    runtime = history.runtime
    recorded = {
        path: entry
        for path, entry in index.files.items()
        if entry.get("hash") is not None and not folders.ignored(runtime, path) and folders.under(path, blocked) is None
    }
    gone_here = [path for path in recorded if path not in local and path not in skipped]
    gone_there = []
    for path, entry in recorded.items():
        here = local.get(path)
        if here is None or here.hash != entry.get("hash"):
            continue  # changed here: a merge or a conflict, never a silent deletion
        heads = history.heads(path)
        if len(heads) != 1 or heads[0] == entry.get("version") or history.versions[heads[0]].get("hash") is not None:
            continue  # not a tombstone this file's version leads to
        if entry.get("version") in history.ancestors(heads[0]):
            gone_there.append(path)
    found: dict[str, str] = {}
    unread = any(why not in (GONE, LINK, NOT_FOLDER) for why in blocked.values())
    if gone_here and (unread or too_many(len(gone_here), len(recorded))):  # a pull tells them held too
        found.update(dict.fromkeys(gone_here, HERE))
    if gone_there and too_many(len(gone_there), len(recorded)):
        found.update(dict.fromkeys(gone_there, ELSEWHERE))
    return found
