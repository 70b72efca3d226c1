"""The `agent-memory` command line: parse arguments, call the domain modules, render their results.

This module is the entry point and the table of commands; each command's declaration and handler live beside
their domain's others (`memory`, `skills`, `setup`), and what they share in `common`. Data goes to stdout (one
JSON object with `--json`), everything else to stderr. Every error a command meets ends here, in one place:
an `Error:` line and a `Next:` line on stderr, and its exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

from .. import __version__, failures, paths
from ..display import safe
from ..errors import AgentMemoryError, UsageError, render
from ..fsutil import tighten
from ..guard import redact
from ..store import StoreError
from . import importing, memory, setup, skills
from .common import Handler, Parser

HOOK_HELP = "(what the hooks run: agent-memory hook session-start|stop|session-end --agent codex|claude)"

_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "project": ("map directories to projects", memory.declare_project),
    "config": ("this machine's settings", memory.declare_config),
    "save": ("save a note or checkpoint (body from --file or stdin)", memory.declare_save),
    "search": ("refresh the cache and search this project's notes", memory.declare_search),
    "read": ("print a note's exact bytes (or a skill file)", memory.declare_read),
    "import": ("import the memories you have (Claude Code, Codex, Cline, Markdown)", importing.declare_import),
    "publish-skill": ("publish a skill folder as a new immutable revision", skills.declare_publish_skill),
    "install-skill": ("install a skill at an explicit revision", skills.declare_install_skill),
    "status": ("configuration, project, pending uploads, installed skills", memory.declare_status),
    "pending": ("list, retry, export or discard uploads waiting on this machine", memory.declare_pending),
    "bootstrap": (
        "set up this machine: bucket, project, core skill, instructions, verification",
        setup.declare_bootstrap,
    ),
    "instructions": ("the managed block in the agents' instruction files", setup.declare_instructions),
    "hooks": ("install, remove or show the optional agent hooks " + HOOK_HELP, setup.declare_hooks),
    "codex-sandbox": ("let agent-memory save from Codex's workspace-write sandbox", setup.declare_codex_sandbox),
}


def build_parser() -> argparse.ArgumentParser:
    """The one parser of every command."""
    parser = Parser(prog="agent-memory", description="Portable memory and skills for coding agents.")
    parser.add_argument("--version", action="version", version=f"agent-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for name, (summary, declare) in _COMMANDS.items():
        declare(commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + "."))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    as_json = "--json" in argv
    try:
        _require_utf8(argv)
        args = build_parser().parse_args(argv)
        as_json = args.json
        for root in paths.roots():  # local state is owner-only, even if an earlier version left it open
            tighten(root)
        handler: Handler = args.handler
        result, text, code = handler(args)
        _emit(result, text, as_json)
    except AgentMemoryError as exc:
        code = _report(exc, as_json)
    except StoreError as exc:  # the one translation of a store's failure (see `failures`)
        code = _report(failures.user_error(exc, argv), as_json)
    except KeyboardInterrupt:
        interrupted = AgentMemoryError(
            "Interrupted.",
            next_step="agent-memory pending (lists any upload it left waiting), then run it again",
            exit_code=130,
        )
        code = _report(interrupted, as_json)
    except OSError as exc:  # the local disk: a full disk, a read-only home, an agent's sandbox
        code = _report(failures.local_error(exc, argv), as_json)
    except Exception as exc:
        if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
            raise
        unexpected = AgentMemoryError(
            f"Unexpected {type(exc).__name__}: {exc}", next_step="rerun with AGENT_MEMORY_DEBUG=1 and report it"
        )
        code = _report(unexpected, as_json)
    return code


def _emit(result: dict[str, object], text: str | bytes, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif isinstance(text, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
    elif text:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


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


def _report(error: AgentMemoryError, as_json: bool) -> int:
    """Print `error` (on stderr, and as the JSON object with `--json`); its exit code."""
    # paths and store errors can hold anything: no credential, no control character is printed
    message, next_step = safe(redact(error.message)), safe(redact(error.next_step))
    if as_json:
        _emit({"error": message, "next": next_step, "exit_code": error.exit_code}, "", True)
    print(render(message, next_step), file=sys.stderr)
    return error.exit_code
