"""`agent-memory bootstrap`: take a machine from nothing to a verified, working memory.

There is no setup ledger: every run looks at the real bucket, configuration, skill folders and instruction
files, and adds what is missing. So a repeated or interrupted run resumes without duplicating anything.
Input and local writability are checked before anything is created remotely.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

from .. import __version__, agents, commands, names, paths
from ..config import projects, repository
from ..config import settings as config_file
from ..config.context import Context
from ..contents import sha256
from ..errors import AgentMemoryError, ContentRefused, NotSetUp, UsageError
from ..memory import notes, pack, pending, reading, saving
from ..memory.cache import ProjectCache
from ..memory.origin import machine_id
from ..memory.refresh import refresh
from ..memory.search import SETUP, search_project
from ..names import MalformedBucket, folder_path
from ..outbox.delivery import retry_one
from ..outbox.plans import Damaged
from ..skills.install_read import local_changes, read_marker, skill_roots
from ..skills.install_write import holds_revision, install_files, install_revision
from ..skills.layout import skill_files
from ..store.base import BucketMissing, Store, StoreError
from ..store.bucket import hub_user, parse_bucket
from ..store.budget import Budget
from ..store.failures import user_error
from ..sync import settings as sync_settings
from . import agent_files_write, hook_config_write, instructions, on_path, origins, sandbox_consent_write
from . import sandbox_consent_read as sandbox
from .buckets import no_parent
from .command import helper_command

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Bootstrap, Delivered

CORE_SKILL_DIR = Path(__file__).parent.parent / "core_skill"
VERIFICATION_TITLE = notes.SETUP_TITLE
DEFAULT_BUCKET_NAME = "agent-memory"


def bootstrap(
    ctx: Context,
    project: str | None,
    *,
    bucket: str | None = None,
    directory: str | None = None,
    agent: str = "both",
    skill_specs: list[str] | None = None,
    hooks: bool = False,
    sync: bool = False,
    codex_sandbox: bool = False,
    space_revision: str | None = None,
    replace: bool = False,
) -> Bootstrap:
    """Set up this machine; the command's JSON result (its `verification.status` decides the exit code).

    Without `project`, the folder's project is the one it already resolves to on this machine, else the one
    whose claim in the bucket names its repository's origin (`origins`); never a name made up here.
    """
    if project is not None:
        try:
            names.project(project)
        except (UsageError, ContentRefused) as exc:  # the fix is this same command, with a name that can be one
            raise type(exc)(
                exc.message,
                next_step=f"{commands.line('bootstrap', '--project', 'my-project')} (or another name of that kind)",
            ) from None
    root = projects.mappable(directory)
    machine = origins.this_machine()  # what a claim records: refused now if it cannot be one
    again = commands.line("bootstrap", *(["--project", project] if project else []), "--bucket")
    try:
        supplied = parse_bucket(bucket) if bucket else None
    except MalformedBucket as exc:  # the fix is this same command, with the bucket written as it should be
        # the suggestion is written for a shell already (`"file://$HOME/..."`)
        raise UsageError(exc.message, next_step=f"{again} {exc.suggestion}") from None
    except ContentRefused as exc:  # a token given as the bucket: the same command, with the bucket's name
        raise ContentRefused(exc.message, next_step=f"{again} OWNER/NAME") from None
    if supplied and (folder := folder_path(supplied)) is not None and not folder.parent.is_dir():
        raise no_parent(folder, "run the same bootstrap again")
    wanted_skills = [names.skill_spec(spec) for spec in skill_specs or []]
    roots = skill_roots(agent)
    if codex_sandbox and "codex" not in roots:
        raise UsageError("--codex-sandbox is for Codex, but --agent does not include it.", next_step="add --agent both")
    if hooks:  # a hook file we would refuse to edit is refused now, before anything is set up
        hook_config_write.check(agent)
    if codex_sandbox:
        sandbox_consent_write.check(supplied)
    for name in roots:  # an instruction file the block cannot go into is refused now, before anything is set up
        instructions.check(agents.runtime(name).instructions_file())
    _check_writable(
        [paths.config_dir(), paths.state_dir(), paths.cache_dir(), *roots.values()]
        + [agents.runtime(name).instructions_file().parent for name in roots]
    )
    configured = ctx.config.get("bucket")  # here: a damaged configuration stops bootstrap before any change
    found = {"by": "option", "via": None}
    if project is None:
        project, found = _find_project(ctx, root, supplied or configured)
    ctx.use(project=project, directory=root)
    warnings: list[str] = []

    uri, created = _connect(ctx, supplied or configured)
    skill = _install_core_skill(roots, replace, warnings)
    shared = [_install_shared_skill(ctx, uri, name, revision, agent, warnings) for name, revision in wanted_skills]

    helper = helper_command()
    written: list[dict[str, str]] = []
    made: list[str] = []
    backups: list[str] = []
    for name in roots:
        path = agents.runtime(name).instructions_file()
        if not path.exists():
            made.append(str(path))
        edited = instructions.upsert(path, helper, runtime=name)
        if edited["backup"]:
            backups.append(edited["backup"])
        state = "created" if str(path) in made else "updated" if edited["changed"] else "unchanged"
        written.append({"file": str(path), "state": state})
        if warning := agents.runtime(name).instructions_warning(instructions.BEGIN):
            warnings.append(warning)
    if "codex" in roots and (problem := _login_shell_problem(helper)):
        warnings.append(problem)
    installed_hooks = hook_config_write.install(agent) if hooks else []
    consent = sandbox_consent_write.allow(uri) if codex_sandbox else None  # for the bucket this run configures
    if "codex" in roots and consent is None and (unsaved := sandbox.warning(uri)):
        warnings.append(unsaved)
    backups += [h["backup"] for h in installed_hooks if h["backup"]]
    if consent and consent["backup"]:
        backups.append(consent["backup"])
    command = on_path.put_on_path()
    if command and command["warning"]:
        warnings.append(command["warning"])

    with config_file.editing() as config:  # the one write, once everything it records is in place
        previous = config.get("bucket")
        mapped_before = (config.get("projects") or {}).get(str(root))
        config["bucket"] = uri
        projects.add_mapping(config, project, root)
        recorded = config.get("core_skill") or {}
        space_revision = space_revision or recorded.get("space_revision")  # a re-run without the flag keeps it
        config["core_skill"] = {"version": __version__, "space_revision": space_revision}
        instructions.record_created(config, made)
        synced_before = sync_settings.set_in(config, list(roots), True) if sync else {}
        on_path.record_link(config, command)

    ctx.reload()  # the configuration just written
    origin = origins.record_for(ctx, project, root, machine)
    warnings += origins.warnings(origin, _again(project, directory, uri))
    verification, problem = _verify(ctx)
    if problem:
        warnings.append(f"Verification {verification['status']}: {problem}")
    mapping = "unchanged" if mapped_before == project else "mapped" if mapped_before is None else "remapped"
    warnings += agent_files_write.left_alone()  # linked files whose targets cannot be written: told, not an error
    result: Bootstrap = {
        "bucket": uri,
        "bucket_created": created,
        "bucket_was": previous if previous and previous != uri else None,
        "project": project,
        "root": str(root),
        "mapping": {"state": mapping, "was": mapped_before if mapping == "remapped" else None},
        "found": found,
        "origin": origin,
        "agents": list(roots),
        "skill": skill,
        "skills": shared,
        "instructions": written,
        "backups": backups,
        "hooks": {"requested": hooks, "installed": installed_hooks},
        "sync": {
            "requested": sync,
            "enabled": sync_settings.enabled(ctx.config),
            "changed": not all(synced_before.values()),
        },
        "codex_sandbox": consent,
        "command": command,
        "verification": verification,
        "warnings": warnings,
        "changed": False,
    }
    result["changed"] = _changed(result)
    return result


def _changed(result: Bootstrap) -> bool:
    """Whether this run changed anything on the machine (the verification note aside: it is written once)."""
    return bool(
        result["bucket_created"]
        or result["bucket_was"]
        or result["mapping"]["state"] != "unchanged"
        or (result["origin"] and result["origin"]["state"] == "recorded")
        or result["skill"]["installed"]
        or result["skill"]["updated"]
        or any(s["state"] == "installed" for s in result["skills"])
        or any(entry["state"] != "unchanged" for entry in result["instructions"])
        or any(h["changed"] for h in result["hooks"]["installed"])
        or (result["sync"]["requested"] and result["sync"]["changed"])
        or (result["codex_sandbox"] and result["codex_sandbox"]["changed"])
        or (result["command"] and result["command"]["state"] in ("linked", "replaced"))
    )


def _find_project(ctx: Context, root: Path, uri: str | None) -> tuple[str, dict[str, str | None]]:
    """The project of `root` when bootstrap is given none, and how it was found: the one `root` resolves to on
    this machine, else the only project whose claim in the bucket names the origin of `root`'s repository, made
    by a machine of the bucket's history for that project (`origins`), with who made it and when.
    A refusal (UsageError) otherwise, before anything is changed: bootstrap never makes up a name."""
    with contextlib.suppress(NotSetUp):
        mapping = projects.resolve(root, config=ctx.config)
        return mapping["project"], {"by": mapping["found"], "via": mapping["via"]}
    repo = repository.find(root)
    origin = repo.origin() if repo is not None else None
    if origin is None:
        raise UsageError(
            f"{root} is in no git repository with an origin URL, so bootstrap cannot tell which project it is.",
            next_step=f"{commands.line('bootstrap', '--project', 'NAME')} "
            "(a new name, or the project of this folder elsewhere)",
        )
    uri = uri or _default_bucket(ctx.budget)
    store = ctx.store_for(uri)
    try:
        claims = origins.claimants(store, origin)
        claimed = origins.claim(store, origin, claims[0]) if len(claims) == 1 else None
        known = _machines(store, uri, claims[0]) if claimed and claimed["machine"] else set()
    except BucketMissing:
        claims, claimed, known = [], None, set()
    except StoreError as exc:
        exc.during(f"Could not look up, in {uri}, which project claims the repository {origin}")
        raise
    if not claims:
        raise UsageError(
            f"No project in {uri} claims the repository {origin} (bootstrap or project map records it), so "
            "bootstrap cannot tell which project this clone belongs to.",
            next_step=f"{commands.line('bootstrap', '--project', 'NAME')} "
            "(a new name, or the project's name on your other machine)",
        )
    if len(claims) > 1:
        raise UsageError(
            f"Several projects in {uri} claim the repository {origin}: {', '.join(claims)}.",
            next_step=f"{commands.line('bootstrap', '--project', claims[0])} (or another of: {', '.join(claims[1:])})",
        )
    if claimed is None or claimed["machine"] not in known:
        raise origins.unknown_machine(uri, origin, claimed or {"project": claims[0], "machine": None, "time": None})
    return claims[0], {"by": "bucket", "via": origin, "machine": claimed["machine"], "time": claimed["time"]}


def _machines(store: Store, uri: str, project: str) -> set[str]:
    """The machines of the bucket's history for `project` (see `origins`): those its notes name (their `machine`
    field), as a refresh of the project's cache finds them; StoreError if the bucket cannot be read."""
    cache = ProjectCache(uri, project)
    freshness = refresh(store, cache)
    if freshness.error is not None:
        raise freshness.error
    named = cache.search_pack(b"", lambda headers: {pack.fields(header).get("machine") for header in headers})
    return {machine for machine in named if machine}


