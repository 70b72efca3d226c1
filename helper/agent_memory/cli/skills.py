"""The skill commands: publish-skill, install-skill, and the skill modes of search and read."""

from __future__ import annotations

from ..errors import OK, PENDING, UsageError
from .common import agent_option, notice, sync_outcome, with_json

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    import argparse

    from .common import Outcome


def declare_publish_skill(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory publish-skill DIR [--name NAME] | agent-memory publish-skill --retry REVISION"
    with_json(p)
    p.add_argument("dir", nargs="?", metavar="DIR")
    p.add_argument("--name", help="must equal the name in SKILL.md (default: that name)")
    p.add_argument("--retry", metavar="REVISION", help="finish an interrupted publication from its frozen snapshot")
    p.set_defaults(handler=publish_skill)


def declare_install_skill(p: argparse.ArgumentParser) -> None:
    with_json(p)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--revision", required=True, metavar="REV")
    agent_option(p)
    p.add_argument("--replace", action="store_true", help="replace an installed folder (a backup is kept)")
    p.set_defaults(handler=install_skill)


def search_skills(args: argparse.Namespace) -> Outcome:
    from ..skills.catalog import discover

    result, sync = discover(args.query, offline=args.offline)
    result["skills"] = result["skills"][: args.limit]
    lines = [f"{s['name']}  {s['revision']}  {s['description']}" for s in result["skills"]]
    return result, "\n".join(lines) or "No matching skills.", sync_outcome(sync)


def read_skill(args: argparse.Namespace) -> Outcome:
    from ..skills.catalog import read_file

    if not (args.skill and args.revision):
        raise UsageError(
            "Reading a skill needs both --skill NAME and --revision REV.",
            next_step="agent-memory read --skill NAME --revision REV (agent-memory search --skills lists both)",
        )
    found = read_file(args.skill, args.revision, args.target or "SKILL.md")
    content = found["content"]
    return {**found, "content": content.decode("utf-8", errors="replace")}, content, OK  # type: ignore[return-value]


def publish_skill(args: argparse.Namespace) -> Outcome:
    from ..skills import publishing

    if bool(args.dir) == bool(args.retry):
        raise UsageError(
            "Give either a skill folder DIR or --retry REVISION.", next_step="agent-memory publish-skill DIR"
        )
    result = publishing.retry(args.retry) if args.retry else publishing.publish(args.dir, args.name)
    message = result.pop("message", None)
    if message:
        notice(message)
    count = len(result["files"])
    text = f"{result['status'].capitalize()}: {result['name']} revision {result['revision']} ({count} files)"
    return result, text, PENDING if result["status"] == "pending" else OK


def install_skill(args: argparse.Namespace) -> Outcome:
    from ..skills.installing import install_revision

    result = install_revision(args.name, args.revision, agent=args.agent, replace=args.replace)
    lines = [f"Installed {result['name']} revision {result['revision']} in {path}" for path in result["installed"]]
    if result["backup"]:
        lines.append(f"The previous folder is backed up in {result['backup']}")
    return result, "\n".join(lines), OK
