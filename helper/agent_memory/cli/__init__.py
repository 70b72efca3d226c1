"""The `agent-memory` command line: parse arguments, call the domain modules, render their results.

This module is the entry point and the table of commands; each command's declaration and handler live beside
their domain's others (`memory`, `skills`, `setup`), and what they share in `common`. Nothing else lives here.
Data goes to stdout (one JSON object with `--json`), everything else to stderr. Domain modules are imported
inside the handlers so that each command loads only what it uses, and the hot commands (see `_HOT`) are
parsed without argparse, whose import alone costs as much as the interpreter's start-up: agents and their
hooks run them on every session start and every turn.
"""

from __future__ import annotations

import json
import os
import sys

from .. import __version__
from ..errors import AgentMemoryError, UsageError
from . import memory, setup, skills
from .common import Light, parser_class

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from .common import Handler


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command`, only that command's arguments are declared (the others cost start-up time)."""
    _Parser = parser_class()
    parser = _Parser(prog="agent-memory", description="Portable memory and skills for coding agents.")
    parser.add_argument("--version", action="version", version=f"agent-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for name, (summary, declare) in _COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        if command in (None, name):
            declare(sub)
    return parser


_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "project": ("map directories to projects", memory.declare_project),
    "config": ("this machine's settings", memory.declare_config),
    "save": ("save a note or checkpoint (body from --file or stdin)", memory.declare_save),
    "search": ("refresh the cache and search this project's notes", memory.declare_search),
    "read": ("print a note's exact bytes (or a skill file)", memory.declare_read),
    "publish-skill": ("publish a skill folder as a new immutable revision", skills.declare_publish_skill),
    "install-skill": ("install a skill at an explicit revision", skills.declare_install_skill),
    "status": ("configuration, project, pending uploads, installed skills", memory.declare_status),
    "pending": ("list, retry, export or discard uploads waiting on this machine", memory.declare_pending),
    "bootstrap": (
        "set up this machine: bucket, project, core skill, instructions, verification",
        setup.declare_bootstrap,
    ),
    "instructions": ("the managed block in the agents' instruction files", setup.declare_instructions),
    "hooks": ("install, remove or show the optional agent hooks", setup.declare_hooks),
    "hook": ("run by the agents' hooks (reminder, retry)", setup.declare_hook),
    "codex-sandbox": ("let agent-memory save from Codex's workspace-write sandbox", setup.declare_codex_sandbox),
}


# The hot commands, parsed without argparse. To add one: declare its arguments as a `Light`, use its `declare`
# in the command's `declare_...` function, and add it here with its handler.
_HOT: dict[str, tuple[Light, Handler]] = {
    "search": (memory.SEARCH, memory.search),
    "status": (memory.STATUS, memory.status),
}


def _parse(argv: list[str]) -> Any:
    """The arguments: by hand for a hot command, else (and for its --help or any usage error) by argparse."""
    hot = _HOT.get(argv[0]) if argv else None
    if hot is not None and (args := hot[0].parse(argv[1:])) is not None:
        args.command, args.handler = argv[0], hot[1]
        return args
    return _build_parser(argv[0] if argv and argv[0] in _COMMANDS else None).parse_args(argv)


def _emit(result: dict[str, Any], text: str | bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif isinstance(text, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
    elif text:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    as_json = "--json" in argv
    try:
        _require_utf8(argv)
        args = _parse(argv)
        as_json = args.json
        _private_state()
        handler: Handler = args.handler
        result, text, code = handler(args)
        _emit(result, text, as_json)
    except AgentMemoryError as exc:
        code = exc.exit_code
        _report(exc.message, exc.next_step, code, as_json)
    except KeyboardInterrupt:
        code = 130
        _report(
            "Interrupted.", "agent-memory pending (lists any upload it left waiting), then run it again", code, as_json
        )
    except OSError as exc:  # the local disk: a full disk, a read-only home, an agent's sandbox
        from ..agents import codex

        code = 1
        what = f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc)
        _report(
            f"Cannot use a local file: {what}.",
            codex.sandbox_next_step(exc)
            or "check that folder's permissions and free space (see the README, section Troubleshooting)",
            code,
            as_json,
        )
    except Exception as exc:
        if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
            raise
        code = 1
        _report(f"Unexpected {type(exc).__name__}: {exc}", "rerun with AGENT_MEMORY_DEBUG=1 and report it", 1, as_json)
    return code


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


def _private_state() -> None:
    """Make the local state owner-only if an earlier version left it open (a stat per root when it is not)."""
    from .. import paths
    from ..fsutil import tighten

    for root in paths.roots():
        tighten(root)


def _report(message: str, next_step: str, code: int, as_json: bool) -> None:
    from ..display import safe
    from ..guard import redact

    message, next_step = safe(redact(message)), safe(next_step)  # store errors and paths carry outside text
    if as_json:
        _emit({"error": message, "next": next_step, "exit_code": code}, "", True)
    print(f"Error: {message}\nNext: {next_step}", file=sys.stderr)
