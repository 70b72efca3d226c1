"""Publishing a skill revision: check it, freeze it in the outbox, upload the supporting files, SKILL.md last.

The frozen plan is what `agent-memory pending retry REVISION` finishes, with the same revision id and bytes, even if
the source folder changed meanwhile. Nothing leaves the machine before the secret guard has read every file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import commands, guard
from ..clock import new_id
from ..config.context import Context
from ..errors import AgentMemoryError, ContentRefused
from ..outbox import writing
from ..outbox.delivery import deliver
from ..store.bucket import check_private
from . import layout
from .pending import SKILLS

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Publication


def publish(ctx: Context, folder: str, name: str | None = None) -> Publication:
    """Validate `folder`, freeze it as a new revision, upload it; the contract's result."""
    bucket = ctx.bucket
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
    writing.create(SKILLS.name, revision, bucket, objects, {"name": meta["name"], "files": sorted(files)})
    outcome = deliver(SKILLS, revision, ctx, check_first=False)
    if outcome is None:  # discarded by hand in the instant between the two calls
        raise AgentMemoryError(
            f"Revision {revision} was discarded from the outbox before it was uploaded.",
            next_step=commands.line("publish-skill", folder),
        )
    return SKILLS.result(outcome)


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