def _again(project: str, directory: str | None, uri: str) -> str:
    """The bootstrap that records this folder's origin once more (a failed claim)."""
    words = ["agent-memory", "bootstrap", "--project", project, "--bucket", uri]
    return shlex.join(words + (["--dir", directory] if directory else []))


def _login_shell_problem(helper: str) -> str | None:
    """Why the helper command does not run from a login shell, as Codex runs the model's commands (X6); or None."""
    shell = on_path.login_shell()
    try:
        proc = on_path.in_login_shell(f"{helper} --version")
    except OSError as exc:
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
            probe = existing / f".agent-memory-probe-{os.urandom(4).hex()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise AgentMemoryError(
                f"Cannot write to {folder} ({exc.strerror or exc}); nothing was set up.",
                next_step="fix the folder's permissions (or AGENT_MEMORY_HOME, HOME, CODEX_HOME, CLAUDE_CONFIG_DIR)",
            ) from exc


# -- the bucket ---------------------------------------------------------------------------------------------


def _connect(ctx: Context, chosen: str | None) -> tuple[str, bool]:
    """Verify (or, only for a folder store or the default name, create) the bucket: its URI and whether it was
    created now. A bucket that is named is never replaced by another."""
    uri = chosen or _default_bucket(ctx.budget)
    store = ctx.store_for(uri)
    try:
        return uri, store.ensure(create=chosen is None or folder_path(uri) is not None)
    except StoreError as exc:
        exc.during(f"Could not use the bucket {uri}")
        raise


