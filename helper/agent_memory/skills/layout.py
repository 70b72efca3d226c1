"""Skills in the bucket: the SKILL.md format, validation, publishing immutable revisions, discovery, reading.

Layout: `skills/<name>/<revision>/SKILL.md` plus supporting files under the same revision folder. A revision
is visible only once its SKILL.md exists, and SKILL.md is uploaded last: an interrupted publication is never
listed. Nothing is ever modified in place; an update is a new revision. There is no "latest" pointer.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import unicodedata
from pathlib import Path

from .. import commands, names
from ..errors import AgentMemoryError, ContentRefused, UsageError
from ..memory import notes

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import SkillHit

SKILL_FILE = "SKILL.md"
MARKER = ".agent-memory-skill.json"
DESCRIPTION_MAX = 1024
FILE_MAX = 5 * 1024 * 1024
TOTAL_MAX = 50 * 1024 * 1024
FILES_MAX = 1000

_SEGMENT = re.compile(r"[^/\\\x00-\x1f\x7f]+")


def skill_files(folder: Path) -> dict[str, os.stat_result]:
    """Every entry below a skill folder that is not itself a folder, by its path relative to `folder` (`/` between
    names), sorted, with its `lstat`. The one rule for every caller (publish, install, status, uninstall): a link is
    listed as what it is, never followed nor entered; the install marker at the top is ours, not the skill's, and is
    left out (a file of that name further down is the skill's like any other). One `scandir` per folder: `status`
    runs this on every installed skill."""
    found: dict[str, os.stat_result] = {}
    folders = [("", os.fspath(folder))]
    while folders:
        prefix, path = folders.pop()
        with os.scandir(path) as listing:
            for entry in listing:
                relative = prefix + entry.name
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    folders.append((relative + "/", entry.path))
                elif relative != MARKER:
                    found[relative] = info
    return dict(sorted(found.items()))


def safe_relative_path(path: str, next_step: str) -> str:
    """`path` if it is a plain relative path inside a skill folder, else ContentRefused (with `next_step`)."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or "\\" in path
        or re.match(r"[A-Za-z]:", path)
        or any(part in ("", ".", "..") or not _SEGMENT.fullmatch(part) for part in parts)
    ):
        raise ContentRefused(f"Unsafe path {path!r} in the skill: it could escape its folder.", next_step=next_step)
    return path


def check_collisions(paths_: list[str], next_step: str) -> None:
    """ContentRefused (with `next_step`) if two paths would be one file on a case-insensitive or normalizing disk."""
    seen: dict[str, str] = {}
    for path in paths_:
        key = unicodedata.normalize("NFC", path).casefold()
        if key in seen:
            raise ContentRefused(f"The paths {seen[key]!r} and {path!r} collide once normalized.", next_step=next_step)
        seen[key] = path


def parse_skill_md(data: bytes, where: str, next_step: str) -> dict[str, str]:
    """`{"name", "description"}` from SKILL.md's frontmatter, or ContentRefused saying what is wrong."""
    text = data.decode("utf-8", errors="replace")
    if not text.startswith("---"):
        raise ContentRefused(
            f"{where}: SKILL.md must start with YAML frontmatter between --- lines.", next_step=next_step
        )
    meta, _body = notes.parse(data)
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not isinstance(description, str) or not description.strip():
        raise ContentRefused(
            f"{where}: SKILL.md frontmatter needs a `name` and a non-empty `description`.", next_step=next_step
        )
    if len(description) > DESCRIPTION_MAX:
        raise ContentRefused(
            f"{where}: the description has {len(description)} characters; at most {DESCRIPTION_MAX}.",
            next_step=next_step,
        )
    return {"name": name, "description": " ".join(description.split())}


