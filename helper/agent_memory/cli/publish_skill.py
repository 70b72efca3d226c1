"""The skill commands: publish-skill, install-skill, and the skill modes of search and read."""

from __future__ import annotations

import argparse

from .. import names, outbox
from ..context import Context
from ..errors import OK, UsageError
from ..skills import publishing
from ..skills.catalog import discover, read_file
from ..skills.installing import install_revision
from ..skills.skill_uploads import SKILLS
from .common import Rendered, agent_option, told_sync, told_upload, with_json


def declare_publish_skill(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory publish-skill DIR [--name NAME] | agent-memory publish-skill --retry REVISION"
    with_json(p)
    p.add_argument("dir", nargs="?", metavar="DIR")
    p.add_argument("--name", help="must equal the name in SKILL.md (default: that name)")
    p.add_argument("--retry", metavar="REVISION", help=f"the same as {outbox.RETRY} REVISION")
    p.set_defaults(handler=publish_skill)


def declare_install_skill(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--revision", required=True, metavar="REV")
    agent_option(p)
    p.add_argument("--replace", action="store_true", help="replace an installed folder (a backup is kept)")
    p.set_defaults(handler=install_skill)


def search_skills(args: argparse.Namespace) -> Rendered:
    result, freshness = discover(Context(), args.query, offline=args.offline)
    result["skills"] = result["skills"][: args.limit]
    lines = [f"{s['name']}  {s['revision']}  {s['description']}" for s in result["skills"]]
    sync, code = told_sync(freshness)
    del sync["skipped"]  # the skills' sync has never had it: a revision with an unsafe SKILL.md is just not listed
    del sync["kind"]  # the index of skills is always listed whole
    return result, "\n".join(lines) or "No matching skills.", code


def read_skill(args: argparse.Namespace) -> Rendered:
    if not (args.skill and args.revision):
        raise UsageError(
            "Reading a skill needs both --skill NAME and --revision REV.",
            next_step="agent-memory read --skill NAME --revision REV (agent-memory search --skills lists both)",
        )
    found = read_file(Context(), args.skill, args.revision, args.target or "SKILL.md")
    content = found["content"]
    return {**found, "content": content.decode("utf-8", errors="replace")}, content, OK


def publish_skill(args: argparse.Namespace) -> Rendered:
    if bool(args.dir) == bool(args.retry):
        raise UsageError(
            "Give either a skill folder DIR or --retry REVISION.", next_step="agent-memory publish-skill DIR"
        )
    ctx = Context()
    if args.retry:  # the older spelling of `pending retry REVISION`
        return told_upload(outbox.retry([SKILLS], ctx, names.revision(args.retry)))
    return told_upload(publishing.publish(ctx, args.dir, args.name))


def install_skill(args: argparse.Namespace) -> Rendered:
    result = install_revision(Context(), args.name, args.revision, agent=args.agent, replace=args.replace)
    skill = f"{result['name']} revision {result['revision']}"
    lines = [
        f"Already installed, unchanged: {skill} in {path}"
        if path in result["unchanged"]
        else f"{'Replaced' if result['backup'] else 'Installed'}: {skill} in {path}"
        for path in result["installed"]
    ]
    if result["backup"]:
        lines.append(f"The previous folder is backed up in {result['backup']}")
    return result, "\n".join(lines), OK
