"""`agent-memory bootstrap`: take a machine from nothing to a verified, working memory.

There is no setup ledger: every run looks at the real bucket, configuration, skill folders and instruction
files, and adds what is missing. So a repeated or interrupted run resumes without duplicating anything.
Input and local writability are checked before anything is created remotely.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shlex
import stat
from pathlib import Path
from typing import Any

from .. import __version__, agents, names, paths
from .. import config as config_file
from ..agents import claude, codex
from ..errors import AccessError, AgentMemoryError, UsageError
from ..fsutil import write_atomic
from ..memory import notes, projects
from ..skills.installed import local_changes, read_marker, sha256, skill_roots
from ..skills.installing import install_files, install_revision
from ..store import StoreError, folder_path, open_store, parse_bucket
from . import codex_sandbox as sandbox
from . import hooks as hook_files
from . import instructions
from .command import helper_command

CORE_SKILL_DIR = Path(__file__).parent.parent / "core_skill"
VERIFICATION_TITLE = "Memory setup verification"
DEFAULT_BUCKET_NAME = "agent-memory"


def bootstrap(
    project: str,
    *,
    bucket: str | None = None,
    directory: str | None = None,
    agent: str = "both",
    skill_specs: list[str] | None = None,
    hooks: bool = False,
    codex_sandbox: bool = False,
    space_revision: str | None = None,
    replace: bool = False,
) -> dict[str, Any]:
    """Set up this machine; the command's JSON result (its `verification.status` decides the exit code)."""
    names.project(project)
    root = projects.canonical(directory or Path.cwd())
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory.", next_step="agent-memory bootstrap --project NAME --dir DIR")
    supplied = parse_bucket(bucket) if bucket else None
    if supplied and (folder := folder_path(supplied)) is not None and not folder.parent.is_dir():
        raise UsageError(f"Cannot create the folder store {folder}: its parent folder does not exist.")
    wanted_skills = [names.skill_spec(spec) for spec in skill_specs or []]
    roots = skill_roots(agent)
    if codex_sandbox and "codex" not in roots:
        raise UsageError("--codex-sandbox is for Codex, but --agent does not include it.", next_step="add --agent both")
    if hooks:  # a hook file we would refuse to edit is refused now, before anything is set up
        hook_files.check(agent)
    if codex_sandbox:
        sandbox.check()
    _check_writable(
        [paths.config_dir(), paths.state_dir(), paths.cache_dir(), *roots.values()]
        + [agents.runtime(name).instructions_file().parent for name in roots]
    )
    warnings: list[str] = []

    configured = config_file.load().get("bucket")
    uri, created = _connect(supplied or configured)
    config_file.update(bucket=uri)
    projects.map_directory(project, root)

    skill = _install_core_skill(roots, replace, warnings)
    for name, revision in wanted_skills:
        _install_shared_skill(name, revision, agent, warnings)
    recorded = config_file.load().get("core_skill") or {}
    space_revision = space_revision or recorded.get("space_revision")  # a re-run without the flag keeps it
    config_file.update(core_skill={"version": __version__, "space_revision": space_revision})

    helper = helper_command()
    written = []
    for name in roots:
        path = agents.runtime(name).instructions_file()
        instructions.upsert(path, helper)
        written.append(str(path))
    if "codex" in roots and (warning := codex.override_warning()):
        warnings.append(warning)
    if "claude" in roots and (warning := claude.duplicate_block_warning(instructions.BEGIN)):
        warnings.append(warning)
    if "codex" in roots and (problem := _login_shell_problem(helper)):
        warnings.append(problem)
    installed_hooks = hook_files.install(agent) if hooks else []
    consent = sandbox.allow() if codex_sandbox else None

    verification, problem = _verify(uri, project)
    if problem:
        warnings.append(f"Verification {verification['status']}: {problem}")
    return {
        "bucket": uri,
        "bucket_created": created,
        "project": project,
        "root": str(root),
        "agents": list(roots),
        "skill": skill,
        "instructions": written,
        "hooks": {"requested": hooks, "installed": installed_hooks},
        "codex_sandbox": consent,
        "verification": verification,
        "warnings": warnings,
    }