def _default_bucket(budget: Budget) -> str:
    """`<your user>/agent-memory`: the bucket bootstrap uses (and creates) when none is named or configured."""
    try:
        user = hub_user(budget)  # first, so that missing credentials get their own clear message
    except StoreError as exc:
        exc.during("Could not reach the Hugging Face Hub")
        raise
    return f"hf://buckets/{user}/{DEFAULT_BUCKET_NAME}"


# -- skills -------------------------------------------------------------------------------------------------


def core_skill_files() -> dict[str, bytes]:
    """The core memory skill shipped in this package."""
    return {relative: (CORE_SKILL_DIR / relative).read_bytes() for relative in skill_files(CORE_SKILL_DIR)}


def _install_core_skill(roots: dict[str, Path], replace: bool, warnings: list[str]) -> dict[str, list[str]]:
    """The packaged core skill in each agent's folder: `{"installed", "updated", "unchanged", "kept", "backups"}`
    (destinations by what happened to them, and where replaced local edits were backed up)."""
    files = core_skill_files()
    marker = {"name": names.RESERVED_SKILL, "revision": None, "source": "package", "version": __version__}
    result: dict[str, list[str]] = {"installed": [], "updated": [], "unchanged": [], "kept": [], "backups": []}
    for agent, root in roots.items():
        dest = root / names.RESERVED_SKILL
        state, edited = "installed", False
        if dest.exists() or dest.is_symlink():
            changes = local_changes(dest)
            edited = changes is None or any(changes.values())
            if not edited and _installed_files_match(dest, files):
                result["unchanged"].append(str(dest))
                continue
            if edited and not replace:
                warnings.append(
                    f"Kept your modified copy of the core skill in {dest}. "
                    "To replace it with the packaged one (a backup is kept), run bootstrap again with --replace."
                )
                result["kept"].append(str(dest))
                continue
            state = "updated"
        # an unmodified copy is what an earlier package installed: only local edits need a backup
        done = install_files(names.RESERVED_SKILL, files, {agent: root}, marker, replace=True, backup=edited)
        result[state].append(str(dest))
        if done["backup"]:
            result["backups"].append(done["backup"])
    return result


