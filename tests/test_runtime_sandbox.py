"""The real Codex in its usual `workspace-write` sandbox, with a folder store (`file://`): what works without the
user's consent, what the consent opens, and a consent given for another store.

The machine, its store and its agent folders are outside /tmp, which the sandbox leaves writable."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_runtime_e2e import CHECKPOINT, HELPER, exit_code_of, json_output, save_command, tool_output

import tools
from agent_clis import Codex
from conftest import Machine
from model_servers import Say, Shell

pytestmark = pytest.mark.slow


def folder_store(machine: Machine) -> tuple[str, Path]:
    store = machine.root / "store"
    store.mkdir(mode=0o700)
    return f"file://{store}", store


def notes_in(store: Path) -> list[str]:
    notes = store / "projects" / "demo" / "notes"
    return sorted(p.name for p in notes.iterdir() if not p.name.startswith("setup-")) if notes.exists() else []


def test_codex_sandbox_with_a_folder_store_without_then_with_the_consent(machine_outside_tmp, base_env):
    machine = machine_outside_tmp
    uri, store = folder_store(machine)
    boot = machine.run("bootstrap", "--project", "demo", "--bucket", uri, "--agent", "codex", "--hooks", "--json")
    tools.exited(boot)
    assert any("codex-sandbox allow" in warning for warning in boot.json["warnings"])
    earlier = machine.save("The parser uses a lookahead of 2.", "--title", "Parser lookahead").json
    tools.exited(machine.run("search", "lookahead"))  # in this machine's cache
    laptop = Machine(machine.root / "laptop", base_env).setup(uri)
    later = laptop.save("The lookahead is now 3.", "--title", "Lookahead raised").json  # not in the cache yet

    with Codex.model_class() as model:
        cli = Codex(machine, model, sandbox="workspace-write")
        model.script(
            Shell(f"{HELPER} search lookahead --json"),
            Shell(save_command("Sandboxed checkpoint", CHECKPOINT)),
            Say("Searched, and tried to save."),
        )
        refused = cli.run("Continue the parser work, then save a checkpoint.")
        model.assert_played()
        tools.exited(refused)
        assert "workspace-write" in refused.err  # the run really was sandboxed

        # the search answers from the cache, stale, with the reason and the fix
        found = json_output(model, 0)
        assert exit_code_of(model, "codex", 0) == 0
        assert [n["id"] for n in found["results"]] == [earlier["id"]]
        assert found["freshness"]["status"] == "stale"
        assert "the local cache cannot be written here" in found["freshness"]["detail"]
        assert "agent-memory codex-sandbox allow" in found["freshness"]["detail"]
        # the save fails, saying so plainly: nothing kept, nothing shared
        output = tool_output(model, 1)
        assert exit_code_of(model, "codex", 1) == 1
        assert (
            "Error: The note was not saved, not even on this machine: Codex's sandbox does not let agent-memory write "
            f"in {machine.state / 'state'} (Read-only file system: "
        ) in output
        assert "Next: agent-memory codex-sandbox allow (the user runs it in their own terminal" in output
        assert notes_in(store) == sorted([f"{earlier['id']}.md", f"{later['id']}.md"])
        assert machine.run("pending", "--json").json["notes"] == []

        # the user's consent opens the store's folder too: the save lands in it, the search is fresh
        consent = machine.run("codex-sandbox", "allow", "--json").json
        assert consent["state"] == "allowed" and str(store) in consent["roots"]
        model.script(
            Shell(save_command("Sandboxed checkpoint", CHECKPOINT)),
            Shell(f"{HELPER} search lookahead --json"),
            Say("Saved."),
        )
        allowed = cli.run("Save a checkpoint.")
        model.assert_played()
        tools.exited(allowed)
        saved = json_output(model, 2)
        assert saved["status"] == "saved" and exit_code_of(model, "codex", 2) == 0
        assert f"{saved['id']}.md" in notes_in(store)
        assert (store / saved["path"]).read_text().endswith(CHECKPOINT)
        fresh = json_output(model, 3)
        assert fresh["freshness"]["status"] == "fresh" and later["id"] in [n["id"] for n in fresh["results"]]
    assert machine.run("pending", "--json").json["notes"] == []


def test_a_consent_given_for_a_hugging_face_bucket_is_incomplete_for_a_folder_store(machine_outside_tmp):
    """The issue as users met it: the consent left the store's folder out, the save stayed pending, and status said
    "allowed". Now status says what is missing, and the command it names fixes it."""
    machine = machine_outside_tmp
    uri, store = folder_store(machine)
    with Codex.model_class() as model:
        cli = Codex(machine, model, sandbox="workspace-write")  # the user's config.toml first, then the consent
        tools.exited(machine.run("config", "set", "bucket", "alice/memory"))
        tools.exited(machine.run("codex-sandbox", "allow"))
        boot = machine.run("bootstrap", "--project", "demo", "--bucket", uri, "--agent", "codex", "--json")
        tools.exited(boot)
        status = machine.run("codex-sandbox", "status", "--json").json
        assert status["state"] == "incomplete" and status["missing"] == [str(store)]
        assert status["next"] == "agent-memory codex-sandbox allow"

        model.script(Shell(save_command("Sandboxed checkpoint", CHECKPOINT)), Say("Kept locally."))
        tools.exited(cli.run("Save a checkpoint."))
        model.assert_played()
        pending = json_output(model, 0)
        assert pending["status"] == "pending" and exit_code_of(model, "codex", 0) == 75  # kept, not lost
        assert notes_in(store) == []

        assert machine.run("codex-sandbox", "allow", "--json").json["state"] == "allowed"  # the named fix
        model.script(Shell(f"{HELPER} pending retry --json"), Say("Shared."))
        tools.exited(cli.run("Retry the pending upload."))
        model.assert_played()
        assert exit_code_of(model, "codex", 1) == 0, tool_output(model, 1)
    assert notes_in(store) == [f"{pending['id']}.md"]
    assert machine.run("pending", "--json").json["notes"] == []
