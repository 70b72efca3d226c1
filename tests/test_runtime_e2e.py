"""The whole memory loop inside the real Codex CLI and Claude Code, against the Hub emulator.

Each test runs the real CLIs from npm, offline, against a scripted model server: the scripted model runs the
helper's commands as tool calls, as a real model following the skill would. Assertions are about effects (the
bucket, the outbox) and about what the model was shown (its recorded requests), never about a clean exit alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import tools
from agent_clis import CLIS, Codex, hf_login
from conftest import BUCKET, Machine
from model_servers import Say, Shell

pytestmark = pytest.mark.slow

HELPER = str(Path(sys.executable).parent / "agent-memory")  # what bootstrap writes into the block and the hooks
SKILL_DESCRIPTION = next(
    line.removeprefix("description: ")
    for line in (Path(__file__).parent.parent / "skill" / "SKILL.md").read_text().splitlines()
    if line.startswith("description: ")
)
BLOCK_LINE = f"- Before relying on earlier decisions or context, search memory: `{HELPER} search 'KEYWORDS'` "
REMINDER = "this session's memory project is demo ("
SEARCH_TRIGGER = "If this task continues earlier work or depends on past decisions, first run: "
COMPACTED = "The context was just compacted."
OTHER = {"codex": "claude", "claude": "codex"}
CHECKPOINT = """# Parser lookahead checkpoint