def _installed_files_match(dest: Path, files: dict[str, bytes]) -> bool:
    marker = read_marker(dest) or {}
    return marker.get("files") == {p: sha256(d) for p, d in sorted(files.items())}


def _install_shared_skill(
    ctx: Context, bucket: str, name: str, revision: str, agent: str, warnings: list[str]
) -> dict[str, str]:
    """Install NAME@REVISION from `bucket` where it is not already; never over another folder without consent.
    `{"name", "revision", "state": "installed"|"unchanged"|"left"}`."""
    found = {"name": name, "revision": revision}
    destinations = [root / name for root in skill_roots(agent).values()]
    if any(dest.exists() and not holds_revision(dest, bucket, revision) for dest in destinations):
        warnings.append(
            f"Skill {name} is already installed at another revision (or edited locally), so it was left as it is. "
            f"To replace it: {commands.line('install-skill', name, '--revision', revision, '--replace')}"
        )
        return {**found, "state": "left"}
    done = install_revision(ctx, name, revision, agent=agent, bucket=bucket)
    return {**found, "state": "unchanged" if len(done["unchanged"]) == len(destinations) else "installed"}


# -- verification -------------------------------------------------------------------------------------------


def verification_id(bucket: str, project: str) -> str:
    """The same id on every run for this machine, bucket and project; another machine gets its own."""
    digest = sha256(f"{machine_id()}\n{bucket}\n{project}".encode())[:16]
    return f"{notes.SETUP_ID_PREFIX}{digest}"


def _verify(ctx: Context) -> tuple[dict[str, str | None], str | None]:
    """Save (once), read back from the bucket bypassing the cache, find with search: `({"id", "status"}, why)`.

    Through the operations that `save`, `read --fresh` and `search` run, so that a verified setup is one where
    those commands work, and nothing here duplicates how they work.
    """
    note_id = verification_id(ctx.bucket, ctx.project)
    saved: Delivered | dict[str, str]
    try:
        if pending.pending_copy(note_id) is not None:
            saved = retry_one([pending.NOTES], ctx, note_id)
        else:
            shared, problem = _searched(ctx, note_id)  # from an earlier run: the id is the same every time
            if problem:
                return {"id": note_id, "status": "failed"}, problem
            if shared:
                saved = {"status": "saved"}
            else:
                body = (
                    f"# {VERIFICATION_TITLE}\n\nWritten by `agent-memory bootstrap` to prove that saving, reading "
                    f"and searching work for project {ctx.project} on this machine.\n"
                )
                saved = saving.save(ctx, body.encode(), title=VERIFICATION_TITLE, note_id=note_id)
        if saved["status"] == "pending":
            return {"id": note_id, "status": "pending", "next": saved["next"]}, saved["message"]
        content = reading.read(ctx, note_id, fresh=True)["content"]
        if f"id: {note_id}\n".encode() not in content:
            return {"id": note_id, "status": "failed"}, f"the bucket does not hold note {note_id} as it was saved"
        shared, problem = _searched(ctx, note_id)
        if not shared:
            return {"id": note_id, "status": "failed"}, problem or "search did not find the verification note"
    except Damaged as exc:
        return {"id": note_id, "status": "failed"}, str(exc)
    except StoreError as exc:
        return {"id": note_id, "status": "failed"}, user_error(exc).message
    except AgentMemoryError as exc:
        return {"id": note_id, "status": "failed"}, exc.message
    return {"id": note_id, "status": "verified"}, None


def _searched(ctx: Context, note_id: str) -> tuple[bool, str | None]:
    """Whether `search`, refreshed from the bucket, finds the note as shared; else why the bucket could not say."""
    found, freshness = search_project(ctx, VERIFICATION_TITLE, limit=1000, kind=SETUP)
    if freshness.error is not None:
        return False, f"search could not refresh from the bucket ({freshness.error.detail})"
    return note_id in {r["id"] for r in found["results"] if not r["pending"]}, None
