"""`agent-memory publish-skill`: a skill folder, frozen as a new immutable revision, then published."""

from __future__ import annotations

import argparse

from .. import commands, names
from ..config.context import Context
from ..errors import UsageError
from ..outbox.delivery import retry_one
from ..outbox.kinds import RETRY
from ..skills import publishing
from ..skills.pending import SKILLS
from .parsing import Rendered, with_json
from .render import told_upload


def declare(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory publish-skill DIR [--name NAME] | agent-memory publish-skill --retry REVISION"
    with_json(p)
    p.add_argument("dir", nargs="?", metavar="DIR")
    p.add_argument("--name", help="must equal the name in SKILL.md (default: that name)")
    p.add_argument("--retry", metavar="REVISION", help=f"the same as {RETRY} REVISION")


def run(args: argparse.Namespace, ctx: Context) -> Rendered:
    if bool(args.dir) == bool(args.retry):
        raise UsageError(
            "Give either a skill folder DIR or --retry REVISION.", next_step=commands.line("publish-skill", "DIR")
        )
    if args.retry:  # the older spelling of `pending retry REVISION`
        return told_upload(retry_one([SKILLS], ctx, names.revision(args.retry)))
    return told_upload(publishing.publish(ctx, args.dir, args.name))
