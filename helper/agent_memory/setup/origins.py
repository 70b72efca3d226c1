"""Which projects of a bucket claim a repository, so that a clone on another machine finds its project.

`project map` and `bootstrap` record, for the mapped folder's repository, one small object per project and
origin: `origins/<key>/<project>.json`, where the key is a hash of the normalised origin URL (see
`config.repository`). A claim is written once and never changed (append-only, like every object), and finding
the claimants of an origin is one listing of its folder, whatever the size of the bucket. The object holds the
origin and the project, never the URL as written (which may carry a user name or a token).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import names
from ..config import repository
from ..config.context import Context
from ..contents import sha256
from ..errors import UsageError
from ..guard import redact
from ..store.base import Store, StoreError

PREFIX = "origins"
_CLAIM = r"[^/]+/[0-9a-f]{32}/([^/]+)\.json"  # compiled on first use: every command imports this module


def folder(origin: str) -> str:
    """The bucket folder holding the claims of `origin` (a normalised URL)."""
    return f"{PREFIX}/{sha256(origin.encode('utf-8'))[:32]}"


def claimants(store: Store, origin: str) -> list[str]:
    """The projects that claim `origin`, sorted; entries that are not claims (planted, damaged) are ignored."""
    found = set()
    for info in store.list(folder(origin)):
        match = re.fullmatch(_CLAIM, info.path)
        if match:
            try:
                found.add(names.project(match.group(1)))
            except UsageError:
                continue  # not a project name: not a claim we wrote
    return sorted(found)


def record(store: Store, project: str, origin: str) -> dict[str, object]:
    """Claim `origin` for `project` unless it is claimed already: `{"origin", "state", "others"}`, where state is
    "recorded" or "unchanged" and `others` are the other projects that claim the same origin."""
    already = claimants(store, origin)
    others = [name for name in already if name != project]
    if project in already:
        return {"origin": origin, "state": "unchanged", "others": others}
    claim = json.dumps({"origin": origin, "project": project}, sort_keys=True).encode("utf-8") + b"\n"
    store.put(f"{folder(origin)}/{project}.json", claim)  # the same bytes for every machine: a repeat is harmless
    return {"origin": origin, "state": "recorded", "others": others}


def record_for(ctx: Context, project: str, root: Path) -> dict[str, object] | None:
    """Claim, in the configured bucket, the origin of the repository holding `root` for `project`; None when
    `root` is in no repository with an origin, or no bucket is configured yet (bootstrap records it then).
    A failure is reported in the result (`state` "failed", `error`), never raised: the mapping stands."""
    repo = repository.find(root)
    origin = repo.origin() if repo is not None else None
    bucket = ctx.config.get("bucket")
    if origin is None or not bucket:
        return None
    try:
        return record(ctx.store_for(bucket), project, origin)
    except StoreError as exc:
        return {"origin": origin, "state": "failed", "others": [], "error": redact(f"{exc.reason}: {exc.detail}")}


def warnings(recorded: dict[str, object] | None, command: str) -> list[str]:
    """What a user should know after a claim: it failed (and how to retry it), or other projects claim it too."""
    if recorded is None:
        return []
    if recorded["state"] == "failed":
        return [
            f"The repository's origin {recorded['origin']} could not be recorded in the bucket "
            f"({recorded['error']}), so a bootstrap without --project in another clone will not find this project "
            f"yet. To record it, run again once the bucket can be reached: {command}"
        ]
    if recorded["others"]:
        return [
            f"Other projects also claim the origin {recorded['origin']}: {', '.join(recorded['others'])}. "
            "A bootstrap without --project in another clone will refuse to choose; give it --project."
        ]
    return []
