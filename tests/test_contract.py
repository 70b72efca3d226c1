"""The JSON each command prints is the one `contract` declares: the same keys, at every level checked here, so that
the declaration cannot drift from what agents and scripts read."""

from __future__ import annotations

import json
from pathlib import Path

import tools
from agent_memory import contract


def keys(declared: type) -> set[str]:
    """Every key a TypedDict of `contract` declares (required or not)."""
    return set(declared.__required_keys__ | declared.__optional_keys__)


def required(declared: type) -> set[str]:
    return set(declared.__required_keys__)


def test_notes_and_their_uploads(ready):
    saved = ready.save("# WAL mode\n\nEnable WAL mode before the first write.")
    assert set(saved.json) == keys(contract.NoteUpload)
    found = ready.run("search", "wal", "--json").json
    assert set(found) == keys(contract.Search)
    assert set(found["sync"]) == keys(contract.Sync)
    assert set(found["results"][0]) == keys(contract.NoteHit)
    assert set(found["results"][0]["matches"][0]) == keys(contract.Match)
    assert set(ready.run("read", saved.json["id"], "--json").json) == keys(contract.NoteRead)
    failed = ready.run("read", "20260101-000000-000000-0000000000", "--json")
    tools.exited(failed, 1)
    assert set(failed.json) == keys(contract.Failure)


def test_what_waits_and_the_hooks(ready, folder_store, tmp_path):
    store = tmp_path / "store"
    store.rename(tmp_path / "unmounted")  # its drive is gone: the save stays pending
    saved = ready.save("Kept here for now.")
    tools.exited(saved, 75)
    assert set(saved.json) == keys(contract.NoteUpload)
    listed = ready.run("pending", "--json").json
    assert set(listed) == keys(contract.Pending)
    assert set(listed["notes"][0]) == keys(contract.PendingNote)
    status = ready.run("status", "--json").json
    assert set(status) == keys(contract.Status) and set(status["store"]) == keys(contract.StoreCheck)
    assert set(status["project"]) == keys(contract.Mapping) and set(status["usage"]) == keys(contract.UsageTotals)
    event = json.dumps({"cwd": str(ready.work)})
    start = ready.run("hook", "session-start", "--agent", "codex", "--json", input=event).json
    assert set(start) == keys(contract.SessionStart)
    stop = ready.run("hook", "stop", "--agent", "codex", "--json", input=event).json
    assert set(stop) == keys(contract.Stop)
    assert set(stop["results"][0]) == keys(contract.NoteUpload)  # still pending: its result says so
    (tmp_path / "unmounted").rename(store)
    exported = ready.run("pending", "export", saved.json["id"], "--to", str(tmp_path / "out.md"), "--json").json
    assert set(exported) == keys(contract.Exported)
    retried = ready.run("pending", "retry", "--json").json
    assert set(retried) == keys(contract.Retries) and set(retried["results"][0]) == keys(contract.NoteUpload)
    used = ready.run("usage", "--json").json
    assert set(used) == keys(contract.UsageReport) and set(used["projects"][0]) == keys(contract.UsageProject)
    assert set(used["projects"][0]["agents"][0]) == keys(contract.AgentUse)


def test_skills_and_setup(ready, tmp_path):
    skill = tmp_path / "x-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: x-skill\ndescription: Does x.\n---\nbody\n")
    published = ready.run("publish-skill", str(skill), "--json").json
    assert required(contract.Publication) <= set(published) <= keys(contract.Publication)
    found = ready.run("search", "--skills", "--json").json
    assert set(found) == keys(contract.SkillSearch) and set(found["skills"][0]) == keys(contract.SkillHit)
    shown = ready.run("read", "--skill", "x-skill", "--revision", published["revision"], "--json").json
    assert set(shown) == keys(contract.SkillFile)
    installed = ready.run("install-skill", "x-skill", "--revision", published["revision"], "--json").json
    assert set(installed) == keys(contract.Installed)
    assert set(ready.run("project", "map", "demo", "--json").json) == keys(contract.ProjectMapped)
    assert set(ready.run("project", "show", "--json").json) == keys(contract.Mapping)
    hooks = ready.run("hooks", "status", "--json").json
    assert set(hooks) == keys(contract.Hooks) and set(hooks["agents"][0]) <= keys(contract.HookFile)
    assert set(ready.run("codex-sandbox", "status", "--json").json) <= keys(contract.Consent)
    assert set(ready.run("instructions", "remove", "--json").json) == keys(contract.InstructionsRemoved)
    removed = ready.run("uninstall", "--discard-pending", "--json").json
    assert set(removed) == keys(contract.Uninstall)
    assert all(set(step) == keys(contract.UninstallStep) for step in removed["steps"])
    assert set(ready.run("import", "--dry-run", "--json").json) == keys(contract.Import)
    assert set(ready.run("project", "unmap", "--json").json) == keys(contract.ProjectUnmapped)


def test_setting_up(machine, folder_store):
    assert set(machine.run("config", "set", "bucket", folder_store, "--json").json) == keys(contract.BucketSet)
    done = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "claude", "--json")
    tools.exited(done)
    assert set(done.json) == keys(contract.Bootstrap)


def test_sync(ready, tmp_path):
    switched = ready.run("sync", "enable", "--agent", "claude", "--json").json
    assert set(switched) == keys(contract.SyncSwitched)
    memory = ready.home / ".claude" / "projects"
    folder = memory / "".join(c if c.isalnum() else "-" for c in str(ready.work.resolve())) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- one\n")
    (folder / "token.md").write_text("hf_" + "b" * 34 + "\n")
    done = ready.run("sync", "now", "--json").json
    assert set(done) == keys(contract.SyncRun) and set(done["folders"][0]) == keys(contract.SyncFolder)
    assert set(done["uploads"][0]) == keys(contract.SyncUpload)
    assert set(done["folders"][0]["refused"][0]) == keys(contract.SyncRefused)
    status = ready.run("sync", "status", "--json").json
    assert set(status) == keys(contract.SyncStatus) and set(status["agents"][0]) == keys(contract.SyncAgent)
    claude = next(agent for agent in status["agents"] if agent["agent"] == "claude")
    assert set(claude["folders"][0]) == keys(contract.SyncFolderState)
    shown = ready.run("sync", "history", "MEMORY.md", "--json").json
    assert set(shown) == keys(contract.SyncHistory) and set(shown["versions"][0]) == keys(contract.SyncVersion)
    assert set(ready.run("status", "--json").json["sync"]) == keys(contract.SyncSummary)


def test_the_declarations_keep_typings_keys_without_loading_typing():
    """At run time a declaration is a dict (typing would cost every command a fifth of the interpreter's start-up);
    its keys are those typing's TypedDict gives the same source."""
    source = Path(contract.__file__).read_text().replace("TYPE_CHECKING = False", "TYPE_CHECKING = True", 1)
    typed: dict[str, object] = {}
    exec(compile(source, contract.__file__, "exec"), typed)
    declared = {
        name: value
        for name, value in vars(contract).items()
        if isinstance(value, type) and issubclass(value, dict) and value is not contract.TypedDict
    }
    assert len(declared) > 30
    for name, value in declared.items():
        assert (value.__required_keys__, value.__optional_keys__) == (
            typed[name].__required_keys__,
            typed[name].__optional_keys__,
        ), name
    assert contract.Stop(event="stop", agent="codex", results=[], damaged=[], waiting=0) == {
        "event": "stop",
        "agent": "codex",
        "results": [],
        "damaged": [],
        "waiting": 0,
    }
