"""`agent-memory config set|show`: this machine's settings."""

from __future__ import annotations

import argparse

from .. import paths
from ..config.context import Context
from ..errors import OK, AgentMemoryError
from ..setup import sandbox_consent_read
from ..setup.buckets import set_bucket
from .parsing import Rendered, subcommands, with_json
from .render import notice


def declare(parser: argparse.ArgumentParser) -> None:
    actions = subcommands(parser)
    p = with_json(actions.add_parser("set", help="set a setting (bucket)"))
    p.add_argument("key", choices=["bucket"])
    p.add_argument("value", help="owner/name, hf://buckets/owner/name or file:///absolute/path")
    p.set_defaults(handler=config_set)
    with_json(actions.add_parser("show", help="print the settings")).set_defaults(handler=config_show)


def config_set(args: argparse.Namespace, ctx: Context) -> Rendered:
    ctx.go_online()  # choosing a bucket asks it whatever outage was recorded
    result = set_bucket(ctx, args.value)
    line = f"bucket: {result['bucket']}"
    if result["created"]:
        line += " (created, owner-only)"
    if result["was"]:
        line += f" (was {result['was']}: every project mapped on this machine now uses this bucket)"
    elif result["was"] is None and result["unchanged"]:
        line += " (unchanged)"
    if result["was"] and (warning := _consent_left_behind()):
        notice(f"Warning: {warning}")
    return result, line, OK


def _consent_left_behind() -> str | None:
    """After a switch of bucket: what a consent for Codex's sandbox, given for the old one, now leaves out."""
    try:
        return sandbox_consent_read.warning() if sandbox_consent_read.status()["state"] == "incomplete" else None
    except (AgentMemoryError, OSError):  # the bucket is set: a config.toml we cannot read only loses the hint
        return None


def config_show(args: argparse.Namespace, ctx: Context) -> Rendered:
    values = ctx.config
    result = {"config_file": str(paths.config_file()), **values}
    lines = [f"config file: {result['config_file']}", f"bucket: {values.get('bucket') or '(not set)'}"]
    lines += [f"project {name}: {root}" for root, name in sorted(values.get("projects", {}).items())]
    return result, "\n".join(lines), OK
