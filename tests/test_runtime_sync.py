"""Sync of the runtimes' own memory inside the real Claude Code and Codex: a line that one machine added to the
runtime's index file (Claude Code's MEMORY.md, Codex's memory_summary.md) is in the first model request of a session
that starts on another machine (for Claude Code, in a checkout of the same project at another path), with the hooks
installed. Both runtimes read their memory before the SessionStart hook's pull lands, so the line reaches the first
request through the hook's reminder; Claude Code's file has it for every later session, and Codex's memory
extension folder has it for Codex's next consolidation (Codex's own files are never written). Offline, against the
Hub emulator and a scripted model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tools
from agent_clis import Claude, Codex, hf_login
from conftest import BUCKET, Machine
from model_servers import Say

pytestmark = [pytest.mark.slow, pytest.mark.outside_tmp]  # Claude Code's memory folders: see conftest's outside_tmp

LINE = "- [Parser lookahead](parser.md): the parser uses a lookahead of 2, chosen on machine A"


def set_up(machine: Machine, agent: str = "claude") -> None:
    hf_login(machine)
    done = machine.run("bootstrap", "--project", "demo", "--bucket", BUCKET, "--agent", agent, "--hooks", "--sync")
    tools.exited(done)


def patient_session_start(machine: Machine) -> None:
    """Give Claude Code's SessionStart hook the time the load gives every other wait of the tests: Claude Code ends
    it after the timeout bootstrap installs (10 s), which a pull that loads the Hub's SDK and asks the Hub several
    times may pass on a machine running the whole suite on every core; the pull's own budget,
    AGENT_MEMORY_HOOK_BUDGET, is scaled with the load by the fixture. (The two runs once blamed on this timeout had
    the pulled file in the folder Claude Code keys by /tmp: see conftest's outside_tmp.)"""
    settings = machine.home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for group in data["hooks"]["SessionStart"]:
        for handler in group["hooks"]:
            handler["timeout"] = max(handler["timeout"], round(tools.scaled(10)))
    settings.write_text(json.dumps(data, indent=2))


def stop(machine: Machine, event: str, expected: str) -> str:
    """Claude Code's Stop hook on `machine`: its line. When it lacks `expected`, what the helper knew then is added
    for the failure to show: what the hook does again at once, and what the helper reports (`sync status` names
    every folder it syncs). (In whole-suite runs on 2026-12-03 it printed nothing at all: a parallel test's Codex
    sandbox had made /tmp look like a repository, see conftest's outside_tmp.)"""
    line = tools.exited(machine.run("hook", "stop", "--agent", "claude", input=event)).err
    if expected not in line:
        again = machine.run("hook", "stop", "--agent", "claude", "--json", input=event)
        line += f"\n[the same hook with --json, at once] {again.out} {again.err}"
        for args in (("sync", "status"), ("status",), ("project", "show")):
            done = machine.run(*args)
            line += f"\n[agent-memory {' '.join(args)}] exit {done.code}\n{done.out}{done.err}"
        names = sorted(key for key in machine.env if key.startswith(("CLAUDE", "AGENT_MEMORY", "XDG", "HOME")))
        line += f"\n[environment names] {names}"
    return line


def told(request: str) -> str:
    """The lines of a model request that memory put there (the index's, the reminder's): what a failure shows."""
    return "\n".join(line for line in request.split("\n") if "agent-memory" in line or line.startswith("- ["))


def kept(machine: Machine, debug: Path) -> str:
    """Where the machine's memory files are, for a failure to show: every file below its Claude Code folder, every
    `parser.md` or `MEMORY.md` anywhere in the machine, the sync's records, what `sync status` says and what
    Claude Code's debug log (`debug`) said of its memory and the hooks. (In
    whole-suite runs on 2026-12-03 the SessionStart pull said it wrote `parser.md`, and after the session the
    file was not in the folder this test expects: it was in the folder Claude Code keys by /tmp, see conftest's
    outside_tmp.)"""
    lines = []
    for path in sorted(machine.root.rglob("*")):
        below_claude = (machine.home / ".claude" / "projects") in path.parents
        if path.is_file() and (below_claude or path.name in ("parser.md", "MEMORY.md") or "sync" in path.parts):
            lines.append(f"{path.relative_to(machine.root)} ({path.stat().st_size} bytes)")
            if path.suffix == ".json" and "sync" in path.parts and path.stat().st_size < 4000:
                lines.append(f"    {path.read_text()}")
    done = machine.run("sync", "status")
    lines += [f"[agent-memory sync status] exit {done.code}", done.out, done.err, "[Claude Code's debug log]"]
    logged = debug.read_text(errors="replace").splitlines() if debug.is_file() else ["(none)"]
    lines += [line[:400] for line in logged if re.search(r"(?i)memor|hook|unlink|renam", line)][-120:]
    return "\n".join(lines)


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
    stopped = stop(machine, event, "2 files pushed")  # what Claude Code runs after a turn
    assert "2 files pushed" in stopped and "pending" not in stopped, stopped  # in the bucket now

    set_up(machine_b)
    patient_session_start(machine_b)
    assert not memory_folder(machine_b).exists()
    debug = machine_b.root / "claude-debug.log"  # what Claude Code did with its memory and our hooks, for a failure
    with Claude.model_class() as model:
        cli = Claude(machine_b, model)
        model.script(Say("Noted."))
        run = cli.run("What do you remember about the parser?", args=["--debug-file", str(debug)])
        model.assert_played()
        first = model.text(0)
    tools.exited(run)
    pulled = memory_folder(machine_b) / "parser.md"  # by the SessionStart hook: its reminder says why not
    assert pulled.is_file() and pulled.read_text().endswith("Lookahead 2.\n"), (
        f"{told(first)}\n{kept(machine_b, debug)}"
    )
    assert LINE in first, told(first)
    assert "updated here: 2 memory files (MEMORY.md, parser.md, from " in first

    # the usual case: machine B has the index already, machine A adds a line, B's next session has it at once
    second_line = "- [Release](release.md): releases are cut on Tuesdays"
    (folder / "MEMORY.md").write_text(f"# Memory index\n{LINE}\n{second_line}\n")
    pushed = stop(machine, event, "1 file pushed")
    assert "1 file pushed" in pushed and "pending" not in pushed, pushed  # in the bucket, not kept here
    with Claude.model_class() as model:
        cli = Claude(machine_b, model)
        model.script(Say("Noted."))
        run = cli.run("Anything about releases?")
        model.assert_played()
        first = model.text(0)
    tools.exited(run)
    index = (memory_folder(machine_b) / "MEMORY.md").read_text()
    # the new line reaches the first request through the reminder (ours), the index's older lines through Claude
    # Code's own loading of MEMORY.md (missing once, 2026-12-03, when a parallel Codex sandbox made Claude Code key
    # its memory by /tmp: see conftest's outside_tmp)
    assert second_line in first and LINE in first, (
        f"memory lines of the first request:\n{told(first)}\nB's index:\n{index}"
    )
    assert second_line in index, told(first)


def test_a_new_memory_summary_line_reaches_the_first_request_on_another_machine(machine, machine_b, hub):
    """With Codex's memories on, Codex also starts its memory consolidation session, whose SessionStart hook runs
    beside the user's: whichever hook waits for the other's pull is told what it pulled."""
    for one in (machine, machine_b):
        set_up(one, "codex")
    mine = machine.home / ".codex" / "memories"
    mine.mkdir(parents=True)
    (mine / "memory_summary.md").write_text("- The user prefers small commits.\n")
    (mine / "MEMORY.md").write_text("# Task Group: parser\n\n## Task 1: lookahead\n- learned: lookahead 2\n")
    tools.exited(machine.run("sync", "now"))
    tools.exited(machine_b.run("sync", "now"))
    added = "- Releases are cut on Tuesdays (learned on machine A)."
    (mine / "memory_summary.md").write_text(f"- The user prefers small commits.\n{added}\n")
    event = json.dumps({"cwd": str(machine.work), "hook_event_name": "Stop"})
    pushed = machine.run("hook", "stop", "--agent", "codex", input=event).err
    assert "1 file pushed" in pushed and "pending" not in pushed, pushed

    with Codex.model_class() as model:
        cli = Codex(machine_b, model)
        config = cli.home / "config.toml"
        config.write_text(config.read_text() + "\n[features]\nmemories = true\n")
        model.script(Say("Noted."))
        run = cli.run("When are releases cut?")
        first = model.text(0)
    tools.exited(run)
    assert added in first
    # never in Codex's own files, which its consolidation regenerates: in the extension it reads for outside memory
    theirs = machine_b.home / ".codex" / "memories"
    assert not (theirs / "memory_summary.md").exists()
    delivered = [p.read_text() for p in (theirs / "extensions" / "agent-memory" / "resources").iterdir()]
    assert any(added in text for text in delivered)
