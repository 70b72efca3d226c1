"""`agent-memory codex-sandbox allow|remove|status`: the user's consent that lets agent-memory save from Codex's
workspace-write sandbox."""

from __future__ import annotations

import argparse

from ..config.context import Context
from ..errors import OK
from ..setup import sandbox_consent_read as sandbox
from ..setup import sandbox_consent_write
from .parsing import Rendered, each_action

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Consent


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Codex's workspace-write sandbox lets commands write only in the project and temporary folders, with no "
        "network, so a save fails there. 'allow' adds agent-memory's state and cache folders, the Hugging Face "
        "caches (or a folder store's folder), and network access for sandboxed commands to Codex's config.toml; "
        "'status' says whether that covers what the current configuration writes; 'remove' takes it out again."
    )
    each_action(
        parser,
        consent,
        allow="let agent-memory save from Codex's sandbox (your consent)",
        remove="take the consent out of Codex's config.toml",
        status="whether the consent is in Codex's config.toml",
    )


def consent(args: argparse.Namespace, ctx: Context) -> Rendered:
    result: Consent = sandbox.status() if args.action == "status" else getattr(sandbox_consent_write, args.action)()
    if args.action == "remove":
        lines = [
            f"codex sandbox: consent removed from {result['file']}"
            if result["changed"]
            else f"codex sandbox: no consent in {result['file']}, nothing to remove"
        ]
    else:
        lines = sandbox.in_words(result)
    if result.get("backup"):
        lines.append(f"  previous file backed up in {result['backup']}")
    if result.get("changed"):
        lines.append("Codex uses it from its next session." if args.action == "allow" else "Codex no longer has it.")
    return result, "\n".join(lines), OK
