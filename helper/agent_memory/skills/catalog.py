"""Discovering published skill revisions and reading their files.

A revision is listed only when its SKILL.md exists. Descriptions come from SKILL.md, which is immutable, so
each one is downloaded once and kept in the cache (`<cache>/<bucket>/skills/index.json`), which also answers
`--offline` searches. They are shown display-safe (`display.safe`), like everything else from the bucket.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import config as config_file
from .. import names, paths
from ..display import safe_tree
from ..errors import AgentMemoryError, ContentRefused, UsageError
from ..fsutil import read_json, write_json_atomic
from ..store import ObjectInfo, StoreError, open_store, user_error
from . import layout

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

_REVISION_FILE = re.compile(r"skills/([^/]+)/([^/]+)/(.+)", re.DOTALL)


def _index_file(bucket: str) -> Path:
    return paths.bucket_cache(bucket) / "skills" / "index.json"


def discover(query: str = "", *, offline: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """`({"skills": [...]}, sync)`: complete revisions matching `query` by name or description, newest first."""
    bucket = config_file.bucket()
    index: dict[str, str] = read_json(_index_file(bucket), {}) or {}
    if offline:
        sync = {"status": "stale", "reason": "offline", "detail": "--offline: the bucket was not consulted"}
    else:
        try:
            index = _refresh_index(bucket, index)
            sync = {"status": "fresh", "reason": None, "detail": None}
        except StoreError as exc:
            sync = {"status": "stale", "reason": exc.reason, "detail": exc.detail}
    wanted = query.lower()
    found = []
    for key, description in index.items():
        name, revision = key.split("/")
        if wanted in name.lower() or wanted in description.lower():
            found.append(layout.summary(name, revision, description))
    found.sort(key=lambda s: (s["revision"], s["name"]), reverse=True)
    return safe_tree({"skills": found}), safe_tree(sync)  # descriptions and store errors come from outside


def _refresh_index(bucket: str, index: dict[str, str]) -> dict[str, str]:
    """List the bucket's skills and fetch the SKILL.md of revisions we have not described yet."""
    store = open_store(bucket)
    complete: dict[str, ObjectInfo] = {}
    for info in store.list("skills"):
        match = _REVISION_FILE.fullmatch(info.path)
        if match and match.group(3) == layout.SKILL_FILE and _valid(match.group(1), match.group(2)):
            complete[f"{match.group(1)}/{match.group(2)}"] = info
    missing = [info for key, info in complete.items() if key not in index]
    fresh = {key: index[key] for key in complete if key in index}
    if missing:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="agent-memory-skills-") as tmp:
            store.fetch(missing, Path(tmp))
            for info in missing:
                key = info.path[len("skills/") : -len(layout.SKILL_FILE) - 1]
                try:
                    data = (Path(tmp) / info.path).read_bytes()
                    meta = layout.parse_skill_md(data, info.path, "publish a corrected revision of the skill")
                except ContentRefused:
                    continue  # a malformed SKILL.md is not a usable revision: never listed, so never shown
                fresh[key] = meta["description"]
    write_json_atomic(_index_file(bucket), fresh)
    return fresh


def _valid(name: str, revision: str) -> bool:
    try:
        names.skill(name, allow_reserved=True)
        names.revision(revision)
    except (ContentRefused, UsageError):
        return False
    return True


def read_file(name: str, revision: str, file: str = layout.SKILL_FILE) -> dict[str, Any]:
    """`{"name", "revision", "file", "content" (bytes)}` of one file of a complete revision."""
    names.skill(name, allow_reserved=True)
    names.revision(revision)
    layout.safe_relative_path(
        file, f"agent-memory read --skill {name} --revision {revision} FILE (a path that SKILL.md names)"
    )
    bucket = config_file.bucket()
    prefix = layout.revision_prefix(name, revision)
    store = open_store(bucket)
    try:
        skill_md = store.read(f"{prefix}/{layout.SKILL_FILE}")
        if skill_md is None:
            raise layout.not_found(name, revision, bucket)
        content = skill_md if file == layout.SKILL_FILE else store.read(f"{prefix}/{file}")
    except StoreError as exc:
        raise user_error(
            exc,
            f"Could not read {prefix}/{file} from {bucket}",
            "agent-memory status (and check the network or credentials)",
        ) from exc
    if content is None:
        raise AgentMemoryError(
            f"Revision {revision} of {name} has no file {file}.",
            next_step=f"agent-memory read --skill {name} --revision {revision} (SKILL.md lists its files)",
        )
    return {"name": name, "revision": revision, "file": file, "content": content}
