"""One memory folder brought in step with the versions this machine knows: what changed here becomes a new version
(`push`), what changed elsewhere is written here, and where both changed, a merge or a conflict.

For each file, the record (`index`) says which version the folder last matched. Then:
- changed here (and `push`): a new version based on that one (a tombstone for a deletion), unless the secret guard
  refuses its text, which then stays here only; after a conflict, the change here is the decision, and the new
  version is based on every head the conflict named;
- the bucket moved on from that version along one line: its head is written here;
- the heads diverged (changed on two machines): merged against their nearest common version (`merging`: git's
  three-way merge), written here and pushed as a version based on all of them; where git finds a conflict, the file
  here keeps its text and each other head's text is kept beside it, outside the runtime's folder
  (`conflicts_folder`), until a change here (or `sync restore`) decides.
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
from . import deletions, folders
from .folders import Local, Moved
from .history import History
from .index import FolderIndex
from .merging import Conflicting, merge
from .summary import DELETED_THERE, refused_next
from .versions import SECRET, SECRET_THERE, Refused, Version

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import Literal

    from ..contract import SyncFileRefused


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
        self.arrived: dict[str, dict[str, object]] = {}  # a pulled or merged file: whose versions, made when
        self.conflicts: list[dict[str, object]] = []
        self.refused: list[SyncFileRefused] = []
        self.in_step = 0  # files here in step with the bucket after the pass (a deletion in step is no file here)
        self.new: list[Version] = []
        self.blocked: dict[str, str] = {}  # folders not synced now ("": the memory folder itself), and why
        self.held: dict[str, str] = {}  # deletions held until the user confirms them (`deletions`)


def sync_folder(
    history: History,
    index: FolderIndex,
    *,
    push: bool,
    machine: str,
    only: set[str] | None = None,
    source: bool = False,
    allow_deletes: bool = False,
) -> FolderSync:
    """Bring `index.folder` and `history` in step (see the module's docstring); new versions in `.new`, to upload.
    `only`: these files alone; `source`: the folder is only read, never written. A folder that is gone, a link, a
    file or unreadable is left as it is, and what it held is not deleted anywhere; many deletions at once wait for
    `allow_deletes` (see `deletions`)."""
    runtime, scope, folder = history.runtime, history.scope, index.folder
    done = FolderSync(runtime, scope, folder)
    deletions.refill(index)
    local, skipped, blocked = folders.scan(runtime, folder, index.files)
    done.blocked = index.blocked = blocked
    for path, refused in skipped.items():
        if path in index.files or path in history.paths():
            _refuse(done, path, str(refused), refused.kind)
    held = {} if allow_deletes else deletions.held(history, index, local, skipped, blocked)
    candidates = set(local) | set(index.files) | history.paths()
    for path in sorted(candidates if only is None else candidates & only):
        if path in skipped or folders.ignored(runtime, path) or folders.under(path, blocked) is not None:
            continue
        if found := guard.scan(path):  # a token in a file's or folder's name: neither pushed nor written here
            _hold_name(index, done, path, local.get(path), found)
            continue
        if path in held:
            done.held[path] = held[path]
            continue
        _sync_file(history, index, done, path, local.get(path), push=push, machine=machine, source=source)
    if only is None:
        index.holding = done.held
    else:
        index.holding = {path: why for path, why in index.holding.items() if path not in only} | done.held
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
        if not push:  # a change here is pushed (and merged) by the next push, never decided by a pull
            done.waiting.append(path)
            return
        if here is not None and here.text is None:
            try:
                here = folders.read(done.folder, path)
            except (OSError, Refused):  # changed since the scan (replaced by a link, removed): the next sync sees
                done.waiting.append(path)
                return
        if here is not None and here.text is not None and (found := guard.scan(here.text)):  # (read: it has text)
            _refuse(done, path, _guard_reason(found), SECRET)
            index.held[path] = {"size": here.size, "mtime_ns": here.mtime_ns, "hash": here.hash}
            return
        if here is None and base is None:
            index.files.pop(path, None)  # made and deleted here between two syncs: nothing to tell
            return
        if here is None and folders.missing_folder(done.folder, path) is not None:
            return  # its folder went away since the scan: that is no deletion (the next sync tells it)
        bases = [h for h in conflict["heads"] if h in history.versions] if conflict else [base] if base else []  # type: ignore[attr-defined]  # heads: a list (index._well_formed)
        if source:  # the folder is the truth: its text supersedes every version the bucket has of the file
            bases = history.heads(path)
        version = Version(new_id(), path, bases, here.text if here else None, machine, utc_now())
        _record(history, index, done, version, here)
        done.pushed.append(path)
        index.conflicts.pop(path, None)
        base = version.id
    heads = history.heads(path)
    if not heads or heads == [base] or source:  # a source is never written: it is in step once pushed
        done.in_step += here is not None
        return
    if len(heads) == 1 and (base in history.ancestors(heads[0]) or (base is None and here is None)):
        if _write(history, index, done, path, heads[0], here):
            done.pulled.append(path)
            done.in_step += history.versions[heads[0]]["hash"] is not None  # a deletion pulled: no file here
            _arrived(history, done, path, heads, base)
        return
    if conflict and sorted(conflict["heads"]) == heads:  # type: ignore[call-overload]  # a list (index._well_formed)
        done.conflicts.append({"path": path, **conflict})  # still undecided: nothing new to try
        return
    if not push and base not in heads:
        done.waiting.append(path)  # diverged without this machine's version: the next push merges
        return
    start = base if base in heads else max(heads)
    try:
        text = _merged(history, heads, start)
    except Conflicting:
        # this machine's version is one of the heads: told now, by a pull too (the first machine to push a
        # conflicting edit learns it at its next session start, not at its next edit of the file)
        _keep_beside(history, index, done, path, heads, base, deleted_here=here is None)
        return
    except Refused as exc:
        _refuse(done, path, str(exc), exc.kind)
        return
    if not push:  # a clean merge is a new version: made by the next push, which can upload it
        done.waiting.append(path)
        return
    if text is not None and (found := guard.scan(text)):  # what this machine wrote passed: the other side's
        _refuse(done, path, _refused_from_elsewhere(found), SECRET_THERE)
        return
    version = Version(new_id(), path, heads, text, machine, utc_now())
    written = _write_text(done, path, text, here)
    if written is False:
        return
    _record(history, index, done, version, written)
    done.merged.append(path)
    done.in_step += text is not None
    _arrived(history, done, path, [head for head in heads if head != start], start)


def _merged(history: History, heads: list[str], start: str) -> str | None:
    """The text of every head merged into head `start`; Conflicting where they touch the same lines."""
    text = history.text(start)
    for other in (head for head in heads if head != start):
        common = history.common_base(start, other)
        text = merge(history.text(common) if common else None, text, history.text(other))
    return text


def _write(history: History, index: FolderIndex, done: FolderSync, path: str, head: str, here: Local | None) -> bool:
    """Write the text of version `head` here (a tombstone deletes); False if the runtime changed the file
    meanwhile or the version's kept text is damaged."""
    try:
        text = history.text(head)
    except Refused as exc:
        _refuse(done, path, str(exc), exc.kind)
        return False
    if text is not None and (found := guard.scan(text)):  # held in the bucket's history, never obeyed here
        _refuse(done, path, _refused_from_elsewhere(found), SECRET_THERE)
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


def _write_text(done: FolderSync, path: str, text: str | None, here: Local | None) -> Local | None | Literal[False]:
    """`folders.write` over the file as it was read; False (nothing written) if it changed since (it waits for the
    next sync) or its place in the folder is refused (a link on the way)."""
    try:
        return folders.write(done.folder, path, text, here.hash if here else None)
    except Moved:
        done.waiting.append(path)
    except Refused as exc:
        _refuse(done, path, str(exc), exc.kind)
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
    history: History,
    index: FolderIndex,
    done: FolderSync,
    path: str,
    heads: list[str],
    base: str | None,
    *,
    deleted_here: bool,
) -> None:
    """A conflict: the file here keeps its text (or stays deleted), and every other head's text is kept outside
    the runtime's folder."""
    kept = []
    for head in heads:
        if head == base:
            continue
        text = history.text(head)
        target = conflicts_folder(history.runtime, history.scope) / head / path
        write_atomic(target, b"" if text is None else text.encode("utf-8"))
        kept.append(str(target) + (DELETED_THERE if text is None else ""))
    index.conflicts[path] = {"heads": heads, "kept": kept, "at": utc_now(), "deleted_here": deleted_here}
    done.conflicts.append({"path": path, **index.conflicts[path]})


