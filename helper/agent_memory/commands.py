"""The table of commands, in the style of pip's `commands_dict`: each command's name, the module that declares its
arguments and runs it, and its one-line summary.

`entry` reads the command word (two for a family such as `hook`), imports only that command's module, and prints
the top-level help from this table. A command's module has `declare(parser)`, which adds its arguments (and sets
the handler of each ACTION, named in the table too), and `run(args, ctx)` unless its actions set their own.

Every command that a message names (a `Next:` line, a hint) is built by `line`, which refuses a command or an ACTION
that the table does not have: renaming a command cannot leave a stale hint behind. (`names`, `errors` and
`agents/`, which the Space's page loads too, keep theirs as text.)
"""

from __future__ import annotations

import shlex

PROGRAM = "agent-memory"


class Command:
    """One command of the table: its module, its summary, and whether it is `quiet` (what the agents' hooks run:
    whatever happens, it exits 0 with at most one line on stderr)."""

    __slots__ = ("module", "summary", "actions", "quiet")

    def __init__(self, module: str, summary: str, actions: tuple[str, ...] = (), *, quiet: bool = False) -> None:
        self.module = module
        self.summary = summary
        self.actions = actions  # the ACTION words it takes (`pending retry`), as its module declares them
        self.quiet = quiet


TABLE: dict[str, Command] = {
    "project": Command("agent_memory.cli.project", "map directories to projects", ("map", "show", "unmap")),
    "config": Command("agent_memory.cli.config", "this machine's settings", ("set", "show")),
    "save": Command("agent_memory.cli.save", "save a note or checkpoint (body from --file or stdin)"),
    "search": Command("agent_memory.cli.search", "refresh the cache and search this project's notes"),
    "read": Command("agent_memory.cli.read", "print a note's exact bytes (or a skill file)"),
    "import": Command(
        "agent_memory.cli.importing", "import the memories you have (Claude Code, Codex, Cline, Markdown)"
    ),
    "publish-skill": Command("agent_memory.cli.publish_skill", "publish a skill folder as a new immutable revision"),
    "install-skill": Command("agent_memory.cli.install_skill", "install a skill at an explicit revision"),
    "status": Command("agent_memory.cli.status", "configuration, project, pending uploads, installed skills"),
    "usage": Command(
        "agent_memory.cli.usage", "whether memory is used here: searches, reads, saves per project and agent"
    ),
    "view": Command(
        "agent_memory.cli.view", "write a local, read-only page of what the agents remember (and open it with --open)"
    ),
    "pending": Command(
        "agent_memory.cli.pending",
        "list, retry, export or discard uploads waiting on this machine",
        ("list", "retry", "export", "discard"),
    ),
    "bootstrap": Command(
        "agent_memory.cli.bootstrap", "set up this machine: bucket, project, core skill, instructions, verification"
    ),
    "instructions": Command(
        "agent_memory.cli.instructions", "the managed block in the agents' instruction files", ("remove",)
    ),
    "hooks": Command(
        "agent_memory.cli.hooks",
        "install, remove or show the optional agent hooks "
        "(what the hooks run: agent-memory hook session-start|stop|session-end --agent codex|claude)",
        ("install", "remove", "status"),
    ),
    "codex-sandbox": Command(
        "agent_memory.cli.codex_sandbox",
        "let agent-memory save from Codex's workspace-write sandbox",
        ("allow", "remove", "status"),
    ),
    "sync": Command(
        "agent_memory.cli.sync",
        "sync the agents' own memory (Claude Code's auto memory, Codex's memories) through the bucket",
        ("enable", "disable", "now", "status", "history", "restore"),
    ),
    "uninstall": Command(
        "agent_memory.cli.uninstall",
        "undo bootstrap: hooks, sandbox consent, instruction blocks, skills, PATH link, sync (your notes stay)",
    ),
    "hook session-start": Command(
        "agent_memory.cli.hook_start", "the SessionStart hook: a short reminder in the model's context", quiet=True
    ),
    "hook stop": Command(
        "agent_memory.cli.hook_stop", "the Stop hook: retry pending uploads within a few seconds", quiet=True
    ),
    "hook session-end": Command(
        "agent_memory.cli.hook_stop", "Claude Code's SessionEnd hook: the same retry, within a second", quiet=True
    ),
}

FAMILIES = {  # the words that name several commands (`hook EVENT`), and what they are
    "hook": "What the agents' hooks run, with the event's JSON on stdin (agent-memory hooks install adds them). A "
    "hook never fails the session: whatever happens, it exits 0 with at most one line on stderr.",
}


def find(argv: list[str]) -> tuple[str, list[str]] | None:
    """The command that `argv` names (its longest name in the table) and the arguments after that name; None if
    it names none."""
    for words in (2, 1):
        name = " ".join(argv[:words])
        if len(argv) >= words and name in TABLE:
            return name, argv[words:]
    return None


def family(word: str) -> dict[str, Command]:
    """The commands named `word EVENT` (the hook events of `hook`), by name; {} if `word` names no family."""
    return {name: command for name, command in TABLE.items() if word in FAMILIES and name.startswith(word + " ")}


def line(*words: str) -> str:
    """The command line `agent-memory WORDS...`, each word shell-quoted where it needs it (placeholders such as NAME,
    ID or --to PATH pass as they are); ValueError if its command, or its ACTION, is not in the table."""
    name = next((" ".join(words[:count]) for count in (2, 1) if " ".join(words[:count]) in TABLE), None)
    if name is None:
        raise ValueError(f"{' '.join(words[:2])!r} is no command of the table")
    rest = words[len(name.split()) :]
    actions = TABLE[name].actions
    if actions and rest[:1] and not rest[0].startswith("-") and rest[0] not in actions:
        raise ValueError(f"{name} has no ACTION {rest[0]!r} (it has {', '.join(actions)})")
    return shlex.join([PROGRAM, *name.split(), *rest])
