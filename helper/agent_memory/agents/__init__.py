"""The agent runtimes we serve (Codex CLI and Claude Code): who is calling, and where each keeps its files.

This is the one registry of runtimes: each has a module here (`codex`, `claude`) with the same functions
(`instructions_file()`, `skills_dir()`, `instructions_warning(marker)`, the hooks' file and commands), and every
other module goes through `selected()` and `runtime()`; `--agent` everywhere takes `CHOICES` (or `RUNTIMES`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import ModuleType

from ..errors import UsageError
from . import claude, codex

RUNTIMES = ("codex", "claude")
CHOICES = ("codex", "claude", "both")  # what --agent accepts everywhere
_ALIASES = {"all": "both"}  # install-skill said `all` before `both` was the word everywhere


def choice(value: str) -> str:
    """The `--agent` value with old aliases resolved (argparse's `type`; argparse then checks it is in CHOICES)."""
    return _ALIASES.get(value, value)


def selected(agent: str) -> tuple[str, ...]:
    """The runtimes that `--agent` names: `codex`, `claude`, or `both` (alias `all`)."""
    agent = choice(agent)
    if agent == "both":
        return RUNTIMES
    if agent not in RUNTIMES:
        raise UsageError(f"Unknown agent {agent!r}: use codex, claude or both.", next_step="add --agent both")
    return (agent,)


def label(agent: str) -> str:
    """How people call `--agent`'s choice: "Codex", "Claude Code", or "Codex and Claude Code" (the Space's form)."""
    return " and ".join(runtime(name).LABEL for name in selected(agent))


def own_memory(agent: str) -> str:
    """`--agent`'s choice's own memory in words: "Claude Code's own memory", or, for both, "Codex's and Claude
    Code's own memories" (each keeps its own: "Codex and Claude Code's" would read as one memory they share)."""
    owners = [f"{runtime(name).LABEL}'s" for name in selected(agent)]
    return f"{' and '.join(owners)} own {'memories' if len(owners) > 1 else 'memory'}"


def runtime(name: str) -> ModuleType:
    """The module that knows where runtime `name` keeps its files."""
    return {"codex": codex, "claude": claude}[name]


def detect(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The calling agent and its session id, from what the runtimes reliably export to the commands they run.

    Codex exports `CODEX_THREAD_ID` to its shells, Claude Code `CLAUDECODE=1` (and, in recent versions,
    `CLAUDE_CODE_SESSION_ID`). `AGENT_MEMORY_AGENT` names the agent, and only that: the session stays the
    runtime's, so that a checkpoint is still known as its session's after a compaction (`hooks.reminder`).
    """
    env = os.environ if environ is None else environ
    session: str | None
    if env.get("CODEX_THREAD_ID"):
        agent, session = "codex", env["CODEX_THREAD_ID"]
    elif env.get("CLAUDECODE") == "1":
        agent, session = "claude", env.get("CLAUDE_CODE_SESSION_ID") or None
    else:
        agent, session = "unknown", None
    return named(agent, env), session


def named(runtime: str, environ: Mapping[str, str] | None = None) -> str:
    """The agent's name: `AGENT_MEMORY_AGENT` when it is set, else the runtime's."""
    return (os.environ if environ is None else environ).get("AGENT_MEMORY_AGENT") or runtime
