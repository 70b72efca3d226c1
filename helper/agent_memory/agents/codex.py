"""Where Codex CLI keeps its user-level instruction file and skills, resolved from the environment on each call."""

from __future__ import annotations

import errno
import os
from pathlib import Path

LABEL = "Codex"
# the file of its memories injected into every session, with `[features] memories = true` only; sync never writes it
# (other machines' memories reach Codex's memory extension folder instead: sync/codex_delivery.py)
MEMORY_INDEX = "memory_summary.md"


def home() -> Path:
    """Codex's home folder: `$CODEX_HOME` if set, else `~/.codex`."""
    value = os.environ.get("CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".codex"


def instructions_file() -> Path:
    """The global instruction file Codex reads at the start of every session."""
    return home() / "AGENTS.md"


def skills_dir() -> Path:
    """The documented user skill root, `~/.agents/skills`.

    CODEX_HOME does not move it. `$CODEX_HOME/skills` is still scanned but deprecated, and installing into
    both roots would list the skill twice, so we use only this one.
    """
    return Path.home() / ".agents" / "skills"


def instructions_warning(marker: str) -> str | None:
    """A warning when a non-empty `AGENTS.override.md` makes Codex ignore `AGENTS.md` (and the block that starts
    with `marker` in it), else None."""
    override = home() / "AGENTS.override.md"
    try:
        content = override.read_bytes()
    except OSError:  # missing or unreadable: Codex cannot read it either, so AGENTS.md is used
        return None
    # Codex takes the first non-empty file of the two, so a file of blank lines does not shadow AGENTS.md
    if not content.decode("utf-8", errors="replace").strip():
        return None
    return (
        f"Codex ignores {instructions_file()} entirely because {override} exists and is not empty: "
        "move its content into AGENTS.md and delete it, or copy the agent-memory block into it."
    )


def hooks_file() -> Path:
    """The user-level hook file (Codex also reads `[hooks]` in config.toml, where a shape error stops Codex)."""
    return home() / "hooks.json"


def config_file() -> Path:
    """The user's Codex configuration, where the sandbox consent goes."""
    return home() / "config.toml"


# (event, `agent-memory hook` argument, timeout in seconds). Codex keys its trust by a group's position and by
# the handler's exact content, so these and the command string must never change between releases (X3).
HOOKS = (
    ("SessionStart", "session-start", 10),
    ("Stop", "stop", 30),
)
HOOKS_NOTE = "installed; Codex will ask you to trust them (/hooks)"  # untrusted hooks are skipped in silence (X1)
# Codex keys a hook's trust by its group's index in hooks.json (X3): a group taken out before others is left
# as an empty placeholder, so that the user's later groups keep their keys and stay trusted.
TRUST_BY_POSITION = True


def hook_command(helper: str, event: str) -> str:
    """The POSIX sh command line of one hook: the helper by absolute path (Codex runs it with `bash -c`)."""
    return f"{helper} hook {event} --agent codex"


# the user's fix for anything Codex's sandbox keeps from agent-memory: it cannot be run from inside it
SANDBOX_FIX = (
    "agent-memory codex-sandbox allow (the user runs it in their own terminal, then starts a new Codex session; "
    "it cannot work from inside the sandbox, so do not retry from here)"
)
# said of a bucket that cannot be reached from the sandbox, which closes the network (the consent opens it)
NO_NETWORK = "This runs in Codex's sandbox, which gives commands no network unless the user allows it"


def sandboxed_write(error: OSError) -> bool:
    """Whether `error` is Codex's sandbox refusing a write of ours.

    Codex marks the commands it runs (CODEX_THREAD_ID); its workspace-write sandbox refuses writes outside the
    working folder with EROFS (X7). Only the user can lift that, from outside the sandbox.
    """
    return bool(os.environ.get("CODEX_THREAD_ID")) and error.errno in (errno.EROFS, errno.EACCES, errno.EPERM)


def network_blocked() -> bool:
    """Whether this runs in Codex's sandbox without network access (Codex then sets CODEX_SANDBOX_NETWORK_DISABLED
    for the commands it runs): a bucket that cannot be reached is that, not the machine's network."""
    return bool(os.environ.get("CODEX_THREAD_ID")) and os.environ.get("CODEX_SANDBOX_NETWORK_DISABLED") == "1"
