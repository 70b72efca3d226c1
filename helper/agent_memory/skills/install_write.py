"""The writing half of the install pair (what is installed is read by `install_read`).

Installing skills into the agents' user skill folders: validated, copied (Codex skips symlinked skills),
swapped in atomically, never over an existing folder without consent, with a backup of what is replaced.

What is installed is read back from our install markers (`install_read`). Backups live under the helper's state
folder,
outside every skill folder: a copy inside `~/.agents/skills` or `~/.claude/skills` would show up as a second skill.
Downloaded files are written, never executed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import commands, names, paths
from ..clock import new_id, utc_now
from ..config.context import Context
from ..contents import compare, sha256
from ..errors import AgentMemoryError, ContentRefused
from ..fsutil import (
    copy_as_is,
    make_dirs,
    make_private,
    new_folder,
    remove_tree,
    scratch_folder,
    write_atomic,
)
from ..store.base import OversizedObject, Store, StoreError, UnsafeObject
from . import layout
from .install_read import folder_files, local_changes, read_marker, skill_roots

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..contract import Installed
    from .shape import InstalledFiles


def install_revision(
    ctx: Context, name: str, revision: str, *, agent: str = "both", replace: bool = False, bucket: str | None = None
) -> Installed:
    """Download a complete revision from `bucket` (default: the configured one), validate every path and file,
    install it; the contract's result: `{"name", "revision", "installed" (every destination, which now holds it),
    "unchanged" (those that already did), "backup"}`."""
    if name == names.RESERVED_SKILL:  # not a name to change, as for a publication: the skill to get another way
        raise ContentRefused(
            f"The core memory skill {name} comes only with the agent-memory package, never from a bucket.",
            next_step=f"{commands.line('bootstrap')} (installs the packaged one; with --replace, over a copy edited "
            "here)",
        )
    names.skill(name)
    names.revision(revision)
    roots = skill_roots(agent)
    bucket = bucket or ctx.bucket
    # revisions are immutable: an unmodified install of the same one is already what was asked for, there
    held = {runtime for runtime, root in roots.items() if holds_revision(root / name, bucket, revision)}
    result: Installed = {
        "name": name,
        "revision": revision,
        "installed": [str(root / name) for root in roots.values()],
        "unchanged": [str(roots[runtime] / name) for runtime in roots if runtime in held],
        "backup": None,
    }
    if len(held) == len(roots):
        return result
    files, executable = _download(ctx.store_for(bucket), name, revision)
    meta = layout.parse_skill_md(files[layout.SKILL_FILE], f"{name}@{revision}", _another(name))
    if meta["name"] != name:
        raise ContentRefused(
            f"Revision {revision} of {name} declares the name {meta['name']!r} in its SKILL.md.",
            next_step=_another(name),
        )
    marker = {"name": name, "revision": revision, "bucket": bucket}
    missing = {runtime: root for runtime, root in roots.items() if runtime not in held}
    done = install_files(name, files, missing, marker, replace=replace, executable=executable)
    return {**result, "backup": done["backup"]}


def _another(name: str) -> str:
    """What to do about a revision in the bucket that cannot be installed: choose another one."""
    return f"{commands.line('search', '--skills', name)} (then install another revision)"


def holds_revision(folder: Path, bucket: str, revision: str) -> bool:
    """Whether `folder` is an unmodified install of `revision` from `bucket`."""
    marker = read_marker(folder) or {}
    changes = local_changes(folder) if marker else None
    same = (marker.get("bucket"), marker.get("revision")) == (bucket, revision)
    return same and changes is not None and not any(changes.values())


def _download(store: Store, name: str, revision: str) -> tuple[dict[str, bytes], list[str]]:
    """Every file of a complete revision, checked against its listing, and the files that are executable."""
    prefix = layout.revision_prefix(name, revision) + "/"
    try:
        listing = store.list(prefix)
    except StoreError as exc:
        _failed(exc, name, revision)
        raise
    if listing.skipped:  # a revision is installed whole or not at all
        unsafe = listing.skipped[0]
        if unsafe.path.startswith(prefix):  # else a folder on the way: a name we asked for
            layout.safe_relative_path(unsafe.path[len(prefix) :], _another(name))  # a name fit to be shown
        raise ContentRefused(f"{name}@{revision} was refused: {unsafe.detail}.", next_step=_another(name))
    relative = [info.path[len(prefix) :] for info in listing]
    if layout.SKILL_FILE not in relative:
        raise layout.not_found(name, revision, store.uri)
    for path, info in zip(relative, listing, strict=True):
        layout.safe_relative_path(path, _another(name))
        if info.size > layout.FILE_MAX:
            raise ContentRefused(
                f"{path} in {name}@{revision} is {info.size} bytes; at most {layout.FILE_MAX}.",
                next_step=_another(name),
            )
    layout.check_collisions(relative, _another(name))
    if len(listing) > layout.FILES_MAX or sum(info.size for info in listing) > layout.TOTAL_MAX:
        raise ContentRefused(f"{name}@{revision} is larger than a skill may be.", next_step=_another(name))
    with scratch_folder(paths.state_dir(), "skill-download-") as tmp:
        try:
            store.fetch(listing, Path(tmp))
        except UnsafeObject as exc:
            raise ContentRefused(f"{name}@{revision} was refused: {exc.detail}.", next_step=_another(name)) from exc
        except StoreError as exc:
            _failed(exc, name, revision)
            raise
        files = {}
        for path, info in zip(relative, listing, strict=True):
            file = Path(tmp) / info.path
            if file.is_symlink() or not file.is_file() or file.stat().st_size != info.size:
                raise ContentRefused(
                    f"{path} of {name}@{revision} did not download as the regular file listed.",
                    next_step=f"{commands.line('install-skill', name, '--revision', revision)} (again)",
                )
            files[path] = file.read_bytes()
    return files, _executable(store, name, revision, files)


def _executable(store: Store, name: str, revision: str, files: dict[str, bytes]) -> list[str]:
    """The revision's executable files, from the object published beside its folder (none if it has none)."""
    try:
        raw = store.read(layout.modes_path(name, revision), layout.FILE_MAX)
    except (UnsafeObject, OversizedObject) as exc:
        raise ContentRefused(f"{name}@{revision} was refused: {exc.detail}.", next_step=_another(name)) from exc
    except StoreError as exc:
        _failed(exc, name, revision)
        raise
    if raw is None:
        return []
    try:
        listed = json.loads(raw.decode("utf-8"))["executable"]
    except (ValueError, KeyError, TypeError):
        listed = None
    if not isinstance(listed, list) or not all(isinstance(path, str) and path in files for path in listed):
        raise ContentRefused(
            f"{layout.modes_path(name, revision)} does not list files of {name}@{revision}.", next_step=_another(name)
        )
    return listed


def _failed(exc: StoreError, name: str, revision: str) -> None:
    exc.during(f"Could not download {name}@{revision} (nothing was installed or changed)")


def install_files(
    name: str,
    files: dict[str, bytes],
    roots: dict[str, Path],
    marker: Mapping[str, object],
    *,
    replace: bool,
    backup: bool = True,
    executable: list[str] | tuple[str, ...] = (),
) -> InstalledFiles:
    """Install `files` as skill `name` under each root; `{"installed": [paths], "backup": path|None}`.

    Every destination is checked before anything changes; then all are staged beside their destination and
    swapped in, and a failure rolls back the swaps already made.
    """
    destinations = {agent: root / name for agent, root in roots.items()}
    existing = {agent: dest for agent, dest in destinations.items() if dest.exists() or dest.is_symlink()}
    if existing and not replace:
        raise AgentMemoryError(
            f"Skill {name} is already installed, so nothing was changed: "
            + "; ".join(f"{dest}: {describe(diff(dest, files))}" for dest in existing.values()),
            next_step=f"add --replace to install it anyway (the current folder is backed up under {backups_dir()})",
        )
    saved = _back_up(name, existing) if existing and backup else None
    record = {**marker, "installed": utc_now(), "files": {p: sha256(d) for p, d in sorted(files.items())}}
    staged: dict[str, Path] = {}
    try:
        for agent, dest in destinations.items():
            staged[agent] = _stage(dest, files, record, set(executable))
        _swap_all(destinations, staged)
    finally:
        for folder in staged.values():
            remove_tree(folder)
    return {"installed": [str(dest) for dest in destinations.values()], "backup": str(saved) if saved else None}


def _stage(dest: Path, files: dict[str, bytes], record: dict[str, object], executable: set[str]) -> Path:
    # explicit modes everywhere, whatever the umask: folders 0755, files 0644, or 0755 where the publisher's file
    # was executable; never writable by group or others, who could change what the agent runs
    make_dirs(dest.parent)
    # a dot-folder beside the destination: same filesystem for the rename, and skipped by the agents' scans
    staging = new_folder(dest.parent, ".agent-memory-stage-")  # 0700 while it fills
    for relative, data in files.items():
        target = staging.joinpath(*relative.split("/"))
        make_dirs(target.parent)
        with open(target, "xb") as out:  # whatever mode the umask gives it, nobody else reaches it in 0700 staging
            out.write(data)
        os.chmod(target, 0o755 if relative in executable else 0o644)
    write_atomic(staging / layout.MARKER, (json.dumps(record, indent=2) + "\n").encode())
    os.chmod(staging, 0o755)  # mkdtemp's 0700 would make the installed skill unlike any other folder
    return staging


def _swap_all(destinations: dict[str, Path], staged: dict[str, Path]) -> None:
    done: list[tuple[Path, Path | None]] = []
    try:
        for agent, dest in destinations.items():
            old = None
            if dest.exists() or dest.is_symlink():
                old = dest.parent / f".agent-memory-old-{os.urandom(6).hex()}"
                os.rename(dest, old)
            try:
                os.rename(staged[agent], dest)
            except BaseException:
                if old is not None:
                    os.rename(old, dest)
                raise
            done.append((dest, old))
    except BaseException:
        for dest, old in reversed(done):
            remove_tree(dest)
            if old is not None:
                os.rename(old, dest)
        raise
    for _dest, old in done:
        if old is not None:
            _remove(old)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        remove_tree(path)


def backups_dir() -> Path:
    """Where replaced skill folders are kept."""
    return paths.state_dir() / "backups" / "skills"


def _back_up(name: str, existing: dict[str, Path]) -> Path:
    stamp = new_id()
    backup = backups_dir() / f"{name}-{stamp}"
    make_dirs(backup)
    for agent, dest in existing.items():
        copy_as_is(dest, backup / agent)  # the backup holds exactly what was there, local edits and links included
    make_private(backup)  # copies keep the skill's ordinary modes: under our state root, they must not
    return backup


def diff(folder: Path, files: dict[str, bytes]) -> dict[str, list[str]]:
    """How `files` differ from what `folder` holds: `{"added", "removed", "changed"}`."""
    return compare(folder_files(folder), files)


def describe(changes: dict[str, list[str]]) -> str:
    """`diff()` in words."""
    verbs = {"added": "add", "removed": "remove", "changed": "change"}  # what installing does to the folder there
    parts = [f"{verbs[kind]} {', '.join(items)}" for kind, items in changes.items() if items]
    return "the new files would be identical" if not parts else "installing it would " + "; ".join(parts)


def uninstall_all(agent: str = "both") -> dict[str, list[str]]:
    """Take out every skill folder we installed in `agent`'s skill roots (the core skill last, as bootstrap installs
    it first): `{"removed": [paths], "backups": [paths]}`. A folder with local edits is backed up first (as a
    replacement is); one that is not ours (no marker, or a link) is never touched."""
    removed: list[str] = []
    backups: list[str] = []
    for core in (False, True):
        for name, root in skill_roots(agent).items():
            for folder in sorted(root.iterdir()) if root.is_dir() and not root.is_symlink() else []:
                marker = read_marker(folder) if folder.is_dir() and not folder.is_symlink() else None
                if marker is None or (folder.name == names.RESERVED_SKILL) != core:
                    continue
                changes = local_changes(folder)
                if changes is None or any(changes.values()):  # edited here: nothing of the user's is lost
                    backups.append(str(_back_up(folder.name, {name: folder})))
                # out of the agents' sight at once: a removal cut short leaves a hidden folder, never half a skill
                leaving = folder.parent / f".agent-memory-old-{os.urandom(6).hex()}"
                os.rename(folder, leaving)
                _remove(leaving)
                removed.append(str(folder))
    return {"removed": removed, "backups": backups}
