"""The `agent-memory` command line: parse arguments, call the domain modules, render their results.

Nothing else lives here. Data goes to stdout (one JSON object with `--json`), everything else to stderr.
Domain modules are imported inside the handlers so that each command loads only what it uses, and the hot
commands (see `_HOT`) are parsed without argparse, whose import alone costs as much as the interpreter's
start-up: agents and their hooks run them on every session start and every turn.
"""

from __future__ import annotations

import json
import os
import sys

from . import __version__
from .errors import OK, PENDING, AgentMemoryError, UsageError

TYPE_CHECKING = False  # typing itself is not imported: it is on the start-up path of every command
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    Outcome = tuple[dict[str, Any], str, int]  # JSON object, human text, exit code
    Handler = Callable[[argparse.Namespace], Outcome]


def _parser_class() -> type[argparse.ArgumentParser]:
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


def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command`, only that command's arguments are declared (the others cost start-up time)."""
    _Parser = _parser_class()
    parser = _Parser(prog="agent-memory", description="Portable memory and skills for coding agents.")
    parser.add_argument("--version", action="version", version=f"agent-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for name, (summary, declare) in _COMMANDS.items():
        sub = commands.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        if command in (None, name):
            declare(sub)
    return parser


_JSON = {"action": "store_true", "help": "print one JSON object on stdout"}


def _with_json(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--json", **_JSON)
    return parser


class _Light:
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


def _actions(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    return actions


def _declare_project(parser: argparse.ArgumentParser) -> None:
    actions = _actions(parser)
    p = _with_json(actions.add_parser("map", help="map DIR (default: here) to project NAME"))
    p.add_argument("name")
    p.add_argument("dir", nargs="?")
    p.set_defaults(handler=_project_map)
    _with_json(actions.add_parser("show", help="the project of the current directory")).set_defaults(
        handler=_project_show
    )


def _declare_config(parser: argparse.ArgumentParser) -> None:
    actions = _actions(parser)
    p = _with_json(actions.add_parser("set", help="set a setting (bucket)"))
    p.add_argument("key", choices=["bucket"])
    p.add_argument("value", help="owner/name, hf://buckets/owner/name or file:///absolute/path")
    p.set_defaults(handler=_config_set)
    _with_json(actions.add_parser("show", help="print the settings")).set_defaults(handler=_config_show)


def _declare_save(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Save a Markdown note to the bucket. It is kept locally first; if the upload fails it stays "
        "pending (exit 75) until `agent-memory save --retry ID` confirms it."
    )
    _with_json(p)
    p.add_argument("--title", help="default: the first heading, else the first line")
    p.add_argument("--kind", default="note", choices=["note", "checkpoint"])
    p.add_argument("--tag", action="append", default=[], help="repeatable")
    p.add_argument("--source", action="append", default=[], help="a file, URL or commit the note rests on; repeatable")
    p.add_argument("--corrects", metavar="NOTE_ID", help="the id of the note this one corrects")
    p.add_argument("--agent", help="default: $AGENT_MEMORY_AGENT, else the calling runtime, else unknown")
    p.add_argument("--file", metavar="PATH", help="read the body from PATH ('-' for stdin)")
    retry = p.add_mutually_exclusive_group()
    retry.add_argument("--retry", metavar="NOTE_ID", help="upload a pending note again (same id, bytes, path)")
    retry.add_argument("--retry-all", action="store_true", help="retry every pending note")
    p.set_defaults(handler=_save)


_SEARCH = _Light(
    ("--json", _JSON),
    ("query", {"nargs": "?", "default": "", "help": "literal text, case-insensitive; empty lists recent notes"}),
    ("--limit", {"type": int, "default": 10}),
    ("--kind", {"choices": ["note", "checkpoint"]}),
    ("--offline", {"action": "store_true", "help": "search the local cache only (no network)"}),
    ("--skills", {"action": "store_true", "help": "search published skill revisions instead of notes"}),
)


def _declare_search(p: argparse.ArgumentParser) -> None:
    _SEARCH.declare(p)
    p.set_defaults(handler=_search)


def _declare_read(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory read NOTE_ID [--fresh] | agent-memory read --skill NAME --revision REV [FILE]"
    _with_json(p)
    p.add_argument("target", nargs="?", metavar="NOTE_ID|FILE")
    p.add_argument("--fresh", action="store_true", help="read it from the bucket, bypassing the cache")
    p.add_argument("--skill", metavar="NAME", help="read a file of a published skill revision")
    p.add_argument("--revision", metavar="REV")
    p.set_defaults(handler=_read)


def _declare_publish_skill(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory publish-skill DIR [--name NAME] | agent-memory publish-skill --retry REVISION"
    _with_json(p)
    p.add_argument("dir", nargs="?", metavar="DIR")
    p.add_argument("--name", help="must equal the name in SKILL.md (default: that name)")
    p.add_argument("--retry", metavar="REVISION", help="finish an interrupted publication from its frozen snapshot")
    p.set_defaults(handler=_publish_skill)


def _declare_install_skill(p: argparse.ArgumentParser) -> None:
    _with_json(p)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--revision", required=True, metavar="REV")
    p.add_argument("--agent", default="all", choices=["codex", "claude", "all"])
    p.add_argument("--replace", action="store_true", help="replace an installed folder (a backup is kept)")
    p.set_defaults(handler=_install_skill)


_STATUS = _Light(("--json", _JSON))


def _declare_status(p: argparse.ArgumentParser) -> None:
    _STATUS.declare(p)
    p.set_defaults(handler=_status)


def _declare_bootstrap(p: argparse.ArgumentParser) -> None:
    p.description = "Set up (or repair) this machine. Safe to run again: it only adds what is missing."
    _with_json(p)
    p.add_argument("--project", required=True, help="the project name for --dir")
    p.add_argument(
        "--bucket",
        help="owner/name, hf://buckets/owner/name or file:///path "
        "(default: the configured one, else <your user>/agent-memory, created private)",
    )
    p.add_argument("--dir", help="the directory to map to the project (default: here)")
    p.add_argument("--agent", default="both", choices=["codex", "claude", "both"])
    p.add_argument("--skill", action="append", default=[], metavar="NAME@REVISION", help="also install; repeatable")
    hooks = p.add_mutually_exclusive_group()
    hooks.add_argument("--hooks", dest="hooks", action="store_true", help="install the optional hooks")
    hooks.add_argument("--no-hooks", dest="hooks", action="store_false", help="leave hooks alone (default)")
    p.add_argument("--space-revision", metavar="REV", help="the Space revision this helper came from (recorded)")
    p.add_argument("--replace", action="store_true", help="replace a locally modified core skill (a backup is kept)")
    p.set_defaults(handler=_bootstrap)


def _declare_instructions(parser: argparse.ArgumentParser) -> None:
    p = _with_json(_actions(parser).add_parser("remove", help="remove the agent-memory block, and nothing else"))
    p.add_argument("--agent", default="both", choices=["codex", "claude", "both"])
    p.set_defaults(handler=_instructions_remove)


_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "project": ("map directories to projects", _declare_project),
    "config": ("this machine's settings", _declare_config),
    "save": ("save a note or checkpoint (body from --file or stdin)", _declare_save),
    "search": ("refresh the cache and search this project's notes", _declare_search),
    "read": ("print a note's exact bytes (or a skill file)", _declare_read),
    "publish-skill": ("publish a skill folder as a new immutable revision", _declare_publish_skill),
    "install-skill": ("install a skill at an explicit revision", _declare_install_skill),
    "status": ("configuration, project, pending uploads, installed skills", _declare_status),
    "bootstrap": ("set up this machine: bucket, project, core skill, instructions, verification", _declare_bootstrap),
    "instructions": ("the managed block in the agents' instruction files", _declare_instructions),
}


# -- handlers: each returns (JSON object, human text, exit code) -------------------------------------------


def _project_map(args: argparse.Namespace) -> Outcome:
    from .memory.projects import map_directory

    result = map_directory(args.name, args.dir)
    return result, f"Mapped {result['root']} to project {result['project']}.", OK


def _project_show(args: argparse.Namespace) -> Outcome:
    from .memory.projects import resolve

    result = resolve()
    return result, f"project: {result['project']}\nroot: {result['root']}", OK


def _config_set(args: argparse.Namespace) -> Outcome:
    from . import config
    from .store import parse_bucket

    bucket = parse_bucket(args.value)
    config.update(bucket=bucket)
    return {"bucket": bucket}, f"bucket: {bucket}", OK


def _config_show(args: argparse.Namespace) -> Outcome:
    from . import config, paths

    values = config.load()
    result = {"config_file": str(paths.config_file()), **values}
    lines = [f"config file: {result['config_file']}", f"bucket: {values.get('bucket') or '(not set)'}"]
    lines += [f"project {name}: {root}" for root, name in sorted(values.get("projects", {}).items())]
    return result, "\n".join(lines), OK


def _save(args: argparse.Namespace) -> Outcome:
    from .memory import saving

    if args.retry_all:
        result = saving.retry_all()
        code = PENDING if any(r["status"] == "pending" for r in result["results"]) else OK
        text = "\n".join(r["message"] for r in result["results"]) or "Nothing is pending."
        return result, text, code
    if args.retry:
        result = saving.retry(args.retry)
    else:
        result = saving.save(
            _read_body(args.file),
            title=args.title,
            kind=args.kind,
            tags=args.tag,
            sources=args.source,
            corrects=args.corrects,
            agent=args.agent,
        )
    return result, result["message"], PENDING if result["status"] == "pending" else OK


def _read_body(file: str | None) -> bytes:
    if file and file != "-":
        try:
            with open(file, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise UsageError(f"Cannot read {file}: {exc.strerror}.") from exc
    if file is None and sys.stdin.isatty():
        raise UsageError(
            "No note body: pass --file PATH or pipe the text on stdin.",
            next_step="agent-memory save --title T --file NOTE.md",
        )
    return sys.stdin.buffer.read()


def _search(args: argparse.Namespace) -> Outcome:
    from .memory.search import search_project

    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit must be between 1 and 1000.")
    if "\x00" in args.query:
        raise UsageError("The query cannot contain NUL characters.")
    if args.skills:
        return _search_skills(args)
    result = search_project(args.query, limit=args.limit, kind=args.kind, offline=args.offline)
    lines = []
    for found in result["results"]:
        flag = "  [pending: not shared yet]" if found["pending"] else ""
        lines.append(f"{found['id']}  {found['created']}  {found['kind']}  {found['title']}{flag}")
        lines += [f"    {m['line']}: {m['text']}" for m in found["matches"]]
    if not lines:
        lines.append("No matching notes." if args.query else "No notes yet.")
    if result["pending"]:
        _notice(f"{result['pending']} note(s) are pending upload: run agent-memory save --retry-all.")
    return result, "\n".join(lines), _sync_outcome(result["sync"])


def _search_skills(args: argparse.Namespace) -> Outcome:
    from .skills.catalog import discover

    result, sync = discover(args.query, offline=args.offline)
    result["skills"] = result["skills"][: args.limit]
    lines = [f"{s['name']}  {s['revision']}  {s['description']}" for s in result["skills"]]
    return result, "\n".join(lines) or "No matching skills.", _sync_outcome(sync)


def _sync_outcome(sync: dict[str, Any]) -> int:
    """Print the stale notice; exit 4 when the refresh was refused (results still come from the cache)."""
    from .errors import ACCESS

    if sync["status"] != "fresh":
        _notice(f"Results come from the local cache only ({sync['reason']}: {sync['detail']}).")
    return ACCESS if sync["reason"] == "auth" else OK


def _read(args: argparse.Namespace) -> Outcome:
    from .memory.reading import read

    if args.skill or args.revision:
        return _read_skill(args)
    if not args.target:
        raise UsageError("Which note? Give its id.", next_step="agent-memory search QUERY (lists ids)")
    found = read(args.target, fresh=args.fresh)
    content = found["content"]
    result = {**found, "content": content.decode("utf-8", errors="replace")}
    return result, content, OK  # type: ignore[return-value]  (bytes: printed exactly)


def _read_skill(args: argparse.Namespace) -> Outcome:
    from .skills.catalog import read_file

    if not (args.skill and args.revision):
        raise UsageError("Reading a skill needs both --skill NAME and --revision REV.")
    found = read_file(args.skill, args.revision, args.target or "SKILL.md")
    content = found["content"]
    return {**found, "content": content.decode("utf-8", errors="replace")}, content, OK  # type: ignore[return-value]


def _publish_skill(args: argparse.Namespace) -> Outcome:
    from .skills import publishing

    if bool(args.dir) == bool(args.retry):
        raise UsageError("Give either a skill folder DIR or --retry REVISION.")
    result = publishing.retry(args.retry) if args.retry else publishing.publish(args.dir, args.name)
    message = result.pop("message", None)
    if message:
        _notice(message)
    count = len(result["files"])
    text = f"{result['status'].capitalize()}: {result['name']} revision {result['revision']} ({count} files)"
    return result, text, PENDING if result["status"] == "pending" else OK


def _install_skill(args: argparse.Namespace) -> Outcome:
    from .skills.installing import install_revision

    result = install_revision(args.name, args.revision, agent=args.agent, replace=args.replace)
    lines = [f"Installed {result['name']} revision {result['revision']} in {path}" for path in result["installed"]]
    if result["backup"]:
        lines.append(f"The previous folder is backed up in {result['backup']}")
    return result, "\n".join(lines), OK


def _bootstrap(args: argparse.Namespace) -> Outcome:
    from .errors import ERROR
    from .setup.bootstrap import bootstrap

    result = bootstrap(
        args.project,
        bucket=args.bucket,
        directory=args.dir,
        agent=args.agent,
        skill_specs=args.skill,
        hooks=args.hooks,
        space_revision=args.space_revision,
        replace=args.replace,
    )
    verification = result["verification"]
    for warning in result["warnings"]:
        _notice(f"Warning: {warning}")
    lines = [
        f"bucket: {result['bucket']}" + (" (created, private)" if result["bucket_created"] else ""),
        f"project: {result['project']} -> {result['root']}",
        *(f"core skill installed: {path}" for path in result["skill"]["installed"]),
        *(f"core skill kept (modified locally): {path}" for path in result["skill"]["kept"]),
        *(f"instructions: {path}" for path in result["instructions"]),
        f"verification: {verification['status']} ({verification['id']})",
    ]
    code = {"verified": OK, "pending": PENDING}.get(verification["status"], ERROR)
    return result, "\n".join(lines), code


def _instructions_remove(args: argparse.Namespace) -> Outcome:
    from . import agents
    from .setup import instructions

    runtimes = agents.selected(args.agent)
    removed = [str(path) for name in runtimes if instructions.remove(path := agents.runtime(name).instructions_file())]
    text = "\n".join(f"Removed the agent-memory block from {path}" for path in removed) or "No block to remove."
    return {"removed": removed}, text, OK


def _status(args: argparse.Namespace) -> Outcome:
    from .status import status

    result = status()
    project = result["project"]
    lines = [
        f"agent-memory {result['version']}",
        f"config file: {result['config_file']}",
        f"bucket: {result['bucket'] or '(not set: run agent-memory bootstrap)'}",
        f"project: {project['project'] + ' (' + project['root'] + ')' if project else result['project_error']}",
        f"last refresh: {result['last_refresh'] or 'never'}",
        f"pending uploads: {len(result['pending'])}",
    ]
    for entry in result["pending"]:
        error = entry["last_error"] or {}
        lines.append(
            f"  {entry['id']} -> {entry['bucket']}/{entry['path']}, {entry['age_seconds']} s old, "
            f"{entry['attempts']} attempt(s), last error: {error.get('reason', '-')}: {error.get('detail', '-')}"
        )
    for manifest in result["pending_skills"]:
        lines.append(f"  skill {manifest['name']} revision {manifest['revision']}: publication pending")
    lines.append(f"installed skills: {len(result['skills'])}")
    for skill in result["skills"]:
        edited = " (edited locally)" if skill["modified"] else ""
        revision = skill["revision"] or "package"
        lines.append(f"  {skill['agent']}: {skill['name']} @ {revision}{edited} in {skill['path']}")
    return result, "\n".join(lines), OK


# -- entry point -------------------------------------------------------------------------------------------

# The hot commands, parsed without argparse. To add one: declare its arguments as a `_Light`, use its `declare`
# in the command's `_declare_...` function, and add it here with its handler.
_HOT: dict[str, tuple[_Light, Handler]] = {
    "search": (_SEARCH, _search),
    "status": (_STATUS, _status),
}


def _parse(argv: list[str]) -> Any:
    """The arguments: by hand for a hot command, else (and for its --help or any usage error) by argparse."""
    hot = _HOT.get(argv[0]) if argv else None
    if hot is not None and (args := hot[0].parse(argv[1:])) is not None:
        args.command, args.handler = argv[0], hot[1]
        return args
    return _build_parser(argv[0] if argv and argv[0] in _COMMANDS else None).parse_args(argv)


def _notice(text: str) -> None:
    print(text, file=sys.stderr)


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
        _report("Interrupted.", None, code, as_json)
    except OSError as exc:  # the local disk: a full disk, a read-only home, an agent's sandbox
        code = 1
        what = f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc)
        _report(
            f"Cannot use a local file: {what}.",
            "check that folder's permissions and free space; inside Codex's sandbox, allow agent-memory's folders "
            "(see the README, section Troubleshooting)",
            code,
            as_json,
        )
    except Exception as exc:
        if os.environ.get("AGENT_MEMORY_DEBUG") == "1":
            raise
        code = 1
        _report(f"Unexpected {type(exc).__name__}: {exc}", "rerun with AGENT_MEMORY_DEBUG=1 and report it", 1, as_json)
    return _exit(code)


def _private_state() -> None:
    """Make the local state owner-only if an earlier version left it open (a stat per root when it is not)."""
    from . import paths
    from .fsutil import tighten

    for root in paths.roots():
        tighten(root)


def _report(message: str, next_step: str | None, code: int, as_json: bool) -> None:
    from .guard import redact

    message = redact(message)
    if as_json:
        _emit({"error": message, "next": next_step, "exit_code": code}, "", True)
    print(f"Error: {message}" + (f"\nNext: {next_step}" if next_step else ""), file=sys.stderr)


def _exit(code: int) -> int:
    deadline = sys.modules.get("agent_memory.deadline")  # not loaded: no network call was made
    if deadline is not None and deadline.abandoned_work():
        # a network call is still blocked in a thread: skip the SDK's exit handlers, which could wait for it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
