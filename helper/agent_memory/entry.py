"""The `agent-memory` command, after `start` (which answers a bare `--version` and the idle Stop hook alone): read the
command word, load only that command's module (see `commands.TABLE`), parse its arguments, run it with the command's
one `Context`, and render what it returns, or the error it met, in one place: an `Error:` line and a `Next:` line
on stderr, and its exit code.

The commands that the agents' hooks run (`quiet` in the table) never fail the session: whatever happens, they exit 0
with at most one line on stderr.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from types import ModuleType

from . import __version__, commands, paths
from .cli import render
from .cli.parsing import Handler, Parser
from .commands import PROGRAM, TABLE
from .config.context import Context
from .errors import AgentMemoryError, UsageError
from .fsutil import tighten
from .store.budget import stuck

DESCRIPTION = "Portable memory and skills for coding agents."


def main() -> int:
    """The `agent-memory` process: run the command its arguments name; returns the exit code."""
    ctx = Context()
    return _exit(run(sys.argv[1:], ctx), ctx)


def run(argv: list[str], ctx: Context | None = None) -> int:
    """Run the command `argv` names (with `ctx`, else a new Context) and print what it says; its exit code."""
    ctx = ctx or Context()
    found = commands.find(argv)
    family = commands.family(argv[0]) if argv and found is None else {}
    name = found[0] if found is not None else argv[0] if family else ""
    quiet = TABLE[name].quiet if found is not None else bool(family) and all(c.quiet for c in family.values())
    as_json = "--json" in argv
    parser: argparse.ArgumentParser | None = None
    try:
        _require_utf8(argv)
        parser = _parser(found, argv[0] if family else None)
        loaded()
        args = parser.parse_args(found[1] if found is not None else argv[1:] if family else argv)
        as_json = args.json
        for root in paths.roots():  # local state is owner-only, even if an earlier version left it open
            tighten(root)
        handler: Handler = args.handler
        result, text, code = handler(args, ctx)
        render.emit(result, text, as_json)
    except Exception as exc:
        if quiet:  # a hook: the session goes on whatever happens here
            _failures().hook_failure(exc, name.partition(" ")[2] or name, parser)
            code = 0
        else:
            failures = _failures()
            code = failures.report(failures.user_facing(exc, argv), as_json)
    except KeyboardInterrupt:
        interrupted = AgentMemoryError(
            "Interrupted.",
            next_step=f"{commands.line('pending')} (lists any upload it left waiting), then run it again",
            exit_code=130,
        )
        code = 0 if quiet else _failures().report(interrupted, as_json)
    finally:
        ctx.close()
    return code


def _parser(found: tuple[str, list[str]] | None, family: str | None) -> argparse.ArgumentParser:
    """The parser of the command `found`, declared by its own module alone; else the parser of the table: the
    commands (or the events of `family`, such as `hook`'s) with their summaries, `--help` and `--version`."""
    if found is not None:
        name = found[0]
        command = TABLE[name]
        module = importlib.import_module(command.module)
        parser = Parser(prog=f"{PROGRAM} {name}", description=command.summary[0].upper() + command.summary[1:] + ".")
        parser.set_defaults(handler=getattr(module, "run", None), command=name)
        module.declare(parser)
        return parser
    if family is not None:
        parser = Parser(prog=f"{PROGRAM} {family}", description=commands.FAMILIES[family])
        listed = commands.family(family)
    else:
        parser = Parser(prog=PROGRAM, description=DESCRIPTION)
        parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
        listed = {name: command for name, command in TABLE.items() if " " not in name}
    words = parser.add_subparsers(dest="command", metavar="EVENT" if family else "COMMAND", parser_class=Parser)
    words.required = True
    for name, command in listed.items():
        words.add_parser(name.rpartition(" ")[2], help=command.summary)
    return parser  # it finds no command to run: a name not in the table is its usage error


def loaded() -> None:
    """The command's modules are loaded: if `start` turned the collector off while they loaded, what exists now
    stays for the life of the process (`gc.freeze`: never scanned again) and the collector is on again for the
    command's own work. In a process that did not come through `start` (the tests' in-process runs), nothing."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _failures() -> ModuleType:
    """`cli.failures`, loaded when a command fails: the secret guard that redacts what is printed, and the
    translations of store and disk failures, which a command that succeeds never needs."""
    from .cli import failures

    return failures


def _require_utf8(argv: list[str]) -> None:
    """UsageError for an argument that is not UTF-8: Python hands its bytes over as lone surrogates, which would
    crash the first write of the text, or end up in a note as garbage."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                shown = repr(arg.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                shown = ascii(arg)
            raise UsageError(
                f"The argument {shown} is not valid UTF-8 text.",
                next_step="give it again in UTF-8 (convert text with iconv -t UTF-8; rename a file or folder whose "
                "name is not UTF-8)",
            ) from None


def _exit(code: int, ctx: Context) -> int:
    """`code`, or the end of the process right here if a network call is still blocked in a thread: the SDK's
    exit handlers could wait for it, and neither an agent nor its hook may be kept waiting."""
    sys.stdout.flush()
    if ctx.budget.abandoned or stuck():
        sys.stderr.flush()
        # a thread still blocked (the Hub's; a folder store's only where there is no fork) keeps the descriptors
        # open: closed here, the agent that runs a hook reads the end of its output at once
        os.closerange(0, 3)
        os._exit(code)
    return code