def read_folder(folder: Path, name: str | None = None) -> tuple[dict[str, str], dict[str, bytes], list[str]]:
    """Validate a skill folder; its frontmatter, every file (relative path -> bytes), and the executable ones."""
    if not folder.is_dir():  # an argument that names nothing usable: a usage error, not refused content
        raise UsageError(
            f"{folder} is not a folder." if folder.exists() else f"There is no folder {folder}.",
            next_step=f"{commands.line('publish-skill', 'DIR')} (the folder that holds SKILL.md)",
        )
    again = f"then {commands.line('publish-skill', str(folder))}"
    files: dict[str, bytes] = {}
    executable = []
    total = 0
    for relative, info in skill_files(folder).items():
        if stat.S_ISLNK(info.st_mode):
            raise ContentRefused(
                f"{relative} is a symbolic link: skills hold regular files only.",
                next_step=f"put a copy of the file that {relative} points to in its place, {again}",
            )
        if not stat.S_ISREG(info.st_mode):
            raise ContentRefused(f"{relative} is not a regular file.", next_step=f"remove {relative}, {again}")
        safe_relative_path(relative, f"rename {relative} (plain names, no control characters), {again}")
        if info.st_size > FILE_MAX:
            raise ContentRefused(
                f"{relative} is {info.st_size} bytes; a skill file may have at most {FILE_MAX}.",
                next_step=f"shrink or remove {relative}, {again}",
            )
        total += info.st_size
        files[relative] = (folder / relative).read_bytes()
        if info.st_mode & 0o111:
            executable.append(relative)
    if len(files) > FILES_MAX or total > TOTAL_MAX:
        raise ContentRefused(
            f"The skill has {len(files)} files and {total} bytes; "
            f"the limits are {FILES_MAX} files and {TOTAL_MAX} bytes.",
            next_step=f"move what the skill does not need out of the folder, {again}",
        )
    check_collisions(list(files), f"rename one of the two files, {again}")
    if SKILL_FILE not in files:
        raise ContentRefused(
            f"{folder} has no {SKILL_FILE}.",
            next_step=f"write {SKILL_FILE} (frontmatter with name and description) in it, {again}",
        )
    meta = parse_skill_md(files[SKILL_FILE], str(folder / SKILL_FILE), f"fix the frontmatter of {SKILL_FILE}, {again}")
    try:
        names.skill(meta["name"])
    except UsageError as exc:  # a name read from SKILL.md is content, not an argument
        raise ContentRefused(exc.message, next_step=f"change `name` in {SKILL_FILE} (e.g. my-skill), {again}") from exc
    if name is not None and names.skill(name) != meta["name"]:
        raise ContentRefused(
            f"--name {name!r} differs from the name in SKILL.md ({meta['name']!r}).",
            next_step=f"{commands.line('publish-skill', str(folder), '--name', meta['name'])} (or leave out --name)",
        )
    return meta, files, executable


def _quote(path: Path) -> str:

    return shlex.quote(str(path))


def revision_prefix(name: str, revision: str) -> str:
    """The bucket folder of one revision."""
    return f"skills/{name}/{revision}"


def modes_path(name: str, revision: str) -> str:
    """The object beside a revision's folder that lists its executable files (the bucket keeps no file modes).

    Outside the folder, so that `skills/<name>/<revision>/` holds exactly the skill's own files. Only written
    when the revision has executable files; uploaded before SKILL.md, so a complete revision always has it then.
    """
    return f"skills/{name}/{revision}.modes.json"


def published_at(revision: str) -> str | None:
    """The publication time encoded in a revision id, as UTC ISO 8601."""
    match = re.match(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-", revision)
    if not match:
        return None
    y, mo, d, h, mi, s = match.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}Z"


def not_found(name: str, revision: str, bucket: str) -> AgentMemoryError:
    """The error for a revision that is absent or incomplete (not found: exit 1, nothing was refused)."""
    return AgentMemoryError(
        f"No complete revision {revision} of skill {name} in {bucket} (missing, or its publication never finished).",
        next_step=commands.line("search", "--skills", name),
    )


def summary(name: str, revision: str, description: str) -> SkillHit:
    """One entry of `search --skills`."""
    return {"name": name, "revision": revision, "description": description, "published": published_at(revision)}
