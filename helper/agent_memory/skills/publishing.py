"""Publishing a skill revision: check it, freeze it in the outbox, upload the supporting files, SKILL.md last.

The frozen plan is what `publish-skill --retry REVISION` finishes, with the same revision id and bytes, even if
the source folder changed meanwhile. Nothing leaves the machine before the secret guard has read every file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import config as config_file
from .. import guard, names, outbox
from ..budget import Budget
from ..clock import new_id
from ..errors import AgentMemoryError, ContentRefused
from ..store import check_private
from . import layout

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any


def publish(folder: str, name: str | None = None) -> dict[str, Any]:
    """Validate `folder`, freeze it as a new revision, upload it; the contract's result."""
    bucket = config_file.bucket()
    meta, files, executable = layout.read_folder(Path(folder).expanduser(), name)
    check_secrets(files)
    check_private(bucket)  # a refused folder store must not leave a revision waiting to be uploaded later
    revision = new_id()
    prefix = layout.revision_prefix(meta["name"], revision)
    objects = [(f"{prefix}/{rel}", data) for rel, data in sorted(files.items()) if rel != layout.SKILL_FILE]
    if executable:
        modes = {"executable": sorted(executable)}
        objects.append((layout.modes_path(meta["name"], revision), (json.dumps(modes) + "\n").encode()))
    objects.append((f"{prefix}/{layout.SKILL_FILE}", files[layout.SKILL_FILE]))  # last: it makes the revision visible
    op = outbox.add("skill", revision, bucket, objects, {"name": meta["name"], "files": sorted(files)})
    return _deliver(op, revision, check_first=False)


def retry(revision: str) -> dict[str, Any]:
    """Finish an interrupted publication from its frozen plan."""
    names.revision(revision)
    result = _deliver(f"skill-{revision}", revision, check_first=True)
    if result is None:
        raise AgentMemoryError(
            f"No pending publication {revision} on this machine (it may have been published long ago).",
            next_step="agent-memory search --skills (lists published revisions)",
        )
    return result


def _deliver(op: str, revision: str, *, check_first: bool) -> dict[str, Any] | None:
    try:
        return outbox.deliver(op, Budget(), check_first=check_first)
    except outbox.Damaged as exc:
        raise outbox.damaged_error(revision, str(exc)) from exc


def check_secrets(files: dict[str, bytes]) -> None:
    """ContentRefused naming the file, line and rule (never the value) if a file, or its name, holds a credential.

    Every file is read, whatever its encoding: a credential in a file that is not UTF-8 leaks all the same.
    """
    problems = []
    for relative, data in sorted(files.items()):
        shown = guard.redact(relative)
        problems += [f"the file name {shown}: {f.label} (rule {f.rule})" for f in guard.scan(relative)]
        problems += [f"{shown} line {f.line}: {f.label} (rule {f.rule})" for f in guard.scan_bytes(data)]
    if problems:
        raise ContentRefused(
            "The skill looks like it contains a credential, so nothing was published: " + "; ".join(problems) + ".",
            next_step="remove the secret from those files (say where it is kept instead), then publish again",
        )
