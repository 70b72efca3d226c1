"""One memory folder brought in step with the versions this machine knows: what changed here becomes a new version
(`push`), what changed elsewhere is written here, and where both changed, a merge or a conflict.

For each file, the record (`index`) says which version the folder last matched. Then:
- changed here (and `push`): a new version based on that one (a tombstone for a deletion), unless the secret guard
  refuses its text, which then stays here only; after a conflict, the change here is the decision, and the new
  version is based on every head the conflict named;
- the bucket moved on from that version along one line: its head is written here;
- the heads diverged (changed on two machines): merged line by line against their common version, written here and
  pushed as a version based on all of them; where the changes touch the same lines, the file here keeps its text
  and each other head's text is kept beside it, outside the runtime's folder (`conflicts_folder`), until a change
  here (or `sync restore`) decides.
Without `push` (the SessionStart hook) only the second case runs: a file changed here waits for the next push.
A `source` folder (Codex's memories, which Codex itself regenerates) is only read: what changed here is pushed as a
version based on every head of the file, and nothing is ever written into it (other machines' Codex memories reach
it through Codex's memory extension folder, `codex_delivery`).
Every write here compares the file with what it was read as, just before the rename (`folders.write`).
"""

from __future__ import annotations

from pathlib import Path

from .. import guard, paths
from ..clock import new_id, utc_now
from ..fsutil import write_atomic
from . import folders
from .folders import Local, Moved
from .history import History
from .index import FolderIndex
from .merging import Conflicting, merge
from .versions import Refused, Version


def conflicts_folder(runtime: str, scope: str) -> Path:
    """Where the other texts of files in conflict are kept: outside every folder a runtime loads."""
    return paths.state_dir() / "sync" / "conflicts" / f"{runtime}-{scope}"


class FolderSync:
    """What one pass over a folder did."""

    def __init__(self, runtime: str, scope: str, folder: Path) -> None:
        self.runtime = runtime
        self.scope = scope
        self.folder = folder
        self.pushed: list[str] = []
        self.pulled: list[str] = []
        self.merged: list[str] = []
        self.waiting: list[str] = []  # changed here, to be pushed by the next push
        self.before: dict[str, str | None] = {}  # the text a pulled file had here before (None: no file)
        self.conflicts: list[dict[str, object]] = []
        self.refused: list[dict[str, str]] = []
        self.in_step = 0
        self.new: list[Version] = []


def sync_folder(
    history: History,
    index: FolderIndex,
    *,
    push: bool,
    machine: str,
    only: set[str] | None = None,
    source: bool = False,
) -> FolderSync:
    """Bring `index.folder` and `history` in step (see the module's docstring); new versions in `.new`, to upload.
    `only`: these files alone; `source`: the folder is only read, never written."""
    runtime, scope, folder = history.runtime, history.scope, index.folder
    done = FolderSync(runtime, scope, folder)
    local, skipped = folders.scan(runtime, folder, index.files) if folder.is_dir() else ({}, {})
    for path, why in skipped.items():
        if path in index.files or path in history.paths():
            done.refused.append({"path": path, "why": why})
    candidates = set(local) | set(index.files) | history.paths()
    for path in sorted(candidates if only is None else candidates & only):
        if path in skipped or folders.ignored(runtime, path):
            continue
        _sync_file(history, index, done, path, local.get(path), push=push, machine=machine, source=source)
    index.pushed += len(done.pushed)
    index.pulled += len(done.pulled)
    return done


