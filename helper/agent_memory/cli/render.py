"""What every command's declaration and handler shares: the parser's class, the `--json` and `--agent` options,
notices on stderr, and how uploads and refreshes are told."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from .. import agents, failures
from ..display import safe_tree
from ..errors import ACCESS, ERROR, OK, PENDING, UsageError, render
from ..store import Freshness

Rendered = tuple[dict[str, object], "str | bytes", int]  # JSON object, text (bytes: printed exactly), exit code
Handler = Callable[[argparse.Namespace], Rendered]


class Formatter(argparse.HelpFormatter):
    """Help as wide as the terminal (or `COLUMNS`), asked once per parser rather than through shutil."""

    def __init__(self, prog: str) -> None:
        try:
            width = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            try:
                width = os.get_terminal_size().columns
            except OSError:
                width = 80
        super().__init__(prog, width=width - 2)


class Parser(argparse.ArgumentParser):
    """argparse, with our help formatter and usage errors that say what to run next (exit 2)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, formatter_class=Formatter, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}.", next_step=f"{self.prog} --help")


def with_json(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add `--json` (one JSON object on stdout)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return parser


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The required ACTION of a command that has several."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    return actions


def agent_option(parser: argparse.ArgumentParser) -> None:
    """Add `--agent codex|claude|both` (`all` is still taken for `both`)."""
    parser.add_argument(
        "--agent", default="both", type=agents.choice, choices=agents.CHOICES, help="which agents (default: both)"
    )


def each_action(parser: argparse.ArgumentParser, handler: Handler, **summaries: str) -> list[argparse.ArgumentParser]:
    """One sub-command per action (all with --json and the same handler, which reads `args.action`)."""
    actions = subcommands(parser)
    found = []
    for action, summary in summaries.items():
        p = with_json(actions.add_parser(action, help=summary))
        p.set_defaults(handler=handler)
        found.append(p)
    return found


def notice(text: str) -> None:
    """A line for people, on stderr."""
    print(text, file=sys.stderr)


def told_sync(freshness: Freshness) -> tuple[dict[str, object], int]:
    """The `sync` object of a refresh, with its notices printed; exit 4 when the refresh was refused (the results
    still come from the cache), else 0."""
    sync = failures.sync(freshness)
    if sync["status"] != "fresh":
        notice(f"Results come from the local cache only ({sync['reason']}: {sync['detail']}).")
    for skipped in sync["skipped"]:
        notice(f"Skipped an object of the folder store: {skipped['detail']}.\nNext: {skipped['next']}")
    if sync["reason"] != "auth":
        return sync, OK
    notice("Next: restore this machine's access to the bucket (for a Hugging Face bucket: hf auth login)")
    return sync, ACCESS


def told_upload(result: dict[str, object]) -> Rendered:
    """One upload's result (a note saved, a skill published) in words; exit 75 while it is pending."""
    result = safe_tree(result)  # a pending upload's message carries the store's error
    code = PENDING if result["status"] == "pending" else OK
    if "revision" not in result:  # a note
        return result, result["message"], code
    message = result.pop("message", None)
    if message:
        notice(message)
    count = len(result["files"])
    return (
        result,
        f"{result['status'].capitalize()}: {result['name']} revision {result['revision']} ({count} files)",
        code,
    )


def told_retries(result: dict[str, object]) -> Rendered:
    """A retry of several uploads in words: exit 1 if any is damaged, else 75 if any is still pending."""
    result = safe_tree(result)  # store errors and damage reports carry outside text
    lines = [r.get("message") or f"Published {r['name']} revision {r['revision']}." for r in result["results"]]
    for item in result["damaged"]:
        damage = f"the pending {item['kind']} {item['id']} is damaged and was not uploaded: {item['problem']}"
        notice(
            render(
                damage,
                f"agent-memory pending export {item['id']} --to PATH, or agent-memory pending discard {item['id']}",
            )
        )
    still_pending = any(r["status"] == "pending" for r in result["results"])
    code = ERROR if result["damaged"] else PENDING if still_pending else OK
    return result, "\n".join(lines) or ("Nothing is pending." if not result["damaged"] else ""), code
