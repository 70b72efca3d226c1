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


def _agent_option(parser: argparse.ArgumentParser) -> None:
    from . import agents

    parser.add_argument(
        "--agent", default="both", type=agents.choice, choices=agents.CHOICES, help="which agents (default: both)"
    )


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
    _agent_option(p)
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
    _agent_option(p)
    p.add_argument("--skill", action="append", default=[], metavar="NAME@REVISION", help="also install; repeatable")
    hooks = p.add_mutually_exclusive_group()
    hooks.add_argument(
        "--hooks",
        dest="hooks",
        action="store_true",
        help="also install the hooks: a reminder at session start, a retry of pending uploads after each turn",
    )
    hooks.add_argument("--no-hooks", dest="hooks", action="store_false", help="leave hooks alone (default)")
    p.add_argument(
        "--codex-sandbox",
        action="store_true",
        help="your consent to let agent-memory save from Codex's workspace-write sandbox: its folders become "
        "writable and commands may use the network (see: agent-memory codex-sandbox --help)",
    )
    p.add_argument("--space-revision", metavar="REV", help="the Space revision this helper came from (recorded)")
    p.add_argument("--replace", action="store_true", help="replace a locally modified core skill (a backup is kept)")
    p.set_defaults(handler=_bootstrap)


def _declare_instructions(parser: argparse.ArgumentParser) -> None:
    p = _with_json(_actions(parser).add_parser("remove", help="remove the agent-memory block, and nothing else"))
    _agent_option(p)
    p.set_defaults(handler=_instructions_remove)


def _declare_hooks(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The optional hooks: at session start, a short reminder (project, pending uploads, search first); after "
        "each turn (and at Claude Code's session end), a retry of pending uploads within a few seconds. Codex asks "
        "you to trust new hooks (/hooks) and skips them until you do."
    )
    for p in _each_action(
        parser,
        _hooks,
        install="add the hooks to the agents' hook files (keeping everything else)",
        remove="take out agent-memory's hooks, and nothing else",
        status="which hooks are installed, per agent",
    ):
        _agent_option(p)


def _each_action(parser: argparse.ArgumentParser, handler: Callable, **summaries: str) -> list[argparse.ArgumentParser]:
    """One sub-command per action (all with --json and the same handler, which reads `args.action`)."""
    actions = _actions(parser)
    found = []
    for action, summary in summaries.items():
        p = _with_json(actions.add_parser(action, help=summary))
        p.set_defaults(handler=handler)
        found.append(p)
    return found


def _declare_hook(p: argparse.ArgumentParser) -> None:
    p.usage = "agent-memory hook session-start|stop|session-end --agent codex|claude [--json]"
    p.description = (
        "What the hooks run, with the runtime's event JSON on stdin (see: agent-memory hooks). It always exits 0."
    )
    p.add_argument("event", choices=["session-start", "stop", "session-end"])
    from .agents import RUNTIMES

    p.add_argument("--agent", required=True, choices=RUNTIMES)
    _with_json(p).set_defaults(handler=_hook)


def _declare_codex_sandbox(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Codex's workspace-write sandbox lets commands write only in the project and temporary folders, with no "
        "network, so a save fails there. 'allow' adds agent-memory's state and cache folders, the Hugging Face "
        "caches, and network access for sandboxed commands to Codex's config.toml; 'remove' takes that out again."
    )
    _each_action(
        parser,
        _codex_sandbox,
        allow="let agent-memory save from Codex's sandbox (your consent)",
        remove="take the consent out of Codex's config.toml",
        status="whether the consent is in Codex's config.toml",
    )


def _declare_pending(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Uploads waiting on this machine (notes and skill publications): each is kept, with its exact bytes, "
        "until the bucket confirms it."
    )
    _with_json(parser).set_defaults(handler=_pending_list)
    actions = parser.add_subparsers(dest="action", metavar="[ACTION]", parser_class=type(parser))
    _with_json(actions.add_parser("list", help="list what waits, and what is damaged (the default)")).set_defaults(
        handler=_pending_list
    )
    p = _with_json(actions.add_parser("retry", help="retry every pending note and publication now"))
    p.set_defaults(handler=_pending_retry)
    p = _with_json(actions.add_parser("export", help="write the exact bytes of a pending upload to a new file"))
    p.add_argument("id", metavar="ID", help="a note id or skill revision")
    p.add_argument("--to", required=True, metavar="PATH", help="a new file (a note) or folder (a skill)")
    p.set_defaults(handler=_pending_export)
    p = _with_json(
        actions.add_parser("discard", help="stop retrying an upload; its plan and bytes are kept in a folder")
    )
    p.add_argument("id", metavar="ID", help="a note id or skill revision")
    p.set_defaults(handler=_pending_discard)