def _sync_file(
    history: History,
    index: FolderIndex,
    done: FolderSync,
    path: str,
    here: Local | None,
    *,
    push: bool,
    machine: str,
    source: bool,
) -> None:
    record = index.files.get(path)
    if record is None and here is not None and here.hash is not None:
        # no record (a first sync here, or a record lost): a file whose text a version has is in step with it
        same = [meta["id"] for meta in history.of(path) if meta["hash"] == here.hash]
        if same:
            record = {"size": here.size, "mtime_ns": here.mtime_ns, "hash": here.hash, "version": same[-1]}
            index.files[path] = record
    base = record.get("version") if record else None
    base = base if base in history.versions else None
    changed = (here.hash if here else None) != (record.get("hash") if record else None)
    conflict = index.conflicts.get(path)
    if changed:
        if not push:
            done.waiting.append(path)
            return
        if here is not None and here.text is None:
            try:
                here = folders.read(done.folder, path)
            except (OSError, Refused):  # changed since the scan (replaced by a link, removed): the next sync sees
                done.waiting.append(path)
                return
        if here is not None and (found := guard.scan(here.text)):
            done.refused.append({"path": path, "why": _guard_reason(found)})
            index.held[path] = {"size": here.size, "mtime_ns": here.mtime_ns, "hash": here.hash}
            return
        if here is None and base is None:
            index.files.pop(path, None)  # made and deleted here between two syncs: nothing to tell
            return
        bases = [h for h in conflict["heads"] if h in history.versions] if conflict else [base] if base else []
        if source:  # the folder is the truth: its text supersedes every version the bucket has of the file
            bases = history.heads(path)
        version = Version(new_id(), path, bases, here.text if here else None, machine, utc_now())
        _record(history, index, done, version, here)
        done.pushed.append(path)
        index.conflicts.pop(path, None)
        base = version.id
    heads = history.heads(path)
    if not heads or heads == [base] or source:  # a source is never written: it is in step once pushed
        done.in_step += 1
        return
    if len(heads) == 1 and (base in history.ancestors(heads[0]) or (base is None and here is None)):
        if _write(history, index, done, path, heads[0], here):
            done.pulled.append(path)
        return
    if not push:
        done.waiting.append(path)
        return
    if conflict and sorted(conflict["heads"]) == heads:
        done.conflicts.append({"path": path, **conflict})  # still undecided: nothing new to try
        return
    start = base if base in heads else max(heads)
    try:
        text = history.text(start)
        for other in (head for head in heads if head != start):
            common = history.common_base(start, other)
            text = merge(history.text(common) if common else None, text, history.text(other))
    except Conflicting:
        _keep_beside(history, index, done, path, heads, base)
        return
    except Refused as exc:
        done.refused.append({"path": path, "why": str(exc)})
        return
    version = Version(new_id(), path, heads, text, machine, utc_now())
    written = _write_text(done, path, text, here)
    if written is False:
        return
    _record(history, index, done, version, written)
    done.merged.append(path)


def _write(history: History, index: FolderIndex, done: FolderSync, path: str, head: str, here: Local | None) -> bool:
    """Write the text of version `head` here (a tombstone deletes); False if the runtime changed the file
    meanwhile or the version's kept text is damaged."""
    try:
        text = history.text(head)
    except Refused as exc:
        done.refused.append({"path": path, "why": str(exc)})
        return False
    if here is not None and here.text is None:
        try:
            here = folders.read(done.folder, path)
        except (OSError, Refused):
            here = None if not (done.folder / path).exists() else here
    written = _write_text(done, path, text, here)
    if written is False:
        return False
    done.before[path] = here.text if here is not None else None
    _mark(index, path, written, text, head)
    return True


def _write_text(done: FolderSync, path: str, text: str | None, here: Local | None) -> Local | None | bool:
    """`folders.write` over the file as it was read; False (nothing written) if it changed since (it waits for the
    next sync) or its place in the folder is refused (a link on the way)."""
    try:
        return folders.write(done.folder, path, text, here.hash if here else None)
    except Moved:
        done.waiting.append(path)
    except Refused as exc:
        done.refused.append({"path": path, "why": str(exc)})
    return False


def _record(history: History, index: FolderIndex, done: FolderSync, version: Version, here: Local | None) -> None:
    history.add(version)
    done.new.append(version)
    _mark(index, version.path, here, version.text, version.id)


def _mark(index: FolderIndex, path: str, here: Local | None, text: str | None, version: str) -> None:
    """Record that the file `path` is in step with `version` (its size and time as it is now): no conflict."""
    index.conflicts.pop(path, None)
    index.held.pop(path, None)
    if here is None:
        index.files[path] = {"size": None, "mtime_ns": None, "hash": None, "version": version}
    else:
        index.files[path] = {"size": here.size, "mtime_ns": here.mtime_ns, "hash": here.hash, "version": version}


def _keep_beside(
    history: History, index: FolderIndex, done: FolderSync, path: str, heads: list[str], base: str | None
) -> None:
    """A conflict: the file here keeps its text, and every other head's text is kept outside the runtime's folder."""
    kept = []
    for head in heads:
        if head == base:
            continue
        text = history.text(head)
        target = conflicts_folder(history.runtime, history.scope) / head / path
        write_atomic(target, b"" if text is None else text.encode("utf-8"))
        kept.append(str(target) + (" (deleted there)" if text is None else ""))
    index.conflicts[path] = {"heads": heads, "kept": kept, "at": utc_now()}
    done.conflicts.append({"path": path, **index.conflicts[path]})


def _guard_reason(found: list[guard.Finding]) -> str:
    first = found[0]
    return f"it looks like it holds a secret (line {first.line}: {first.label}); it stays on this machine only"
