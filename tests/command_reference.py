"""Writes docs/commands.md, the command reference, from the command table and each command's `--help`.

Run `python tests/command_reference.py` from the repository root after changing a command's arguments or summary;
`tests/test_docs.py` fails while the file differs from what this writes. It lives beside the tests, not in the
package: users read the page, and the helper has no use for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "commands.md"
REGENERATE = "python tests/command_reference.py"
WIDTH = "100"  # the help's line width, fixed so that the page does not depend on the terminal that wrote it

sys.path.insert(0, str(REPO / "helper"))
from agent_memory import commands  # noqa: E402


def _help(words: list[str], home: str) -> str:
    """What `agent-memory WORDS --help` prints, as a new user's terminal would show it."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": home,
        "AGENT_MEMORY_HOME": home,
        "COLUMNS": WIDTH,
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": str(REPO / "helper"),
    }
    argv = [sys.executable, "-m", "agent_memory", *words, "--help"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout.rstrip() + "\n"


def _block(text: str) -> list[str]:
    return ["```text", *text.rstrip("\n").split("\n"), "```", ""]


def render() -> str:
    """The whole page, from the table and the help of every command and ACTION."""
    lines = [
        "# Command reference",
        "",
        "<!-- Generated from the command table (helper/agent_memory/commands.py) and each command's --help.",
        f"     Do not edit by hand: run `{REGENERATE}`. tests/test_docs.py checks it. -->",
        "",
        "Every command takes `--json` and then prints one JSON object on stdout.",
        "The exit codes are in the [README](../README.md#exit-codes).",
        "The keys of each JSON object are in [`skill/references/commands.md`](../skill/references/commands.md).",
        "",
        "| Command | What it does |",
        "|---|---|",
    ]
    lines += [f"| [`{name}`](#{_anchor(name)}) | {_cell(cmd.summary)} |" for name, cmd in commands.TABLE.items()]
    lines.append("")
    with tempfile.TemporaryDirectory() as home:
        lines += ["## agent-memory", "", *_block(_help([], home))]
        told: set[str] = set()
        for name, cmd in commands.TABLE.items():
            words = name.split()
            if len(words) > 1 and words[0] in commands.FAMILIES and words[0] not in told:
                told.add(words[0])  # the family's own help (`hook`), before its first command
                lines += [f"## agent-memory {words[0]}", "", *_block(_help(words[:1], home))]
            lines += [f"## agent-memory {name}", "", *_block(_help(words, home))]
            for action in cmd.actions:
                lines += [f"### agent-memory {name} {action}", "", *_block(_help([*words, action], home))]
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a `|` would end the cell)."""
    return text.replace("|", "\\|")


def _anchor(name: str) -> str:
    """GitHub's anchor of the heading `agent-memory NAME`."""
    return "agent-memory-" + name.replace(" ", "-")


if __name__ == "__main__":
    PAGE.write_text(render())
    print(f"wrote {PAGE.relative_to(REPO)}")