def _login_shell_problem(helper: str) -> str | None:
    """Why the helper command does not run from a login shell, as Codex runs the model's commands (X6); or None."""
    import subprocess

    shell = os.environ.get("SHELL") or "/bin/sh"
    try:
        proc = subprocess.run(
            [shell, "-lc", f"{helper} --version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        detail = f"{shell} -l could not run it ({exc})"
    else:
        if proc.returncode == 0 and proc.stdout.startswith("agent-memory "):
            return None
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        detail = f"exit {proc.returncode}" + (f": {lines[-1]}" if lines else "")
    return (
        f"Codex runs the model's commands in a login shell, and `{helper} --version` failed there ({detail}), so "
        f"Codex sessions cannot use memory. Make {shell} -l run it (check ~/.profile, ~/.bash_profile and "
        f"~/.bashrc), then run: {shell} -lc {shlex.quote(helper + ' --version')}"
    )


def _check_writable(folders: list[Path]) -> None:
    """Fail early, before anything remote or local is created, if a folder we will write to cannot be made.

    The probe writes a file in the nearest existing ancestor and removes it: permission bits alone would not
    tell (root ignores them), and a regular file where a folder should be is the usual real-life culprit.
    """
    for folder in folders:
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        try:
            if not existing.is_dir():
                raise NotADirectoryError(20, "a file is in the way", str(existing))
            probe = existing / f".agent-memory-probe-{secrets.token_hex(4)}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise AgentMemoryError(
                f"Cannot write to {folder} ({exc.strerror or exc}); nothing was set up.",
                next_step="fix the folder's permissions (or AGENT_MEMORY_HOME, HOME, CODEX_HOME, CLAUDE_CONFIG_DIR)",
            ) from exc


# -- the bucket ---------------------------------------------------------------------------------------------


def _connect(chosen: str | None) -> tuple[str, bool]:
    """Verify (or, only for the default name, create) the bucket; returns its URI and whether we created it."""
    if chosen and (folder := folder_path(chosen)) is not None:
        return chosen, _prepare_folder(folder)
    user = _whoami()  # first, so that missing credentials get their own clear message
    uri = chosen or f"hf://buckets/{user}/{DEFAULT_BUCKET_NAME}"
    store = open_store(uri)
    info = _hub_call(store.info, uri)  # type: ignore[attr-defined]
    if info is None:
        if chosen:
            raise AccessError(
                f"The bucket {uri} does not exist or this account cannot access it; no other bucket was created.",
                next_step="check the name, or run bootstrap without --bucket to create your own private bucket",
            )
        _hub_call(store.create, uri)  # type: ignore[attr-defined]
        return uri, True
    if not info["private"]:
        raise AccessError(
            f"The bucket {uri} is public. agent-memory only uses private buckets, and never changes visibility.",
            next_step="make it private yourself on huggingface.co, or choose another bucket with --bucket",
        )
    return uri, False


def _whoami() -> str:
    from ..store.hub import whoami

    try:
        return whoami()
    except StoreError as exc:
        if exc.reason == "auth":
            raise AccessError(
                "No valid Hugging Face credentials on this machine. Set them up yourself, outside the chat: "
                "run `hf auth login`, or export HF_TOKEN in your shell. Never paste a token into a chat or a "
                "command line.",
                next_step="hf auth login, then run this bootstrap again",
            ) from exc
        raise AgentMemoryError(f"Could not reach the Hugging Face Hub: {exc.detail}.") from exc


def _hub_call(fn: Any, uri: str) -> Any:
    try:
        return fn()
    except StoreError as exc:
        error = AccessError if exc.reason == "auth" else AgentMemoryError
        raise error(f"Could not use the bucket {uri}: {exc.detail}.", next_step="run the same bootstrap again") from exc


def _prepare_folder(folder: Path) -> bool:
    """Create a missing folder store owner-only, or refuse one that other users can read or write."""
    if not folder.exists():
        if not folder.parent.is_dir():
            raise UsageError(f"Cannot create the folder store {folder}: its parent folder does not exist.")
        folder.mkdir(mode=0o700)
        return True
    info = folder.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{folder} is not a folder.")
    if info.st_mode & 0o077 or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise AccessError(
            f"The folder store {folder} can be read or written by other users (mode {stat.filemode(info.st_mode)}). "
            "Like a public bucket, it is refused, and its permissions are not changed.",
            next_step=f"chmod 700 {shlex.quote(str(folder))} (if that is what you want), then bootstrap again",
        )
    return False


# -- skills -------------------------------------------------------------------------------------------------


def core_skill_files() -> dict[str, bytes]:
    """The core memory skill shipped in this package."""
    return {
        path.relative_to(CORE_SKILL_DIR).as_posix(): path.read_bytes()
        for path in sorted(CORE_SKILL_DIR.rglob("*"))
        if path.is_file()
    }


def _install_core_skill(roots: dict[str, Path], replace: bool, warnings: list[str]) -> dict[str, list[str]]:
    files = core_skill_files()
    marker = {"name": names.RESERVED_SKILL, "revision": None, "source": "package", "version": __version__}
    result: dict[str, list[str]] = {"installed": [], "kept": []}
    for agent, root in roots.items():
        dest = root / names.RESERVED_SKILL
        if dest.exists() and not replace:
            changes = local_changes(dest)
            if changes is None or any(changes.values()):
                warnings.append(
                    f"Kept your modified copy of the core skill in {dest}. "
                    "To replace it with the packaged one (a backup is kept), run bootstrap again with --replace."
                )
                result["kept"].append(str(dest))
                continue
            if read_marker(dest) is not None and _installed_files_match(dest, files):
                result["installed"].append(str(dest))
                continue
        # an unmodified copy is what an earlier package installed: no need to back it up
        install_files(names.RESERVED_SKILL, files, {agent: root}, marker, replace=True, backup=replace)
        result["installed"].append(str(dest))
    return result


def _installed_files_match(dest: Path, files: dict[str, bytes]) -> bool:
    marker = read_marker(dest) or {}
    return marker.get("files") == {p: sha256(d) for p, d in sorted(files.items())}


def _install_shared_skill(name: str, revision: str, agent: str, warnings: list[str]) -> None:
    """Install NAME@REVISION unless it is already there; never over another folder without consent."""
    destinations = [root / name for root in skill_roots(agent).values()]
    present = [dest for dest in destinations if dest.exists()]
    if not present:
        install_revision(name, revision, agent=agent)
        return
    other_revision = [dest for dest in present if (read_marker(dest) or {}).get("revision") != revision]
    if other_revision or len(present) < len(destinations):
        warnings.append(
            f"Skill {name} is already installed at another revision, or for one agent only, so it was left as "
            f"it is. To replace it: agent-memory install-skill {name} --revision {revision} --replace"
        )


# -- verification -------------------------------------------------------------------------------------------


def machine_id() -> str:
    """A random id for this machine's agent-memory state, created once (never derived from the hardware)."""
    file = paths.state_dir() / "machine-id"
    with contextlib.suppress(FileNotFoundError):
        return file.read_text().strip()
    write_atomic(file, secrets.token_hex(16).encode())
    return file.read_text().strip()


def verification_id(bucket: str, project: str) -> str:
    """The same id on every run for this machine, bucket and project; another machine gets its own."""
    digest = hashlib.sha256(f"{machine_id()}\n{bucket}\n{project}".encode()).hexdigest()[:16]
    return f"setup-{digest}"


def _verify(bucket: str, project: str) -> tuple[dict[str, str], str | None]:
    """Save (once), read back from the bucket bypassing the cache, find with search: `({"id", "status"}, why)`."""
    from .. import outbox
    from ..memory import saving as uploads
    from ..memory.cache import ProjectCache
    from ..memory.refresh import refresh
    from ..memory.search import search

    note_id = verification_id(bucket, project)
    path = notes.object_path(project, note_id)
    try:
        store = open_store(bucket)
        if outbox.pending_note(note_id) is not None:
            saved = uploads.retry(note_id)
        elif store.read(path) is None:
            body = (
                f"# {VERIFICATION_TITLE}\n\nWritten by `agent-memory bootstrap` to prove that saving, reading and "
                f"searching work for project {project} on this machine.\n"
            )
            saved = uploads.save(body.encode(), title=VERIFICATION_TITLE, note_id=note_id, project=project)
        else:
            saved = {"status": "saved"}
        if saved["status"] == "pending":
            return {"id": note_id, "status": "pending"}, saved["message"]
        remote = store.read(path)
        if remote is None or f"id: {note_id}\n".encode() not in remote:
            return {"id": note_id, "status": "failed"}, f"{path} could not be read back from the bucket"
        cache = ProjectCache(bucket, project)
        refresh(store, cache)
        found = search(cache, VERIFICATION_TITLE, limit=1000, kind=None, pending_notes=[])
        if note_id not in {r["id"] for r in found}:
            return {"id": note_id, "status": "failed"}, "search did not find the verification note"
    except StoreError as exc:
        return {"id": note_id, "status": "failed"}, exc.detail
    except AgentMemoryError as exc:
        return {"id": note_id, "status": "failed"}, exc.message
    return {"id": note_id, "status": "verified"}, None