_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "project": ("map directories to projects", _declare_project),
    "config": ("this machine's settings", _declare_config),
    "save": ("save a note or checkpoint (body from --file or stdin)", _declare_save),
    "search": ("refresh the cache and search this project's notes", _declare_search),
    "read": ("print a note's exact bytes (or a skill file)", _declare_read),
    "publish-skill": ("publish a skill folder as a new immutable revision", _declare_publish_skill),
    "install-skill": ("install a skill at an explicit revision", _declare_install_skill),
    "status": ("configuration, project, pending uploads, installed skills", _declare_status),
    "pending": ("list, retry, export or discard uploads waiting on this machine", _declare_pending),
    "bootstrap": ("set up this machine: bucket, project, core skill, instructions, verification", _declare_bootstrap),
    "instructions": ("the managed block in the agents' instruction files", _declare_instructions),
    "hooks": ("install, remove or show the optional agent hooks", _declare_hooks),
    "hook": ("run by the agents' hooks (reminder, retry)", _declare_hook),
    "codex-sandbox": ("let agent-memory save from Codex's workspace-write sandbox", _declare_codex_sandbox),
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
    from .store import check_private, parse_bucket

    bucket = parse_bucket(args.value)
    check_private(bucket)
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
        from . import outbox

        return _retried(outbox.retry_all(kind="note"))
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


def _retried(result: dict[str, Any]) -> Outcome:
    """Render a retry of several uploads: exit 1 if any is damaged, else 75 if any is still pending."""
    from .errors import ERROR

    lines = [r.get("message") or f"Published {r['name']} revision {r['revision']}." for r in result["results"]]
    for item in result["damaged"]:
        _notice(
            f"Error: the pending {item['kind']} {item['id']} is damaged and was not uploaded: {item['problem']}\n"
            f"Next: agent-memory pending export {item['id']} --to PATH, or agent-memory pending discard {item['id']}"
        )
    still_pending = any(r["status"] == "pending" for r in result["results"])
    code = ERROR if result["damaged"] else PENDING if still_pending else OK
    return result, "\n".join(lines) or ("Nothing is pending." if not result["damaged"] else ""), code


def _read_body(file: str | None) -> bytes:
    if file and file != "-":
        try:
            with open(file, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise UsageError(
                f"Cannot read {file}: {exc.strerror}.",
                next_step="agent-memory save --file PATH with a file that exists and that you can read",
            ) from exc
    if file is None and sys.stdin.isatty():
        raise UsageError(
            "No note body: pass --file PATH or pipe the text on stdin.",
            next_step="agent-memory save --title T --file NOTE.md",
        )
    return sys.stdin.buffer.read()


def _search(args: argparse.Namespace) -> Outcome:
    from .memory.search import search_project

    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit must be between 1 and 1000.", next_step="agent-memory search QUERY --limit 10")
    if "\x00" in args.query:
        raise UsageError("The query cannot contain NUL characters.", next_step="agent-memory search TEXT (plain text)")
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
    if sync["reason"] != "auth":
        return OK
    _notice("Next: restore this machine's access to the bucket (for a Hugging Face bucket: hf auth login)")
    return ACCESS


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
        raise UsageError(
            "Reading a skill needs both --skill NAME and --revision REV.",
            next_step="agent-memory read --skill NAME --revision REV (agent-memory search --skills lists both)",
        )
    found = read_file(args.skill, args.revision, args.target or "SKILL.md")
    content = found["content"]
    return {**found, "content": content.decode("utf-8", errors="replace")}, content, OK  # type: ignore[return-value]


def _publish_skill(args: argparse.Namespace) -> Outcome:
    from .skills import publishing

    if bool(args.dir) == bool(args.retry):
        raise UsageError(
            "Give either a skill folder DIR or --retry REVISION.", next_step="agent-memory publish-skill DIR"
        )
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
        codex_sandbox=args.codex_sandbox,
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
        *(f"hooks ({h['agent']}): {h['note']} in {h['file']}" for h in result["hooks"]["installed"]),
        *_sandbox_lines(result["codex_sandbox"]),
        f"verification: {verification['status']} ({verification['id']})",
    ]
    code = {"verified": OK, "pending": PENDING}.get(verification["status"], ERROR)
    return result, "\n".join(lines), code


def _sandbox_lines(sandbox: dict[str, Any] | None) -> list[str]:
    if not sandbox:
        return []
    if sandbox["state"] != "allowed":
        return [f"codex sandbox: {sandbox['state']} ({sandbox['file']})"]
    return [
        f"codex sandbox: allowed in {sandbox['file']}: network access, and writes to " + ", ".join(sandbox["roots"])
    ]


