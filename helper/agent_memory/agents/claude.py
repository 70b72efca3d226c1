"""Where Claude Code keeps its user-level instruction file and skills, resolved from the environment on each call."""

from __future__ import annotations

import os
from pathlib import Path


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


def instructions_warning() -> str | None:
    """None: no file makes Claude Code ignore CLAUDE.md (CLAUDE.local.md and project files add to it)."""
    return None
