"""Which projects of a bucket claim a repository, and who claimed it, so that a clone on another machine finds its
project and can say whose word it follows.

`project map` and `bootstrap` record, for the mapped folder's repository, a claim: one small object per project,
origin and time, `origins/<key>/<project>/<time>-<nonce>-claim.json`, where the key is a hash of the normalised
origin URL (see `config.repository`). It holds the origin, the project, the machine that wrote it and when,
never the URL as written (which may carry a user name or a token), and the guard checks it before it is
written. `project unmap --origin` writes a withdrawal beside it (`…-withdrawal.json`). Objects are written once
and never changed (append-only, like every object): for each project, its newest claim or withdrawal (by the
time in its name; one more than a day ahead of this machine's clock is ignored, as a note's would be) is what
stands. Finding the claimants of an origin is one listing of its folder, whatever the size of the bucket, and
one read of the claim that is followed.

A claim written before claims said who made them (`origins/<key>/<project>.json`) is still read: as the oldest
claim of its project, by an unknown machine.

A claim is followed by bootstrap only if it names a machine of this bucket's history for its project: a machine
named (the `machine` field) by a note of that project, as the bucket holds them (see `setup.bootstrap`). A
machine that set the project up has one (bootstrap's verification note). A planted claim, or one whose machine
never wrote to that project, is refused, and bootstrap asks for `--project`.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .. import commands, guard, names
from ..config import repository
from ..config.context import Context
from ..contents import sha256
from ..display import safe
from ..errors import UsageError
from ..memory.notes import FUTURE_SLACK, NAME_MAX
from ..memory.origin import MACHINE_VARIABLE, machine_name
from ..store.base import Store, StoreError

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import OriginClaim
    from .shape import OriginEvent

PREFIX = "origins"
CLAIM_MAX = 4096  # bytes: a claim is about 200; anything larger in its place is not one we wrote
CLAIM, WITHDRAWAL = "claim", "withdrawal"
# compiled on first use (re keeps them): only a command that reads or writes claims pays for them
_LEGACY = r"[^/]+/[0-9a-f]{32}/([^/]+)\.json"
_EVENT = r"[^/]+/[0-9a-f]{32}/([^/]+)/([0-9]{8}T[0-9]{12}Z)-[0-9a-f]{8}-(claim|withdrawal)\.json"
_STAMP = "%Y%m%dT%H%M%S%fZ"


def folder(origin: str) -> str:
    """The bucket folder holding the claims of `origin` (a normalised URL)."""
    return f"{PREFIX}/{sha256(origin.encode('utf-8'))[:32]}"


def this_machine() -> str | None:
    """The machine name a claim written here records (`memory.origin.machine_name`); UsageError if
    AGENT_MEMORY_MACHINE cannot be one, ContentRefused (which never shows it) if it looks like a credential."""
    name = machine_name()
    fix = f"set {MACHINE_VARIABLE} to a plain name (like laptop), or unset it"
    return None if name is None else names.given(name, f"machine name ({MACHINE_VARIABLE})", fix)


def _newest(store: Store, origin: str) -> dict[str, OriginEvent]:
    """For each project with a claim or withdrawal of `origin`, the newest one: `{project: {"action", "stamp",
    "path", "size"}}`. Entries that are neither (planted, damaged, not a project name) are ignored."""
    newest: dict[str, OriginEvent] = {}
    ahead = (datetime.now(timezone.utc) + timedelta(seconds=FUTURE_SLACK)).strftime(_STAMP)
    for info in store.list(folder(origin)):
        if match := re.fullmatch(_EVENT, info.path):
            project, stamp, action = match.groups()
        elif match := re.fullmatch(_LEGACY, info.path):
            project, stamp, action = match.group(1), "", CLAIM  # before claims had times: the oldest
        else:
            continue
        if not names.is_project(project) or stamp > ahead:
            continue  # not a project name, or a time to come that would outrank every real claim: not ours
        event: OriginEvent = {"action": action, "stamp": stamp, "path": info.path, "size": info.size}
        if project not in newest or (stamp, info.path) > (str(newest[project]["stamp"]), str(newest[project]["path"])):
            newest[project] = event
    return newest


def claimants(store: Store, origin: str) -> list[str]:
    """The projects that claim `origin` now (their newest event is a claim), sorted."""
    return sorted(project for project, event in _newest(store, origin).items() if event["action"] == CLAIM)


def claim(store: Store, origin: str, project: str) -> dict[str, str | None]:
    """Who made the standing claim of `project` on `origin`: `{"project", "machine", "time"}`, machine and time
    None when it does not say (a claim from before claims said, or one that is not what we write)."""
    return _who(store, origin, project, _newest(store, origin).get(project))


def _who(store: Store, origin: str, project: str, event: OriginEvent | None) -> dict[str, str | None]:
    """`claim` of the newest `event` of `project`, as `_newest` lists it (its object read, within CLAIM_MAX)."""
    found: dict[str, str | None] = {"project": project, "machine": None, "time": None}
    if event is None or event["action"] != CLAIM or not event["stamp"] or int(event["size"]) > CLAIM_MAX:
        return found
    written = _parsed(store.read(str(event["path"])) or b"")
    if written.get("origin") != origin or written.get("project") != project or written.get("action") != CLAIM:
        return found
    time = written.get("time")
    if not isinstance(time, str) or _stamp_of(time) != str(event["stamp"])[:15]:
        return found
    machine = written.get("machine")
    if isinstance(machine, str) and 0 < len(machine) <= NAME_MAX and safe(machine) == machine:
        found["machine"] = machine
    found["time"] = time
    return found


def _parsed(data: bytes) -> dict[str, object]:
    try:
        value = json.loads(data[: CLAIM_MAX + 1])
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _stamp_of(time: str) -> str | None:
    """`2026-12-03T00:10:00Z` as the start of an object name's stamp (`20261203T001000`), None if it is no time."""
    try:
        return datetime.strptime(time, "%Y-%m-%dT%H:%M:%SZ").strftime("%Y%m%dT%H%M%S")
    except ValueError:
        return None


