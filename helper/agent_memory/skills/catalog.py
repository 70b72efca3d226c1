"""Discovering published skill revisions and reading their files.

A revision is listed only when its SKILL.md exists. Descriptions come from SKILL.md, which is immutable, so
each one is downloaded once and kept in the cache (`<cache>/<bucket>/skills/index.json`), which also answers
`--offline` searches. They are shown display-safe (`display.safe`), like everything else from the bucket.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import commands, names, paths
from ..config.context import Context
from ..display import safe_tree
from ..errors import AgentMemoryError, ContentRefused, UsageError
from ..fsutil import read_json, scratch_folder, write_json_atomic
from ..memory.cache import cache_not_written
from ..store.base import Freshness, ObjectInfo, OversizedObject, Store, StoreError, oversized
from . import layout

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SkillHit, SkillSearch
    from .shape import FoundFile

INDEX_MAX = 16 << 20  # bytes of the index read at most: thousands of revisions with their descriptions
_REVISION_FILE = re.compile(r"(?s)skills/([^/]+)/([^/]+)/(.+)")
MAX_OBJECTS = 100_000  # files below `skills/` of one bucket: a thousand revisions of the largest skill


def index_file(bucket: str) -> Path:
    """The index of published skill revisions (read at most INDEX_MAX bytes)."""
    return paths.bucket_cache(bucket) / "skills" / "index.json"


def discover(ctx: Context, query: str = "", *, offline: bool = False) -> tuple[SkillSearch, Freshness]:
    """`({"skills": [...]}, how fresh the index is)`: complete revisions matching `query` by name or description,
    newest first."""
    bucket = ctx.bucket
    try:
        cached = read_json(index_file(bucket), INDEX_MAX, {}) or {}
    except (ValueError, OSError):  # damaged or planted: a cache, rebuilt by the next online search
        cached = {}
    valid = isinstance(cached, dict) and all(isinstance(v, str) for v in cached.values())
    index: dict[str, str] = cached if valid and isinstance(cached, dict) else {}
    freshness = Freshness(offline=True)
    if not offline:
        try:
            index, too_large = _refresh_index(ctx.store, bucket, index)
            freshness = Freshness(skipped=too_large)
        except StoreError as exc:
            freshness = Freshness(error=exc)
        except OSError as exc:  # a cache it cannot write (Codex's sandbox): the index as it is, stale, like search
            if (reason := cache_not_written(exc)) is None:
                raise
            freshness = Freshness(error=reason)
    wanted = query.lower()
    found: list[SkillHit] = []
    for key, description in index.items():
        name, revision = key.split("/")
        if wanted in name.lower() or wanted in description.lower():
            found.append(layout.summary(name, revision, description))
    found.sort(key=lambda s: (s["revision"], s["name"]), reverse=True)
    result: SkillSearch = {"skills": found}
    return safe_tree(result), freshness  # descriptions come from outside


def _refresh_index(store: Store, bucket: str, index: dict[str, str]) -> tuple[dict[str, str], list[OversizedObject]]:
    """List the bucket's skills and fetch the SKILL.md of revisions we have not described yet; the index, and the
    SKILL.md files over a skill file's limit, never downloaded (their revisions are not listed)."""
    complete: dict[str, ObjectInfo] = {}
    too_large: list[OversizedObject] = []
    listing = store.list("skills")
    if len(listing) > MAX_OBJECTS:
        raise StoreError(
            "error",
            f"the skills of {store.uri} are {len(listing)} objects, more than the {MAX_OBJECTS} agent-memory reads, "
            "so none was downloaded",
        )
    for info in listing:
        match = _REVISION_FILE.fullmatch(info.path)
        if match and match.group(3) == layout.SKILL_FILE and _valid(match.group(1), match.group(2)):
            if info.size > layout.FILE_MAX:
                too_large.append(oversized(store, info.path, info.size, layout.FILE_MAX))
                continue
            complete[f"{match.group(1)}/{match.group(2)}"] = info
    missing = [info for key, info in complete.items() if key not in index]
    fresh = {key: index[key] for key in complete if key in index}
    if missing:
        with scratch_folder(paths.bucket_cache(bucket) / "skills", ".download-") as tmp:
            store.fetch(missing, tmp)
            for info in missing:
                key = info.path[len("skills/") : -len(layout.SKILL_FILE) - 1]
                try:
                    data = (tmp / info.path).read_bytes()
                    meta = layout.parse_skill_md(data, info.path, "publish a corrected revision of the skill")
                except ContentRefused:
                    continue  # a malformed SKILL.md is not a usable revision: never listed, so never shown
                fresh[key] = meta["description"]
    write_json_atomic(index_file(bucket), fresh)
    return fresh, too_large


def _valid(name: str, revision: str) -> bool:
    try:
        names.skill(name, allow_reserved=True)
        names.revision(revision)
    except (ContentRefused, UsageError):
        return False
    return True


def read_file(ctx: Context, name: str, revision: str, file: str = layout.SKILL_FILE) -> FoundFile:
    """`{"name", "revision", "file", "content" (bytes)}` of one file of a complete revision."""
    names.skill(name, allow_reserved=True)
    names.revision(revision)
    layout.safe_relative_path(
        file, f"{commands.line('read', '--skill', name, '--revision', revision, 'FILE')} (a path that SKILL.md names)"
    )
    bucket, store = ctx.bucket, ctx.store
    prefix = layout.revision_prefix(name, revision)
    try:
        skill_md = store.read(f"{prefix}/{layout.SKILL_FILE}", layout.FILE_MAX)
        if skill_md is None:
            raise layout.not_found(name, revision, bucket)
        content = skill_md if file == layout.SKILL_FILE else store.read(f"{prefix}/{file}", layout.FILE_MAX)
    except StoreError as exc:
        exc.during(f"Could not read {prefix}/{file} from {bucket}")
        raise
    if content is None:
        raise AgentMemoryError(
            f"Revision {revision} of {name} has no file {file}.",
            next_step=f"{commands.line('read', '--skill', name, '--revision', revision)} (SKILL.md lists its files)",
        )
    return {"name": name, "revision": revision, "file": file, "content": content}
