"""Where Claude Code keeps its user-level instruction file and skills, resolved from the environment on each call."""

from __future__ import annotations

import os
from pathlib import Path

LABEL = "Claude Code"
MEMORY_INDEX = "MEMORY.md"  # the file of its auto memory loaded into every session (the first 200 lines)


def config_dir() -> Path:
    """Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR` if set, else `~/.claude`."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / ".claude"


def instructions_file() -> Path:
    """The user's private global instructions, loaded into every Claude Code session."""
    return config_dir() / "CLAUDE.md"


def skills_dir() -> Path:
    """The personal skill root (Claude Code moves it with CLAUDE_CONFIG_DIR)."""
    return config_dir() / "skills"


def hooks_file() -> Path:
    """The user settings, where hooks live beside the user's other settings."""
    return config_dir() / "settings.json"


# (event, `agent-memory hook` argument, timeout in seconds). SessionEnd is a last retry: Claude Code ends it
# after about 1.5 s whatever the timeout says, and the hook keeps within that.
HOOKS = (
    ("SessionStart", "session-start", 10),
    ("Stop", "stop", 30),
    ("SessionEnd", "session-end", 5),
)
HOOKS_NOTE = "installed; new Claude Code sessions run them"
TRUST_BY_POSITION = False  # user hooks run with no trust step: a group taken out goes entirely


def hook_command(helper: str, event: str) -> str:
    """The POSIX sh command line of one hook: Claude Code runs it with `/bin/sh -c` (dash on Debian, C2)."""
    return f"{helper} hook {event} --agent claude"


def instructions_warning(marker: str) -> str | None:
    """A warning when Claude Code would load the agent-memory block (whose first line is `marker`) twice, else None.

    With CLAUDE_CONFIG_DIR set elsewhere, Claude Code still finds `~/.claude/CLAUDE.md` as the project
    instructions of any folder under HOME (it walks up from the working folder), so a block left there by an
    earlier setup appears a second time (C5).
    """
    default = Path.home() / ".claude"
    if config_dir().resolve() == default.resolve():
        return None
    stray = default / "CLAUDE.md"
    try:
        if marker not in stray.read_text(encoding="utf-8", errors="replace"):
            return None
    except OSError:
        return None
    return (
        f"Claude Code will show the agent-memory block twice in sessions under {Path.home()}: it reads "
        f"{instructions_file()} and also {stray}, as a parent folder's project instructions. Remove the copy in "
        f"{stray}: CLAUDE_CONFIG_DIR={default} agent-memory instructions remove --agent claude"
    )
