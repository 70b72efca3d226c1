"""Moving a machine off the old layout of Codex's sync, without losing a line.

Before, every machine pushed `$CODEX_HOME/memories/` into one shared scope (`sync/codex/user/`), and each sync merged
the other machines' lines straight into Codex's generated files here. Now those files are only read and pushed to
this machine's own scope; nothing in them is changed or deleted. The lines that other machines brought in, and that
live only in these generated files (Codex's next consolidation may drop them), are delivered once more, as resources
of the extension (`codex_delivery`), so that Codex keeps them as outside memory. A line is counted as another
machine's when a version made there introduced it (it was in none of that version's bases) and it is still in the
file here, or in the file's newest version in the old scope.
"""

from __future__ import annotations

import contextlib

from . import folders
from .codex_delivery import MIGRATED, OLD_SCOPE, Delivery
from .history import History
from .index import FolderIndex
from .versions import Refused

OLD = OLD_SCOPE


def pending(bucket: str) -> bool:
    """Whether this machine synced Codex's memories in the old layout: its record of the folder has files."""
    index = FolderIndex(History.folder_of(bucket, "codex", OLD), folders.codex_folder())
    return bool(index.files)


def lines_from_elsewhere(bucket: str, machine: str) -> tuple[list[Delivery], dict[str, str]]:
    """The lines other machines brought into this machine's Codex memory files in the old layout, one delivery per
    machine and file (see the module's docstring), and the old scope's newest versions they cover (from then on,
    only a later version there is delivered: one pushed by a machine that still syncs the old way). Read from this
    machine's record of the old scope alone."""
    history = History(bucket, "codex", OLD)
    found: list[Delivery] = []
    covered = {f"{OLD}/{path}": max(history.heads(path)) for path in history.paths() if history.heads(path)}
    for path in sorted(history.paths()):
        authors = _authors(history, path)
        kept = _present(history, path)
        by_machine: dict[str, list[str]] = {}
        for line in kept:
            author = authors.get(line)
            if author is not None and author != machine:
                by_machine.setdefault(author, []).append(line)
        for author, lines in sorted(by_machine.items()):
            when = max(str(meta["time"]) for meta in history.of(path) if meta["machine"] == author)
            found.append(Delivery(author, MIGRATED, when, path, lines, []))
    return found, covered


def _authors(history: History, path: str) -> dict[str, str]:
    """Each line of the file's versions, and the machine whose version first introduced it."""
    authors: dict[str, str] = {}
    for meta in history.of(path):  # in the order of their ids: oldest first
        with contextlib.suppress(Refused):
            text = history.text(str(meta["id"]))
            if text is None:
                continue
            before: set[str] = set()
            bases = meta["bases"]
            for base in bases if isinstance(bases, list) else []:
                if base in history.versions:
                    before.update((history.text(base) or "").splitlines())
            for line in text.splitlines():
                if line.strip() and line not in before:
                    authors.setdefault(line, str(meta["machine"]))
    return authors


def _present(history: History, path: str) -> list[str]:
    """The lines of the file here and of its newest versions in the old scope, in that order, each once."""
    texts: list[str] = []
    with contextlib.suppress(OSError, Refused):
        texts.append(folders.read(folders.codex_folder(), path).text or "")
    for head in history.heads(path):
        with contextlib.suppress(Refused):
            texts.append(history.text(head) or "")
    return list(dict.fromkeys(line for text in texts for line in text.splitlines() if line.strip()))
