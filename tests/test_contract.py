"""The JSON each command prints is the one `contract` declares: the same keys, at every level checked here, so that
the declaration cannot drift from what agents and scripts read."""

from __future__ import annotations

import json

import tools
from agent_memory import contract as declared


def keys(declaration: type) -> set[str]:
    """Every key a TypedDict of `contract` declares (required or not)."""
    return set(declaration.__required_keys__ | declaration.__optional_keys__)


def required(declaration: type) -> set[str]:
    return set(declaration.__required_keys__)


def test_notes_and_their_uploads(ready):
    saved = ready.save("# WAL mode\n\nEnable WAL mode before the first write.")
    assert set(saved.json) == keys(declared.NoteUpload)
    found = ready.run("search", "wal", "--json").json
    assert set(found) == keys(declared.Search)
    assert set(found["freshness"]) == keys(declared.CacheFreshness)
    assert set(found["results"][0]) == keys(declared.NoteHit)
    assert set(found["results"][0]["matches"][0]) == keys(declared.Match)
    assert set(ready.run("read", saved.json["id"], "--json").json) == keys(declared.NoteRead)
    failed = ready.run("read", "20260101-000000-000000-0000000000", "--json")
    tools.exited(failed, 1)
    assert set(failed.json) == keys(declared.Failure)


def test_what_waits_and_the_hooks(ready, folder_store, tmp_path):
    store = tmp_path / "store"
    store.rename(tmp_path / "unmounted")  # its drive is gone: the save stays pending
    saved = ready.save("Kept here for now.")
    tools.exited(saved, 75)
    assert set(saved.json) == keys(declared.NoteUpload)
    listed = ready.run("pending", "--json").json
    assert set(listed) == keys(declared.Pending)
    assert set(listed["notes"][0]) == keys(declared.PendingNote)
    status = ready.run("status", "--json").json
    assert set(status) == keys(declared.Status) and set(status["store"]) == keys(declared.StoreCheck)
    assert set(status["project"]) == keys(declared.Mapping) and set(status["usage"]) == keys(declared.UsageTotals)
    event = json.dumps({"cwd": str(ready.work)})
    start = ready.run("hook", "session-start", "--agent", "codex", "--json", input=event).json
    assert set(start) == keys(declared.SessionStart)
    stop = ready.run("hook", "stop", "--agent", "codex", "--json", input=event).json
    assert set(stop) == keys(declared.Stop)
    assert set(stop["results"][0]) == keys(declared.NoteUpload)  # still pending: its result says so
    (tmp_path / "unmounted").rename(store)
    exported = ready.run("pending", "export", saved.json["id"], "--to", str(tmp_path / "out.md"), "--json").json
    assert set(exported) == keys(declared.Exported)
    retried = ready.run("pending", "retry", "--json").json
    assert set(retried) == keys(declared.Retries) and set(retried["results"][0]) == keys(declared.NoteUpload)
    used = ready.run("usage", "--json").json
    assert set(used) == keys(declared.UsageReport) and set(used["projects"][0]) == keys(declared.UsageProject)
    assert set(used["projects"][0]["agents"][0]) == keys(declared.AgentUse)
    viewed = ready.run("view", "--json", "--out", str(tmp_path / "site")).json
    assert set(viewed) == keys(declared.View)


def test_skills_and_setup(ready, tmp_path):
    skill = tmp_path / "x-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: x-skill\ndescription: Does x.\n---\nbody\n")
    published = ready.run("publish-skill", str(skill), "--json").json
    assert required(declared.Publication) <= set(published) <= keys(declared.Publication)
    found = ready.run("search", "--skills", "--json").json
    assert set(found) == keys(declared.SkillSearch) and set(found["skills"][0]) == keys(declared.SkillHit)
    shown = ready.run("read", "--skill", "x-skill", "--revision", published["revision"], "--json").json
    assert set(shown) == keys(declared.SkillFile)
    installed = ready.run("install-skill", "x-skill", "--revision", published["revision"], "--json").json
    assert set(installed) == keys(declared.Installed)
    assert set(ready.run("project", "map", "demo", "--json").json) == keys(declared.ProjectMapped)
    assert set(ready.run("project", "show", "--json").json) == keys(declared.Mapping)
    hooks = ready.run("hooks", "status", "--json").json
    assert set(hooks) == keys(declared.Hooks) and set(hooks["agents"][0]) <= keys(declared.HookFile)
    assert set(ready.run("codex-sandbox", "status", "--json").json) <= keys(declared.Consent)
    assert set(ready.run("instructions", "remove", "--json").json) == keys(declared.InstructionsRemoved)
    removed = ready.run("uninstall", "--discard-pending", "--json").json
    assert set(removed) == keys(declared.Uninstall)
    assert all(set(step) == keys(declared.UninstallStep) for step in removed["steps"])
    assert set(ready.run("import", "--dry-run", "--json").json) == keys(declared.Import)
    assert set(ready.run("project", "unmap", "--json").json) == keys(declared.ProjectUnmapped)


def test_setting_up(machine, folder_store):
    assert set(machine.run("config", "set", "bucket", folder_store, "--json").json) == keys(declared.BucketSet)
    done = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "claude", "--json")
    tools.exited(done)
    assert set(done.json) == keys(declared.Bootstrap)


def test_sync(ready, tmp_path):
    switched = ready.run("sync", "enable", "--agent", "claude", "--json").json
    assert set(switched) == keys(declared.SyncSwitched)
    memory = ready.home / ".claude" / "projects"
    folder = memory / "".join(c if c.isalnum() else "-" for c in str(ready.work.resolve())) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- one\n")
    (folder / "token.md").write_text("hf_" + "b" * 34 + "\n")
    done = ready.run("sync", "now", "--json").json
    assert set(done) == keys(declared.SyncRun) and set(done["folders"][0]) == keys(declared.SyncFolder)
    assert set(done["uploads"][0]) == keys(declared.SyncUpload)
    assert set(done["folders"][0]["refused"][0]) == keys(declared.SyncFileRefused)
    status = ready.run("sync", "status", "--json").json
    assert set(status) == keys(declared.SyncStatus) and set(status["agents"][0]) == keys(declared.SyncAgent)
    claude = next(agent for agent in status["agents"] if agent["agent"] == "claude")
    assert set(claude["folders"][0]) == keys(declared.SyncFolderState)
    shown = ready.run("sync", "history", "MEMORY.md", "--json").json
    assert set(shown) == keys(declared.SyncHistory) and set(shown["versions"][0]) == keys(declared.SyncVersion)
    assert set(ready.run("status", "--json").json["sync"]) == keys(declared.SyncSummary)
