"""The network time budget of each hook, in a module of its own: the sync's pull and push read it at every session's
start and every turn, where the retry of pending uploads (`retry`, with the outbox's delivery) is loaded only when
something waits."""

from __future__ import annotations

import os

BUDGET_VARIABLE = "AGENT_MEMORY_HOOK_BUDGET"
# seconds of network each hook spends at most, unless AGENT_MEMORY_HOOK_BUDGET says otherwise
DEFAULT_BUDGETS = {
    "stop": 5.0,  # all retries and the sync's push of one Stop; the hooks' own timeout is 30 s
    # the sync's pull: the session waits for it, and the runtimes end the hook after 10 s (its start-up and the
    # reminder need the rest)
    "session-start": 6.0,
    "session-end": 5.0,  # as a Stop's, and never past Claude Code's end of the hook (below)
}
# Claude Code ends SessionEnd hooks after about 1.5 s unless CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS says more
SESSION_END_BUDGET = 1.0


def budget_seconds(event: str) -> float:
    """The network time budget of one hook: `AGENT_MEMORY_HOOK_BUDGET` seconds, else its DEFAULT_BUDGETS; a
    SessionEnd's never longer than Claude Code lets the hook run."""
    default = DEFAULT_BUDGETS[event]
    try:
        seconds = float(os.environ.get(BUDGET_VARIABLE, default))
    except ValueError:
        seconds = default
    seconds = seconds if seconds > 0 else default
    if event == "session-end":
        try:
            allowed = float(os.environ["CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"]) / 1000 - 0.5
        except (KeyError, ValueError):
            allowed = SESSION_END_BUDGET
        seconds = min(seconds, max(allowed, SESSION_END_BUDGET))
    return seconds