def _hooks(args: argparse.Namespace) -> Outcome:
    from .setup import hooks

    found = getattr(hooks, args.action)(args.agent)
    lines = [f"{h['agent']}: {h['note']} ({h['file']})" for h in found]
    lines += [f"  previous file backed up in {h['backup']}" for h in found if h.get("backup")]
    return {"agents": found}, "\n".join(lines), OK


def _hook(args: argparse.Namespace) -> Outcome:
    from .hook import main as hook

    raise SystemExit(hook([args.event, "--agent", args.agent, *(["--json"] if args.json else [])]))


def _codex_sandbox(args: argparse.Namespace) -> Outcome:
    from .setup import codex_sandbox

    result = getattr(codex_sandbox, args.action)()
    lines = _sandbox_lines(result)
    if args.action == "allow":
        lines.append("Codex uses it from its next session.")
    return result, "\n".join(lines), OK


def _instructions_remove(args: argparse.Namespace) -> Outcome:
    from . import agents
    from .setup import instructions

    files = [agents.runtime(name).instructions_file() for name in agents.selected(args.agent)]
    result = instructions.remove_blocks(files)
    deleted = " and the file itself (bootstrap had created it; nothing else was in it)"
    lines = [
        f"Removed the agent-memory block from {path}" + (deleted if path in result["deleted"] else "")
        for path in result["removed"]
    ]
    return result, "\n".join(lines) or "No block to remove.", OK


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
    for item in result["damaged"]:
        lines.append(f"  DAMAGED {item['kind']} {item['id']}: {item['problem']} (see agent-memory pending)")
    lines.append(f"installed skills: {len(result['skills'])}")
    for skill in result["skills"]:
        edited = " (edited locally)" if skill["modified"] else ""
        revision = skill["revision"] or "package"
        lines.append(f"  {skill['agent']}: {skill['name']} @ {revision}{edited} in {skill['path']}")
    lines += [f"hooks ({h['agent']}): {h['note']}" for h in result["hooks"]]
    lines += _sandbox_lines(result["codex_sandbox"]) if result["codex_sandbox"]["state"] != "not allowed" else []
    return result, "\n".join(lines), OK


def _pending_list(args: argparse.Namespace) -> Outcome:
    from . import outbox

    result = outbox.entries()
    lines = []
    for entry in result["notes"]:
        error = (entry["last_error"] or {}).get("detail") or "not tried yet"
        lines.append(f"note {entry['id']} -> {entry['bucket']}/{entry['path']} ({entry['attempts']} attempts: {error})")
    for entry in result["skills"]:
        error = (entry["last_error"] or {}).get("detail") or "not tried yet"
        lines.append(f"skill {entry['name']} revision {entry['revision']} -> {entry['bucket']} ({error})")
    for item in result["damaged"]:
        lines.append(f"DAMAGED {item['kind']} {item['id']}: {item['problem']} (kept in {item['file']})")
    if result["damaged"]:
        _notice("Damaged uploads are never retried: export their bytes (pending export ID --to PATH), then discard.")
    return result, "\n".join(lines) or "Nothing is pending.", OK


def _pending_retry(args: argparse.Namespace) -> Outcome:
    from . import outbox

    return _retried(outbox.retry_all())


def _pending_export(args: argparse.Namespace) -> Outcome:
    from . import outbox

    written = outbox.export(args.id, args.to)
    return {"id": args.id, "written": written}, "\n".join(f"Wrote {path}" for path in written), OK


def _pending_discard(args: argparse.Namespace) -> Outcome:
    from . import outbox

    result = outbox.discard(args.id)
    text = (
        f"Discarded the pending {result['kind']} {args.id}: it will not be uploaded. "
        f"Its plan and exact bytes are kept in {result['kept']}."
    )
    return result, text, OK


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
        from .agents import codex

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
    return _exit(code)


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
    from . import paths
    from .fsutil import tighten

    for root in paths.roots():
        tighten(root)


def _report(message: str, next_step: str, code: int, as_json: bool) -> None:
    from .guard import redact

    message = redact(message)
    if as_json:
        _emit({"error": message, "next": next_step, "exit_code": code}, "", True)
    print(f"Error: {message}\nNext: {next_step}", file=sys.stderr)


def _exit(code: int) -> int:
    deadline = sys.modules.get("agent_memory.deadline")  # not loaded: no network call was made
    if deadline is not None and deadline.abandoned_work():
        # a network call is still blocked in a thread: skip the SDK's exit handlers, which could wait for it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
