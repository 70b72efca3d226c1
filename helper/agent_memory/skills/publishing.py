"""Publishing a skill revision: freeze a snapshot locally, upload the supporting files, then SKILL.md last.

The snapshot (`<state>/pending-skills/<revision>/`) is the plan: `publish-skill --retry REVISION` finishes an
interrupted publication from it, with the same revision id and bytes, even if the source folder changed.
It is removed only once SKILL.md, and therefore the whole revision, is confirmed in the bucket.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .. import config as config_file
from .. import names
from ..errors import AgentMemoryError
from ..fsutil import write_atomic, write_json_atomic
from ..memory import notes
from ..store import StoreError, landed_anyway, open_store
from . import format as skills


def publish(folder: str, name: str | None = None) -> dict[str, Any]:
    """Validate `folder`, freeze it as a new revision, upload it; the contract's result."""
    bucket = config_file.bucket()
    meta, files = skills.read_folder(Path(folder).expanduser(), name)
    revision = notes.new_id()
    snapshot = _freeze(bucket, meta["name"], revision, files)
    return _upload(snapshot, check_first=False)


def retry(revision: str) -> dict[str, Any]:
    """Finish an interrupted publication from its frozen snapshot."""
    snapshot = skills.pending_root() / names.revision(revision)
    if not (snapshot / "manifest.json").is_file():
        raise AgentMemoryError(
            f"No pending publication {revision} on this machine (it may already be published).",
            next_step="agent-memory status (lists pending publications)",
        )
    return _upload(snapshot, check_first=True)


def _freeze(bucket: str, name: str, revision: str, files: dict[str, bytes]) -> Path:
    root = skills.pending_root()
    staging = root / f".tmp-{revision}"
    for relative, data in files.items():
        write_atomic(staging / "files" / relative, data)
    manifest = {
        "name": name,
        "revision": revision,
        "bucket": bucket,
        "files": sorted(files),
        "queued": notes.utc_now(),
        "attempts": 0,
        "last_error": None,
    }
    write_json_atomic(staging / "manifest.json", manifest)
    final = root / revision
    os.replace(staging, final)  # the snapshot appears complete or not at all
    return final


def _upload(snapshot: Path, *, check_first: bool) -> dict[str, Any]:
    manifest = json.loads((snapshot / "manifest.json").read_text(encoding="utf-8"))
    prefix = skills.revision_prefix(manifest["name"], manifest["revision"])
    files = {relative: (snapshot / "files" / relative).read_bytes() for relative in manifest["files"]}
    skill_md = (f"{prefix}/{skills.SKILL_FILE}", files[skills.SKILL_FILE])
    supporting = [(f"{prefix}/{rel}", data) for rel, data in files.items() if rel != skills.SKILL_FILE]
    store = open_store(manifest["bucket"])  # one time budget for the whole publication
    try:
        if not (check_first and store.holds(*skill_md)):
            if supporting:
                store.put_many(supporting)
            store.put(*skill_md)  # last, once every other file is confirmed: this makes the revision visible
    except StoreError as exc:
        if not landed_anyway(store, exc, *skill_md):
            manifest.update(
                attempts=manifest["attempts"] + 1,
                last_error={"reason": exc.reason, "detail": exc.detail, "at": notes.utc_now()},
            )
            write_json_atomic(snapshot / "manifest.json", manifest)
            return _result(manifest, "pending", exc.detail)
    (snapshot / "manifest.json").unlink()  # first: a half-removed snapshot must not look pending
    shutil.rmtree(snapshot, ignore_errors=True)
    return _result(manifest, "published")


def _result(manifest: dict[str, Any], status: str, detail: str = "") -> dict[str, Any]:
    """The contract's result; a pending one also carries `message` (why, and the retry command)."""
    result = {"name": manifest["name"], "revision": manifest["revision"], "status": status, "files": manifest["files"]}
    if status == "pending":
        result["message"] = (
            f"Not published yet ({detail}): revision {manifest['revision']} is frozen on this machine and "
            f"invisible to others. Run `agent-memory publish-skill --retry {manifest['revision']}` once that is fixed."
        )
    return result
