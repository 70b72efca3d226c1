"""The user's consent for agent-memory inside Codex's `workspace-write` sandbox.

That sandbox lets the model's commands write only in the working folder and the temporary folders, and open no
socket (X7), so a save can neither keep its pending copy nor upload. Codex's own settings lift exactly that:
`sandbox_workspace_write.writable_roots` (folders that become writable) and `network_access`. With the user's
consent we add both to `$CODEX_HOME/config.toml`, for exactly the folders the helper and its libraries write:
its state and cache folders, and the Hugging Face and hf_xet caches.

The settings sit in a marked block at the top of the file, as dotted keys: at the top they belong to the root
table whatever tables follow, and the block comes out again byte for byte. A config.toml that does not parse,
or that sets `sandbox_workspace_write` itself, is left alone: we say what to add instead.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import paths
from ..agents import codex
from ..errors import AgentMemoryError
from ..fsutil import locked, make_dirs
from .agent_files import back_up, read_text, write_text

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

BEGIN = "# agent-memory:begin codex-sandbox"
END = "# agent-memory:end codex-sandbox"
KEY = "sandbox_workspace_write"


def writable_roots() -> list[Path]:
    """The folders agent-memory writes when it saves: its state and cache, the Hugging Face and hf_xet caches."""
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    hf_home = Path(os.environ.get("HF_HOME") or cache_home / "huggingface").expanduser()
    xet = Path(os.environ.get("HF_XET_CACHE") or hf_home / "xet").expanduser()
    found: list[Path] = []
    for root in (paths.state_dir(), paths.cache_dir(), hf_home, xet):
        root = root.absolute()
        if not any(root == other or other in root.parents for other in found):
            found = [other for other in found if root not in other.parents] + [root]
    return found


def render_block(roots: list[Path]) -> str:
    """The marked block, ending with a newline."""
    listed = ", ".join(json.dumps(str(root)) for root in roots)  # a JSON string is a valid TOML basic string
    return (
        f"{BEGIN}\n"
        "# Lets agent-memory save from Codex's workspace-write sandbox: these folders become writable, and commands\n"
        "# may use the network. Added with your consent; `agent-memory codex-sandbox remove` takes it out again.\n"
        f"{KEY}.writable_roots = [{listed}]\n"
        f"{KEY}.network_access = true\n"
        f"{END}\n"
    )


def check() -> str:
    """Codex's config.toml without our block, if we can add the block to it; AgentMemoryError if we cannot."""
    path = codex.config_file()
    rest = _without_block(read_text(path) or "", path)
    if KEY in _parse(rest, path):
        roots = ", ".join(json.dumps(str(root)) for root in writable_roots())
        raise AgentMemoryError(
            f"{path} already has its own [{KEY}] settings, so agent-memory will not edit them. Nothing was changed.",
            next_step=f"add to [{KEY}] in {path} yourself: writable_roots = [{roots}] and network_access = true",
        )
    return rest


def allow() -> dict[str, Any]:
    """Add (or bring up to date) the consent block; the status afterwards, with `changed`."""
    path = codex.config_file()
    with locked(paths.state_dir() / "codex-sandbox.lock"):
        text = read_text(path) or ""
        rest = check()
        roots = writable_roots()
        for root in roots:  # Codex can only bind folders that exist
            make_dirs(root, mode=0o700)  # parents too: mkdir(parents=True) would leave them as the umask says
        updated = render_block(roots) + rest
        _parse(updated, path)  # never write a file that would stop Codex from starting
        changed = updated != text
        if changed:
            back_up(path, "codex")
            write_text(path, updated)
    return {**status(), "changed": changed}


def remove() -> dict[str, Any]:
    """Take the consent block out, and nothing else; the status afterwards, with `changed`."""
    path = codex.config_file()
    with locked(paths.state_dir() / "codex-sandbox.lock"):
        text = read_text(path) or ""
        rest = _without_block(text, path)
        changed = rest != text
        if changed:
            back_up(path, "codex")
            if rest or path.is_symlink():
                write_text(path, rest)
            else:  # the file held only our block: leave no empty file behind
                path.unlink()
    return {**status(), "changed": changed}


def status() -> dict[str, Any]:
    """`{"file", "state": "allowed"|"outdated"|"not allowed", "roots", "network"}` of the consent block."""
    path = codex.config_file()
    try:
        text = read_text(path) or ""
        _without_block(text, path)
    except AgentMemoryError:
        return {"file": str(path), "state": "unreadable", "roots": [], "network": False}
    if BEGIN not in text:
        return {"file": str(path), "state": "not allowed", "roots": [], "network": False}
    granted = _roots_in(text)
    state = "allowed" if granted == writable_roots() else "outdated"
    return {"file": str(path), "state": state, "roots": [str(root) for root in granted], "network": True}


def _roots_in(text: str) -> list[Path]:
    start, stop = text.find(BEGIN), text.find(END)
    try:
        block = _parse(text[start:stop], codex.config_file())
    except AgentMemoryError:
        return []
    return [Path(root) for root in block.get(KEY, {}).get("writable_roots", [])]


def _without_block(text: str, path: Path) -> str:
    """`text` without our block (lines BEGIN to END); an unmatched marker is refused."""
    lines = text.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.strip() in (BEGIN, END)]
    if not marks:
        return text
    if len(marks) != 2 or lines[marks[0]].strip() != BEGIN or lines[marks[1]].strip() != END:
        raise AgentMemoryError(
            f"The agent-memory block in {path} is malformed (its markers do not pair up). Nothing was changed.",
            next_step=f"remove the lines from '{BEGIN}' to '{END}' in {path} by hand, then run the command again",
        )
    return "".join(lines[: marks[0]] + lines[marks[1] + 1 :])


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentMemoryError(
            f"{path} is not valid TOML ({exc}); nothing was changed.",
            next_step=f"fix {path} (Codex cannot start with it either), then run the command again",
        ) from exc
