"""What every command's declaration and handler shares: argparse (imported only when needed), the `--json` and
`--agent` options, the hand parser of the hot commands, and notices on stderr."""

from __future__ import annotations

import os
import sys

from ..errors import OK, UsageError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    Outcome = tuple[dict[str, Any], str, int]  # JSON object, human text, exit code
    Handler = Callable[[argparse.Namespace], Outcome]


def parser_class() -> type[argparse.ArgumentParser]:
    """argparse, imported only for cold commands, --help and usage errors, with our formatter and errors."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        """argparse builds a formatter for every argument it declares, and asks shutil for the terminal width
        each time: importing shutil alone costs more start-up time than all of agent-memory's own modules."""

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
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, formatter_class=Formatter, **kwargs)

        def error(self, message: str) -> None:  # type: ignore[override]
            raise UsageError(f"{message}.", next_step=f"{self.prog} --help")

    return Parser


JSON = {"action": "store_true", "help": "print one JSON object on stdout"}


def with_json(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--json", **JSON)
    return parser


class Light:
    """A hot command's arguments, declared once in argparse's own terms, and parsed by hand on the hot path.

    The hand parser knows flags (`store_true`), options that take one value (`type` or `choices`) and one
    optional positional (`nargs="?"`). Anything else on the command line (--help, an abbreviation, `--`, a
    mistake) is left to argparse, so help and usage errors read exactly as for every other command.
    """

    def __init__(self, *arguments: tuple[str, dict[str, Any]]) -> None:
        self.arguments = arguments

    def declare(self, parser: argparse.ArgumentParser) -> None:
        """Declare the arguments to argparse (for --help and usage errors)."""
        for name, options in self.arguments:
            parser.add_argument(name, **options)

    def parse(self, argv: list[str]) -> Any:
        """The parsed arguments (a namespace, as argparse would give), or None to let argparse parse them."""
        from types import SimpleNamespace

        values: dict[str, Any] = {}
        named: dict[str, dict[str, Any]] = {}
        free = []
        for name, options in self.arguments:
            flag = options.get("action") == "store_true"
            values[name.lstrip("-").replace("-", "_")] = options.get("default", False if flag else None)
            if name.startswith("-"):
                named[name] = options
            else:
                free.append(name)
        tokens = iter(argv)
        for token in tokens:
            name, equals, raw = token.partition("=")
            options = named.get(name)
            if options is None:
                if token.startswith("-") or not free:
                    return None
                values[free.pop(0)] = token
            elif options.get("action") == "store_true":
                if equals:
                    return None
                values[name[2:].replace("-", "_")] = True
            else:
                raw = raw if equals else next(tokens, None)
                if raw is None or raw.startswith("-"):
                    return None
                try:
                    value = options.get("type", str)(raw)
                except ValueError:
                    return None
                if value not in options.get("choices", (value,)):
                    return None
                values[name[2:].replace("-", "_")] = value
        return SimpleNamespace(**values)


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    return actions


def agent_option(parser: argparse.ArgumentParser) -> None:
    from .. import agents

    parser.add_argument(
        "--agent", default="both", type=agents.choice, choices=agents.CHOICES, help="which agents (default: both)"
    )


def each_action(parser: argparse.ArgumentParser, handler: Callable, **summaries: str) -> list[argparse.ArgumentParser]:
    """One sub-command per action (all with --json and the same handler, which reads `args.action`)."""
    actions = subcommands(parser)
    found = []
    for action, summary in summaries.items():
        p = with_json(actions.add_parser(action, help=summary))
        p.set_defaults(handler=handler)
        found.append(p)
    return found


def notice(text: str) -> None:
    print(text, file=sys.stderr)


def sync_outcome(sync: dict[str, Any]) -> int:
    """Print the stale notice; exit 4 when the refresh was refused (results still come from the cache)."""
    from ..errors import ACCESS

    if sync["status"] != "fresh":
        notice(f"Results come from the local cache only ({sync['reason']}: {sync['detail']}).")
    for skipped in sync.get("skipped", []):  # search --skills has none
        notice(f"Skipped an object of the folder store: {skipped['detail']}.\nNext: {skipped['next']}")
    if sync["reason"] != "auth":
        return OK
    notice("Next: restore this machine's access to the bucket (for a Hugging Face bucket: hf auth login)")
    return ACCESS
