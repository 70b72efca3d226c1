"""Installing skills into the agents' user skill folders: validated, copied (Codex skips symlinked skills),
swapped in atomically, never over an existing folder without consent, with a backup of what is replaced.

Backups live under the helper's state folder, outside every skill folder: a copy inside `~/.agents/skills`
or `~/.claude/skills` would show up as a second skill. Downloaded files are written, never executed.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .. import config as config_file
from .. import names, paths
from ..errors import AccessError, AgentMemoryError, ContentRefused
from ..fsutil import make_dirs, make_private, write_atomic
from ..memory import notes
from ..store import StoreError, UnsafeObject, open_store
from . import format as skills
from .installed import folder_files, local_changes, read_marker, sha256, skill_roots


def install_revision(name: str, revision: str, *, agent: str = "all", replace: bool = False) -> dict[str, Any]:
    """Download a complete revision, validate every path and file, install it; the contract's result."""
    names.skill(name)
    names.revision(revision)
    roots = skill_roots(agent)
    bucket = config_file.bucket()
    destinations = [root / name for root in roots.values()]
    if not replace and all(_holds_revision(dest, bucket, revision) for dest in destinations):
        # revisions are immutable: an unmodified install of the same one is already what was asked for
        return {"name": name, "revision": revision, "installed": [str(d) for d in destinations], "backup": None}
    files = _download(bucket, name, revision)
    meta = skills.parse_skill_md(files[skills.SKILL_FILE], f"{name}@{revision}")
    if meta["name"] != name:
        raise ContentRefused(f"Revision {revision} of {name} declares the name {meta['name']!r} in its SKILL.md.")
    marker = {"name": name, "revision": revision, "bucket": bucket}
    result = install_files(name, files, roots, marker, replace=replace)
    return {"name": name, "revision": revision, **result}


def _holds_revision(folder: Path, bucket: str, revision: str) -> bool:
    marker = read_marker(folder) or {}
    changes = local_changes(folder) if marker else None
    same = (marker.get("bucket"), marker.get("revision")) == (bucket, revision)
    return same and changes is not None and not any(changes.values())


def _download(bucket: str, name: str, revision: str) -> dict[str, bytes]:
    prefix = skills.revision_prefix(name, revision) + "/"
    store = open_store(bucket)
    try:
        listing = store.list(prefix)
    except StoreError as exc:
        raise _store_failure(exc, name, revision) from exc
    relative = [info.path[len(prefix) :] for info in listing]
    if skills.SKILL_FILE not in relative:
        raise skills.not_found(name, revision, bucket)
    for path, info in zip(relative, listing, strict=True):
        skills.safe_relative_path(path)
        if info.size > skills.FILE_MAX:
            raise ContentRefused(f"{path} in {name}@{revision} is {info.size} bytes; at most {skills.FILE_MAX}.")
    skills.check_collisions(relative)
    if len(listing) > skills.FILES_MAX or sum(info.size for info in listing) > skills.TOTAL_MAX:
        raise ContentRefused(f"{name}@{revision} is larger than a skill may be.")
    make_dirs(paths.state_dir())
    with tempfile.TemporaryDirectory(prefix="skill-download-", dir=paths.state_dir()) as tmp:
        try:
            store.fetch(listing, Path(tmp))
        except UnsafeObject as exc:
            raise ContentRefused(f"{name}@{revision} was refused: {exc.detail}.") from exc
        except StoreError as exc:
            raise _store_failure(exc, name, revision) from exc
        files = {}
        for path, info in zip(relative, listing, strict=True):
            file = Path(tmp) / info.path
            if file.is_symlink() or not file.is_file() or file.stat().st_size != info.size:
                raise ContentRefused(f"{path} of {name}@{revision} did not download as the regular file listed.")
            files[path] = file.read_bytes()
    return files


def _store_failure(exc: StoreError, name: str, revision: str) -> AgentMemoryError:
    error = AccessError if exc.reason == "auth" else AgentMemoryError
    return error(
        f"Could not download {name}@{revision}: {exc.detail}. Nothing was installed or changed.",
        next_step=f"agent-memory install-skill {name} --revision {revision} (again, once that is fixed)",
    )


def install_files(
    name: str,
    files: dict[str, bytes],
    roots: dict[str, Path],
    marker: dict[str, Any],
    *,
    replace: bool,
    backup: bool = True,
) -> dict[str, Any]:
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
    record = {**marker, "installed": notes.utc_now(), "files": {p: sha256(d) for p, d in sorted(files.items())}}
    staged: dict[str, Path] = {}
    try:
        for agent, dest in destinations.items():
            staged[agent] = _stage(dest, files, record)
        _swap_all(destinations, staged)
    finally:
        for folder in staged.values():
            shutil.rmtree(folder, ignore_errors=True)
    return {"installed": [str(dest) for dest in destinations.values()], "backup": str(saved) if saved else None}


def _stage(dest: Path, files: dict[str, bytes], record: dict[str, Any]) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    # a dot-folder beside the destination: same filesystem for the rename, and skipped by the agents' scans
    staging = Path(tempfile.mkdtemp(prefix=".agent-memory-stage-", dir=dest.parent))
    os.chmod(staging, 0o755)  # mkdtemp's 0700 would make the installed skill unlike any other folder
    for relative, data in files.items():
        target = staging.joinpath(*relative.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    write_atomic(staging / skills.MARKER, (json.dumps(record, indent=2) + "\n").encode())
    return staging


def _swap_all(destinations: dict[str, Path], staged: dict[str, Path]) -> None:
    done: list[tuple[Path, Path | None]] = []
    try:
        for agent, dest in destinations.items():
            old = None
            if dest.exists() or dest.is_symlink():
                old = dest.parent / f".agent-memory-old-{secrets.token_hex(6)}"
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
            shutil.rmtree(dest, ignore_errors=True)
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
        shutil.rmtree(path, ignore_errors=True)


def backups_dir() -> Path:
    """Where replaced skill folders are kept."""
    return paths.state_dir() / "backups" / "skills"


def _back_up(name: str, existing: dict[str, Path]) -> Path:
    stamp = notes.new_id()
    backup = backups_dir() / f"{name}-{stamp}"
    make_dirs(backup)
    for agent, dest in existing.items():
        # symlinks are copied as links: the backup holds exactly what was there, local edits included
        if dest.is_dir() and not dest.is_symlink():
            shutil.copytree(dest, backup / agent, symlinks=True)
        else:
            shutil.copy2(dest, backup / agent, follow_symlinks=False)
    make_private(backup)  # copies keep the skill's ordinary modes: under our state root, they must not
    return backup


def diff(folder: Path, files: dict[str, bytes]) -> dict[str, list[str]]:
    """How `files` differ from what `folder` holds: `{"added", "removed", "changed"}`."""
    current = folder_files(folder)
    return {
        "added": sorted(set(files) - set(current)),
        "removed": sorted(set(current) - set(files)),
        "changed": sorted(p for p in set(files) & set(current) if current[p] != files[p]),
    }


def describe(changes: dict[str, list[str]]) -> str:
    """`diff()` in words."""
    parts = [f"{kind} {', '.join(items)}" for kind, items in changes.items() if items]
    return "the new files would be identical" if not parts else "the new revision has " + "; ".join(parts)
