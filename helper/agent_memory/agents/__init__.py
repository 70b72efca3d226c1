"""The agent runtimes we serve (Codex CLI and Claude Code): who is calling, and where each keeps its files."""

from __future__ import annotations

import os
from collections.abc import Mapping

RUNTIMES = ("codex", "claude")


def detect(environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """The calling agent and its session id, from what the runtimes reliably export to the commands they run.

    `AGENT_MEMORY_AGENT` wins; Codex exports `CODEX_THREAD_ID` to its shells, Claude Code `CLAUDECODE=1`
    (and, in recent versions, `CLAUDE_CODE_SESSION_ID`).
    """
    env = os.environ if environ is None else environ
    if env.get("AGENT_MEMORY_AGENT"):
        return env["AGENT_MEMORY_AGENT"], None
    if env.get("CODEX_THREAD_ID"):
        return "codex", env["CODEX_THREAD_ID"]
    if env.get("CLAUDECODE") == "1":
        return "claude", env.get("CLAUDE_CODE_SESSION_ID") or None
    return "unknown", None