1. Goal: make the parser accept nested generics.
2. Done: lookahead raised to 2; tests pass.
3. Next: benchmark the change.
"""


def bootstrap(machine: Machine, runtime: str, *args: str) -> dict:
    """What the user runs once per machine (their Hugging Face login comes first)."""
    hf_login(machine)
    result = machine.run("bootstrap", "--project", "demo", "--bucket", BUCKET, "--agent", runtime, "--json", *args)
    tools.exited(result)
    return result.json


def notes_in(hub) -> list[str]:
    return [p for p in hub.list_paths(BUCKET) if "/notes/" in p and "/notes/setup-" not in p]


def tool_output(model, index: int) -> str:
    return model.tool_results()[index].output


def json_output(model, index: int) -> dict:
    """The one JSON object a scripted `--json` command printed, from what the runtime showed the model."""
    output = tool_output(model, index)
    return json.loads(output[output.index("{") : output.rindex("}") + 1])


def exit_code_of(model, runtime: str, index: int) -> int:
    """The exit code of scripted command `index`, as the runtime reported it to the model."""
    result = model.tool_results()[index]
    if runtime == "codex":
        return int(result.output.split("Process exited with code ")[1].split()[0])
    return int(result.output.split("Exit code ")[1].split()[0]) if result.is_error else 0


def save_command(title: str, body: str, *extra: str) -> str:
    return f"{HELPER} save --kind checkpoint --title '{title}' {' '.join(extra)} --json <<'EOF'\n{body}EOF"


@pytest.fixture(params=["codex", "claude"])
def runtime(request) -> str:
    return request.param


@pytest.fixture
def laptop(machine_b) -> Machine:
    """A second machine: its own HOME and state, and the project checked out at another path."""
    machine_b.work = machine_b.root / "elsewhere" / "parser"
    machine_b.work.mkdir(parents=True)
    return machine_b


@pytest.mark.parametrize("hooks", ["installed", "removed"])
def test_memory_loop_in_the_real_runtimes(runtime, hooks, machine, laptop, hub):
    """Scenarios 1-3 with the hooks installed, and 6: the same with the hooks removed."""
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        if hooks == "removed":
            tools.exited(machine.run("hooks", "remove"))
        earlier = machine.save("# Parser decision\n\nThe parser uses a lookahead of 2.", "--title", "Parser lookahead")
        tools.exited(earlier)
        model.script(
            Shell(f"{HELPER} search lookahead --json"),
            Shell(save_command("Parser lookahead checkpoint", CHECKPOINT)),
            Say("Checkpoint saved."),
        )
        run = cli.run("Continue the parser work, then save a checkpoint.")
        model.assert_played()

        # 1: the model saw the core skill, the managed block and (only with hooks) the reminder
        first = model.text(0)
        assert "agent-memory" in first and SKILL_DESCRIPTION in first
        assert BLOCK_LINE in first
        assert (REMINDER in first) is (SEARCH_TRIGGER in first) is (hooks == "installed")

        # 2: it found the earlier note, then saved a checkpoint before replying; the bucket has it, from this runtime
        assert earlier.json["id"] in tool_output(model, 0) and exit_code_of(model, runtime, 0) == 0
        saved = json_output(model, 1)
        assert saved["status"] == "saved" and exit_code_of(model, runtime, 1) == 0
        assert notes_in(hub) == sorted([earlier.json["path"], saved["path"]])
        stored = hub.read_file(BUCKET, saved["path"]).decode()
        assert f"agent: {runtime}\n" in stored and "kind: checkpoint\n" in stored and stored.endswith(CHECKPOINT)
    tools.exited(run)
    # the receipts of use: the session's search and save, counted under the runtime's own session id
    (project,) = tools.exited(machine.run("usage", "--json")).json["projects"]
    (use,) = [use for use in project["agents"] if use["agent"] == runtime]
    assert (use["searches"], use["searches_found"], use["saved"], use["read"]) == (1, 1, 1, 0)
    assert use["sessions"] == use["sessions_searched"] == 1

    # 3: another machine, the other runtime, another checkout path of the same project finds and reads it
    other = OTHER[runtime]
    other_class = CLIS[other]
    with other_class.model_class() as model:
        cli = other_class(laptop, model)
        bootstrap(laptop, other, *(["--hooks"] if hooks == "installed" else []))
        model.script(
            Shell(f"{HELPER} search 'lookahead checkpoint' --json"),
            Shell(f"{HELPER} read {saved['id']}"),
            Say("Found it."),
        )
        run = cli.run("What was the state of the parser work?")
        model.assert_played()
        assert saved["id"] in tool_output(model, 0)
        assert "3. Next: benchmark the change." in tool_output(model, 1) and exit_code_of(model, other, 1) == 0
        assert (REMINDER in model.text(0)) is (hooks == "installed")
    tools.exited(run)


def test_a_pending_save_is_retried_by_the_end_of_turn_hook(runtime, machine, hub):
    """Scenario 4: the batch endpoint fails, the save goes pending; the hook uploads it once the Hub is back."""
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        hub.fault("batch", "fail", times=0)
        model.script(
            Shell(save_command("Offline checkpoint", CHECKPOINT)),
            Say("The checkpoint is only local for now.", action=hub.clear_faults),  # the Hub recovers meanwhile
        )
        run = cli.run("Save a checkpoint.")
        model.assert_played()
        pending = json_output(model, 0)
        assert pending["status"] == "pending" and exit_code_of(model, runtime, 0) == 75
    tools.exited(run)
    # the Stop hook (and Claude Code's SessionEnd) ran after the reply: the note is in the bucket, once
    assert notes_in(hub) == [pending["path"]]
    assert hub.file_info(BUCKET, pending["path"])["writes"] == 1
    assert machine.run("pending", "--json").json == {"notes": [], "skills": [], "sync": [], "damaged": []}


def test_after_compaction_the_model_is_pointed_at_the_newest_checkpoint(runtime, machine, hub):
    """Scenario 5: SessionStart with source `compact` names the checkpoint (id, title), never its body."""
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        saved = machine.save(CHECKPOINT, "--kind", "checkpoint", "--title", "Parser lookahead checkpoint").json
        model.script(
            Shell("echo working", tokens=990_000),  # a nearly full context window: the runtime compacts
            Say("<analysis>Parser work.</analysis>\n<summary>The parser work is in progress.</summary>"),
            Say("Continuing from the checkpoint."),
        )
        run = cli.run("Keep working on the parser.")
        model.assert_played()
        assert len(model.requests) == 3  # the work, the compaction, the turn after it
        assert "summary" in model.text(1).lower()  # the runtime's own compaction request
        after = model.text(2)
        assert f'{COMPACTED} This project\'s newest checkpoint is {saved["id"]} "Parser lookahead checkpoint"' in after
        assert f"{HELPER} read {saved['id']}" in after
        assert "benchmark the change" not in after and "nested generics" not in after
        assert COMPACTED not in model.text(0) and saved["id"] not in model.text(0)  # a fresh start: no pointer
    tools.exited(run)


def test_codex_workspace_write_sandbox_needs_and_honours_the_consent(machine_outside_tmp, hub):
    """Scenario 7: without consent the save fails plainly; after bootstrap --codex-sandbox it is shared."""
    machine = machine_outside_tmp
    with Codex.model_class() as model:
        cli = Codex(machine, model, sandbox="workspace-write")
        bootstrap(machine, "codex", "--hooks")
        model.script(Shell(save_command("Sandboxed checkpoint", CHECKPOINT)), Say("Tried to save."))
        refused = cli.run("Save a checkpoint.")
        model.assert_played()
        output = tool_output(model, 0)
        assert exit_code_of(model, "codex", 0) == 1
        state = machine.state / "state"
        assert (
            f"Error: The note was not saved, not even on this machine: Codex's sandbox does not let agent-memory "
            f"write in {state} (Read-only file system: " in output
        )
        assert (
            "Next: agent-memory codex-sandbox allow (the user runs it in their own terminal, then starts a new "
            in output
        )
        assert '"status": "saved"' not in output and '"status": "pending"' not in output
        assert notes_in(hub) == [] and machine.run("pending", "--json").json["notes"] == []
        tools.exited(refused)

        consent = bootstrap(machine, "codex", "--hooks", "--codex-sandbox")["codex_sandbox"]
        assert consent["state"] == "allowed" and consent["network"] is True
        model.script(Shell(save_command("Sandboxed checkpoint", CHECKPOINT)), Say("Saved."))
        allowed = cli.run("Save a checkpoint.")
        model.assert_played()
        saved = json_output(model, 1)
        assert saved["status"] == "saved" and exit_code_of(model, "codex", 1) == 0
        assert notes_in(hub) == [saved["path"]]
        assert "agent: codex\n" in hub.read_file(BUCKET, saved["path"]).decode()
        tools.exited(allowed)
        assert "workspace-write" in allowed.err  # the run really was sandboxed


def test_codex_skips_hooks_nobody_trusted_as_hooks_status_says(machine, hub):
    """Why `hooks status` says Codex will ask for trust: without it, Codex skips our hooks in silence (X1)."""
    with Codex.model_class() as model:
        cli = Codex(machine, model, bypass_hook_trust=False)
        bootstrap(machine, "codex", "--hooks")
        assert machine.run("hooks", "status", "--json").json["agents"][0]["note"] == (
            "installed; Codex will ask you to trust them (/hooks)"
        )
        model.script(Say("Hello."))
        run = cli.run("Hello?")
        model.assert_played()
        assert BLOCK_LINE in model.text(0) and REMINDER not in model.text(0)
        assert "hook: SessionStart" not in run.err
    tools.exited(run)


def test_claude_code_loads_a_stray_block_twice_until_bootstrap_s_fix_is_applied(machine, hub):
    """C5: with CLAUDE_CONFIG_DIR elsewhere, a block left in ~/.claude/CLAUDE.md is loaded a second time."""
    default = {"CLAUDE_CONFIG_DIR": str(machine.home / ".claude")}
    moved = {"CLAUDE_CONFIG_DIR": str(machine.home / ".config" / "claude")}
    checkout = machine.home / "src" / "parser"  # under HOME, as most checkouts are
    checkout.mkdir(parents=True)
    hf_login(machine)
    args = ("bootstrap", "--project", "demo", "--bucket", BUCKET, "--agent", "claude", "--dir", str(checkout))
    tools.exited(machine.run(*args, env=default))
    warned = machine.run(*args, "--json", env=moved).json["warnings"]
    assert any(w.startswith("Claude Code will show the agent-memory block twice") for w in warned)
    with CLIS["claude"].model_class() as model:
        cli = CLIS["claude"](machine, model)
        model.script(Say("Hello."), Say("Hello again."))
        cli.run("Hello?", cwd=checkout, env=moved)
        assert model.text(0).count(BLOCK_LINE) == 2
        tools.exited(machine.run("instructions", "remove", "--agent", "claude", env=default))  # the named fix
        cli.run("Hello?", cwd=checkout, env=moved)
        model.assert_played()
        assert model.text(1).count(BLOCK_LINE) == 1
