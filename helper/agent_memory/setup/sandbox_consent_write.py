"""The writing half of the sandbox consent pair (what the consent covers, and its state: `sandbox_consent_read`).

Giving and taking back the user's consent for agent-memory in Codex's config.toml (`agent-memory codex-sandbox
allow|remove`, bootstrap, uninstall): the marked block that `sandbox_consent_read` reads and reports, written at the
top of the file and taken out again byte for byte. What the consent covers, and its state, are `sandbox_consent_read`'s.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..agents import codex
from ..errors import AgentMemoryError
from ..fsutil import make_dirs, write_atomic
from ..names import folder_path
from . import agent_files_read, agent_files_write
from . import sandbox_consent_read as sandbox

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Consent


def check(bucket: str | None = None) -> None:
    """AgentMemoryError (nothing changed) if the consent block could not be added to Codex's config.toml."""
    path = codex.config_file()
    _addable(sandbox.split_bom(agent_files_read.read_text(path) or "")[1], path, bucket)


def _addable(text: str, path: Path, bucket: str | None = None) -> str:
    """`text` without our block, if the block can be added to it; AgentMemoryError if it cannot."""
    rest = _without_block(text, path)
    if (key := sandbox.KEY) in sandbox.parse(rest, path):
        roots = ", ".join(json.dumps(str(root)) for root in sandbox.writable_roots(bucket))
        raise AgentMemoryError(
            f"{path} already has its own [{key}] settings, so agent-memory will not edit them. Nothing was changed.",
            next_step=f"add to [{key}] in {path} yourself: writable_roots = [{roots}] and network_access = true",
        )
    return rest


def allow(bucket: str | None = None) -> Consent:
    """Add (or bring up to date) the consent block for `bucket` (default: the configured one); the status
    afterwards, with `changed` and `backup`."""
    path = codex.config_file()
    roots = sandbox.writable_roots(bucket)

    def with_block(text: str | None) -> str:
        bom, rest = sandbox.split_bom(text or "")
        updated = sandbox.render_block(roots) + _addable(rest, path, bucket)
        sandbox.parse(updated, path)  # never write a file that would stop Codex from starting
        if text is not None and not rest:  # an empty file of the user's: `remove` must leave it, empty
            write_atomic(_was_empty(), b"")
        elif text is None:  # a file allow creates: `remove` takes it away again
            _was_empty().unlink(missing_ok=True)
        return bom + updated

    store = folder_path(bucket or sandbox.configured_bucket() or "")
    for root in roots:  # Codex can only bind folders that exist
        if root != store:  # a folder store is made where it is configured (a missing one may be an unmounted drive)
            make_dirs(root, mode=0o700)  # parents too: mkdir(parents=True) would leave them as the umask says
    edited = agent_files_write.edit(path, "codex", with_block)
    return {**sandbox.status(bucket), **edited}


def remove() -> Consent:
    """Take the consent block out, and nothing else; the status afterwards, with `changed` and `backup`.

    A file that held only the block goes with it: no empty file is left behind."""
    path = codex.config_file()

    def without_block(text: str | None) -> str | None:
        if text is None:
            return None
        bom, body = sandbox.split_bom(text)
        rest = bom + _without_block(body, path)
        return None if rest == "" and rest != text and not _was_empty().exists() else rest

    edited = agent_files_write.edit(path, "codex", without_block)
    _was_empty().unlink(missing_ok=True)
    return {**sandbox.status(), **edited}


def _was_empty() -> Path:
    """Kept while the consent stands in a config.toml that was empty before it (an empty file and no file are
    the same text, and only this tells `remove` which one to give back)."""
    return paths.state_dir() / "codex-config-was-empty"


def _without_block(text: str, path: Path) -> str:
    """`text` without our block (lines BEGIN to END)."""
    lines = agent_files_read.lines_of(text)
    marks = sandbox.marker_lines(text, path)
    if not marks:
        return text
    return "".join(lines[: marks[0]] + lines[marks[1] + 1 :])