def _write(store: Store, project: str, origin: str, action: str, machine: str | None) -> OriginClaim | None:
    """Write one claim or withdrawal; None if written, else the refusal (the guard found a credential in it)."""
    now = datetime.now(timezone.utc)
    time = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    event = {"action": action, "machine": machine, "origin": origin, "project": project, "time": time}
    data = json.dumps(event, sort_keys=True).encode("utf-8") + b"\n"
    if found := guard.scan(data.decode("utf-8")):
        rules = ", ".join(f"{finding.label} (rule {finding.rule})" for finding in found)
        return {"origin": guard.redact(origin), "state": "refused", "others": [], "error": rules}
    store.put(f"{folder(origin)}/{project}/{now.strftime(_STAMP)}-{os.urandom(4).hex()}-{action}.json", data)
    return None


def record(store: Store, project: str, origin: str, machine: str | None) -> OriginClaim:
    """Claim `origin` for `project` unless its standing claim is already this machine's: `{"origin", "state",
    "others"}`, where state is "recorded", "unchanged" or "refused" (with `error`: a credential in the claim)
    and `others` are the other projects that claim the same origin."""
    newest = _newest(store, origin)
    others = sorted(name for name, event in newest.items() if event["action"] == CLAIM and name != project)
    if machine is not None and _who(store, origin, project, newest.get(project))["machine"] == machine:
        return {"origin": origin, "state": "unchanged", "others": others}
    refused = _write(store, project, origin, CLAIM, machine)
    return refused or {"origin": origin, "state": "recorded", "others": others}


def withdraw(store: Store, project: str, origin: str, machine: str | None) -> OriginClaim:
    """Withdraw the claim of `project` on `origin`: `{"origin", "state"}`, state "withdrawn", "unchanged" (it did
    not claim it) or "refused" (with `error`)."""
    if project not in claimants(store, origin):
        return {"origin": origin, "state": "unchanged"}
    refused = _write(store, project, origin, WITHDRAWAL, machine)
    return refused or {"origin": origin, "state": "withdrawn"}


def origin_of(root: Path) -> str | None:
    """The normalised origin URL of the repository holding `root`, None if it is in none (or it has no origin)."""
    repo = repository.find(root)
    return repo.origin() if repo is not None else None


def record_for(ctx: Context, project: str, root: Path, machine: str | None) -> OriginClaim | None:
    """Claim, in the configured bucket, the origin of the repository holding `root` for `project`; None when
    `root` is in no repository with an origin, or no bucket is configured yet (bootstrap records it then).
    A failure is reported in the result (`state` "failed", `error`), never raised: the mapping stands."""
    origin = origin_of(root)
    bucket = ctx.config.get("bucket")
    if origin is None or not bucket:
        return None
    try:
        return record(ctx.store_for(bucket), project, origin, machine)
    except StoreError as exc:
        return {"origin": origin, "state": "failed", "others": [], "error": guard.redact(f"{exc.reason}: {exc.detail}")}


def warnings(recorded: OriginClaim | None, command: str) -> list[str]:
    """What a user should know after a claim: it failed (and how to retry it), was refused, or other projects
    claim it too."""
    if recorded is None:
        return []
    if recorded["state"] == "failed":
        return [
            f"The repository's origin {recorded['origin']} could not be recorded in the bucket "
            f"({recorded['error']}), so a bootstrap without --project in another clone will not find this project "
            f"yet. To record it, run again once the bucket can be reached: {command}"
        ]
    if recorded["state"] == "refused":
        return [
            f"The claim of the repository's origin {recorded['origin']} was not written to the bucket: it looks like "
            f"it holds a credential ({recorded['error']}). A clone elsewhere needs bootstrap --project."
        ]
    if recorded["others"]:
        return [
            f"Other projects also claim the origin {recorded['origin']}: {', '.join(recorded['others'])}. "
            "A bootstrap without --project in another clone will refuse to choose; give it --project."
        ]
    return []


def unknown_machine(uri: str, origin: str, claimed: dict[str, str | None]) -> UsageError:
    """Bootstrap's refusal of a claim that names no machine of the bucket's history for its project."""
    project = str(claimed["project"])
    who = (
        f"by machine {claimed['machine']} on {claimed['time']}, which no note of project {project} names"
        if claimed["machine"]
        else "by an unknown machine (a claim from an earlier version, which does not say; "
        f"{commands.line('project', 'map', project)} on the machine that uses it writes one that does)"
    )
    return UsageError(
        f"In {uri}, the repository {origin} is claimed by project {project}, {who}. Bootstrap follows a claim only "
        "when its machine has written notes of that project (the bucket's history), so it did not choose.",
        next_step=f"{commands.line('bootstrap', '--project', project)} (if that is this clone's project)",
    )