def _refuse(done: FolderSync, path: str, why: str, kind: str) -> None:
    """Report `path` as not synced, why, and what makes it sync (chosen by `kind`, a code of `versions`); its name
    is told with any credential in it masked."""
    shown = guard.redact(path)
    done.refused.append({"path": shown, "why": why, "next": refused_next(kind, shown, done.folder)})


def _hold_name(index: FolderIndex, done: FolderSync, path: str, here: Local | None, found: list[guard.Finding]) -> None:
    """A file whose name holds a credential stays on this machine, held as a file whose text holds one is (an
    unchanged one then costs the hooks nothing); a version of it from the bucket is never written here."""
    why = f"its name looks like it holds a secret ({found[0].label}); it stays on this machine only"
    _refuse(done, path, why, SECRET)
    if here is not None and here.hash is not None:
        index.held[path] = {"size": here.size, "mtime_ns": here.mtime_ns, "hash": here.hash}


def _refused_from_elsewhere(found: list[guard.Finding]) -> str:
    first = found[0]
    return (
        f"the version from another machine looks like it holds a secret (line {first.line}: {first.label}); it "
        "was not written here"
    )


def _arrived(history: History, done: FolderSync, path: str, heads: list[str], base: str | None) -> None:
    """Record which machines made the versions that just reached this file (those of `heads` not already in
    `base`), and when the newest was made: what the reminder and `sync status` tell of lines from elsewhere."""
    known = history.ancestors(base) if base else set()
    new = set().union(*(history.ancestors(head) for head in heads)) - known
    metas = [history.versions[version] for version in new]
    if metas:
        machines = sorted({str(meta["machine"]) for meta in metas})
        done.arrived[path] = {"machines": machines, "time": max(str(meta["time"]) for meta in metas)}


def _guard_reason(found: list[guard.Finding]) -> str:
    first = found[0]
    return f"it looks like it holds a secret (line {first.line}: {first.label}); it stays on this machine only"
