"""Sync of the runtimes' own memory inside the real Claude Code: a line that one machine added to Claude Code's
MEMORY.md is in the first model request of a session that starts on another machine, in a checkout of the same
project at another path, with the hooks installed (the SessionStart hook pulls it before Claude Code reads its
memory). Offline, against the Hub emulator and a scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tools
from agent_clis import Claude, hf_login
from conftest import BUCKET, Machine
from model_servers import Say

pytestmark = pytest.mark.slow

LINE = "- [Parser lookahead](parser.md): the parser uses a lookahead of 2, chosen on machine A"


def set_up(machine: Machine) -> None:
    hf_login(machine)
    done = machine.run("bootstrap", "--project", "demo", "--bucket", BUCKET, "--agent", "claude", "--hooks", "--json")
    tools.exited(done)
    tools.exited(machine.run("sync", "enable", "--agent", "claude"))


def memory_folder(machine: Machine) -> Path:
    """Claude Code's auto memory folder of the machine's checkout (not a git repository: keyed by its path)."""
    return machine.home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(machine.work.resolve())) / "memory"


def test_a_new_memory_line_reaches_the_first_request_on_another_machine(machine, machine_b, hub):
    machine_b.work = machine_b.root / "elsewhere" / "parser"
    machine_b.work.mkdir(parents=True)
    set_up(machine)
    folder = memory_folder(machine)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(f"# Memory index\n{LINE}\n")
    (folder / "parser.md").write_text("---\nname: parser lookahead\ntype: project\n---\nLookahead 2.\n")
    event = json.dumps({"cwd": str(machine.work), "hook_event_name": "Stop"})
    stopped = machine.run("hook", "stop", "--agent", "claude", input=event)  # what Claude Code runs after a turn
    tools.exited(stopped)
    assert "2 files pushed" in stopped.err, stopped.err

    set_up(machine_b)
    assert not memory_folder(machine_b).exists()
    with Claude.model_class() as model:
        cli = Claude(machine_b, model)
        model.script(Say("Noted."))
        run = cli.run("What do you remember about the parser?")
        model.assert_played()
        first = model.text(0)
    tools.exited(run)
    assert (memory_folder(machine_b) / "parser.md").read_text().endswith("Lookahead 2.\n")
    assert LINE in first, first[-3000:]
    assert "updated here: 2 memory files (MEMORY.md, parser.md)" in first

    # the usual case: machine B has the index already, machine A adds a line, B's next session has it at once
    second_line = "- [Release](release.md): releases are cut on Tuesdays"
    (folder / "MEMORY.md").write_text(f"# Memory index\n{LINE}\n{second_line}\n")
    tools.exited(machine.run("hook", "stop", "--agent", "claude", input=event))
    with Claude.model_class() as model:
        cli = Claude(machine_b, model)
        model.script(Say("Noted."))
        run = cli.run("Anything about releases?")
        model.assert_played()
        first = model.text(0)
    tools.exited(run)
    assert second_line in first and LINE in first
    assert second_line in (memory_folder(machine_b) / "MEMORY.md").read_text()
