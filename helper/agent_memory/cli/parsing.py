"""The one parser of the command line (argparse), and the options that several commands declare alike: `--json`,
`--agent`, and ACTION words."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping, Sequence

from .. import agents
from ..config.context import Context
from ..errors import UsageError

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import Any, NoReturn, TypeVar

    Options = TypeVar("Options", bound=argparse._ActionsContainer)  # a parser, or a group of its options

# a command's result: its JSON object (one of `contract`), its text (bytes: printed exactly), its exit code
Rendered = tuple[Mapping[str, object], "str | bytes", int]
Handler = Callable[[argparse.Namespace, Context], Rendered]


# how Python 3.10 to 3.12 cut a usage line into parts that a line break may not split: a group of options whole
_USAGE_PART = re.compile(r"\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+")


class Formatter(argparse.HelpFormatter):
    """Help as wide as the terminal (or `COLUMNS`), asked once per parser rather than through shutil; laid out alike
    on every Python the package runs on, so that docs/commands.md, written from --help, does not depend on the Python
    that wrote it. Python 3.13 changed three steps of argparse's layout (the column of ACTION words' help, where a
    long usage line may break, an option's spelling with its value): each is pinned here to the way of 3.10 to 3.12.
    """

    def __init__(self, prog: str) -> None:
        try:
            width = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            try:
                width = os.get_terminal_size().columns
            except OSError:
                width = 80
        super().__init__(prog, width=width - 2)

    def add_argument(self, action: argparse.Action) -> None:
        """As 3.10 to 3.12 measure it: the help column follows the longest invocation, an ACTION word's indent
        aside (3.13 counts it, and moves the column)."""
        if action.help is not argparse.SUPPRESS:
            invocations = [self._format_action_invocation(action)]
            invocations += [self._format_action_invocation(sub) for sub in self._iter_indented_subactions(action)]
            longest = max(map(len, invocations)) + self._current_indent
            self._action_max_length = max(self._action_max_length, longest)
            self._add_item(self._format_action, [action])

    def _format_action_invocation(self, action: argparse.Action) -> str:
        """`-o VALUE, --option VALUE` (3.13 writes `-o, --option VALUE`)."""
        if not action.option_strings or action.nargs == 0:
            return super()._format_action_invocation(action)
        value = self._format_args(action, self._get_default_metavar_for_optional(action))
        return ", ".join(f"{option} {value}" for option in action.option_strings)

    def _get_actions_usage_parts(self, actions: list[argparse.Action], groups: list[Any]) -> list[str]:
        """The usage's parts, a group of options one part (Python 3.13 and later call this to break a long usage
        line, and make `[--hooks |` and `--no-hooks]` two parts; earlier ones never call it)."""
        joined = " ".join(super()._get_actions_usage_parts(actions, groups))  # type: ignore[misc, unused-ignore]  # 3.13+ only
        return _USAGE_PART.findall(joined)


class Parser(argparse.ArgumentParser):
    """argparse, with our help formatter and usage errors that say what to run next (exit 2)."""

    # argparse's own keywords, passed through as they come (`add_parser` passes only keywords): Any, as argparse's
    # keywords have as many types as there are of them
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(formatter_class=Formatter, **kwargs)
        # its ACTION words, if it has some (`subcommands`)
        self.action_words: argparse._SubParsersAction[argparse.ArgumentParser] | None = None

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}.", next_step=f"{self.prog} --help")

    def parse_known_args(  # type: ignore[override]  # typeshed's overloads by the namespace's type: ours is one
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """What argparse parses, and an error for anything left: raised by the parser of the action it was given to
        (`hooks install`), whose --help the Next line names, rather than by the command's, which argparse uses.

        Python 3.10 to 3.13 parse an ACTION's arguments with its parser's `parse_known_args`, so the action's own
        parser raises first; should argparse stop calling it, the command's parser still names the action's --help,
        found through the public `choices` of its ACTION words."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self._chosen(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The parser of the ACTION the command line chose, else this one."""
        action = getattr(parsed, "action", None)  # the dest of `subcommands`: an ACTION word, if it has some
        chosen = self.action_words.choices.get(action) if self.action_words and isinstance(action, str) else None
        return chosen if chosen is not None else self


def with_json(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add `--json` (one JSON object on stdout)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    return parser


def with_online(parser: Options) -> Options:
    """Add `--online`: try the bucket now, even if it did not answer a moment ago (see store.outage)."""
    parser.add_argument(
        "--online", action="store_true", help="try the bucket now, even if it did not answer a moment ago"
    )
    return parser


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The required ACTION of a command that has several."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    if isinstance(parser, Parser):
        parser.action_words = actions
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


def hook_options(parser: argparse.ArgumentParser) -> None:
    """What every hook command takes: `--agent codex|claude` (the runtime that runs it) and `--json`."""
    parser.add_argument("--agent", required=True, choices=agents.RUNTIMES, help="the runtime that runs this hook")
    with_json(parser)
