"""Codex's memories through its memory extension folder, on two machines (two homes), through a folder store and
the Hub emulator: each machine's `$CODEX_HOME/memories/` is pushed and never written; what another machine's Codex
learned arrives in `memories/extensions/agent-memory/` (instructions.md and dated resources), a resource Codex pruned
is not delivered again, and a machine that synced the old way (into Codex's own files) moves over without losing a
line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_sync import hook, reminder, sync_now

import tools
from agent_clis import Codex
from agent_memory.contents import sha256
from agent_memory.sync.versions import Version, encode, object_path, path_key
from conftest import Machine
from model_servers import ConsolidatingModel, Say, Shell, visible_text

pytestmark = pytest.mark.outside_tmp

SUMMARY_A = "v1\n## User profile\n- The user prefers small commits.\n"
MEMORY_A = "# Task Group: parser\n\n## Task 1: lookahead\n- learned: the parser uses a lookahead of 2\n"
MEMORY_B = "# Task Group: release\n\n- learned on B: releases are cut on Tuesdays\n"


def memories(machine: Machine) -> Path:
    return machine.home / ".codex" / "memories"


def extension(machine: Machine) -> Path:
    return memories(machine) / "extensions" / "agent-memory"


def resources(machine: Machine) -> dict[str, str]:
    folder = extension(machine) / "resources"
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of Codex's own memory folder but our extension, byte for byte."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "agent-memory" not in p.relative_to(folder).parts
    }


def set_up(machine: Machine, bucket: str, name: str) -> Machine:
    machine.own_env["AGENT_MEMORY_MACHINE"] = name
    machine.setup(bucket)
    tools.exited(machine.run("sync", "enable", "--agent", "codex"))
    return machine


def write(machine: Machine, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = memories(machine) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def test_another_machines_codex_memories_reach_the_extension_folder(machine, machine_b, bucket):
    a, b = set_up(machine, bucket, "laptop"), set_up(machine_b, bucket, "desktop")
    write(a, {"memory_summary.md": SUMMARY_A, "MEMORY.md": MEMORY_A, "rollout_summaries/one.md": "Session one.\n"})
    write(b, {"memory_summary.md": "v1\n- B's own summary\n", "MEMORY.md": MEMORY_B})
    b_before = snapshot(memories(b))
    stopped = hook(a, "Stop", "codex")
    tools.exited(stopped)
    assert "3 files pushed" in stopped.err

    context = reminder(b, "codex")
    assert snapshot(memories(b)) == b_before  # Codex's generated files untouched, byte for byte
    instructions = (extension(b) / "instructions.md").read_text()
    assert "the user's Codex memories from their other machines" in instructions
    assert "- laptop (agent-memory id " in instructions and "not a signal to forget" in instructions
    delivered = resources(b)
    assert sorted(name.split("-laptop-")[1].split("-", 1)[1] for name in delivered) == [
        "memory-md.md",
        "memory-summary-md.md",
    ]  # the rollout summaries are Phase 2 inputs that laptop's own consolidation folds into its MEMORY.md
    for name, text in delivered.items():
        assert name[:19].count("-") == 4 and name[10] == "T"  # `%Y-%m-%dT%H-%M-%S`, as Codex prunes by
        assert text.startswith("# Codex memory from the user's machine laptop (agent-memory id ")
    memory = next(text for name, text in delivered.items() if name.endswith("-memory-md.md"))
    assert "- learned: the parser uses a lookahead of 2" in memory and "`MEMORY.md`" in memory
    # the session is told, since Codex reads the extension only when it next consolidates
    assert "Codex memories from the user's other machines arrived in" in context
    assert "  - learned: the parser uses a lookahead of 2" in context and "loaded" not in context
    assert "reads that folder only when it consolidates its memory (with its memories on)" in context

    # B's own memories go the other way; A's generated files stay A's
    a_before = snapshot(memories(a))
    pushed = [path for folder in sync_now(b)["folders"] for path in folder["pushed"]]
    assert sorted(pushed) == ["MEMORY.md", "memory_summary.md"]  # never what was delivered here
    sync_now(a)
    assert snapshot(memories(a)) == a_before
    assert any("- learned on B: releases are cut on Tuesdays" in text for text in resources(a).values())

    # nothing new: nothing delivered again, nothing said
    assert "agent-memory sync" not in reminder(b, "codex")
    assert len(resources(b)) == 2

    # a change on A: only the lines it changed arrive, and lines B already knows are left out
    write(a, {"MEMORY.md": MEMORY_A.replace("lookahead of 2", "lookahead of 3") + "- releases are cut on Tuesdays\n"})
    write(b, {"MEMORY.md": MEMORY_B + "- releases are cut on Tuesdays\n"})
    sync_now(a)
    sync_now(b)
    new = {name: text for name, text in resources(b).items() if name not in delivered}
    (text,) = new.values()
    added, removed = text.split("## Lines it added")[1].split("## Lines it removed")
    assert "- learned: the parser uses a lookahead of 3" in added and "Tuesdays" not in added
    assert "- learned: the parser uses a lookahead of 2" in removed


def test_the_reminder_counts_one_line_as_one_line(machine, machine_b, folder_store):
    a, b = set_up(machine, folder_store, "laptop"), set_up(machine_b, folder_store, "desktop")
    write(a, {"MEMORY.md": MEMORY_A})
    sync_now(a)
    reminder(b, "codex")
    write(a, {"MEMORY.md": MEMORY_A + "- learned: one more thing\n"})
    sync_now(a)
    context = reminder(b, "codex")
    assert ": 1 line added, 0 removed (all of it: " in context, context
    assert "  - learned: one more thing" in context


def test_a_pruned_resource_is_not_delivered_again(machine, machine_b, bucket):
    a, b = set_up(machine, bucket, "laptop"), set_up(machine_b, bucket, "desktop")
    write(a, {"MEMORY.md": MEMORY_A})
    sync_now(a)
    sync_now(b)
    (name,) = resources(b)
    (extension(b) / "resources" / name).unlink()  # what Codex's consolidation does 7 days after its time
    sync_now(b)
    reminder(b, "codex")
    assert resources(b) == {}
    status = b.run("sync", "status")
    tools.exited(status)
    assert f"  from other machines -> {extension(b)}: Codex's memory extension" in status.out
    assert "laptop (changed there 20" in status.out
    assert "agent-memory sync" not in reminder(b, "codex")


def test_the_old_layout_moves_over_without_losing_a_line(machine, machine_b, bucket, monkeypatch):
    """Machine B synced the old way: its Codex files hold a line from machine A that lives nowhere else on B.
    After the move, that line is delivered as a resource, B's files are untouched, and B pushes no deletion."""
    set_up(machine, bucket, "laptop")
    b = set_up(machine_b, bucket, "desktop")
    own = "- learned on desktop: the build needs make 4\n"
    theirs = "- learned on laptop: the parser uses a lookahead of 2\n"
    write(b, {"MEMORY.md": f"# Memory\n{own}{theirs}"})
    # the old layout's record on B: the shared scope `user`, one version from each machine, B in step with the merge
    old = _old_layout(b, bucket, own, theirs, monkeypatch)
    before = snapshot(memories(b))
    done = sync_now(b)
    assert snapshot(memories(b)) == before
    pushed = [folder for folder in done["folders"] if folder["folder"] == str(memories(b))]
    assert pushed and pushed[0]["pushed"] == ["MEMORY.md"]
    moved = [text for text in resources(b).values() if "An earlier agent-memory sync wrote these lines" in text]
    assert len(moved) == 1 and theirs.strip() in moved[0] and own.strip() not in moved[0]
    assert "laptop" in moved[0]
    # the old scope is left as it was: no deletion, no new version
    assert old() == 3
    # once only
    sync_now(b)
    assert len([t for t in resources(b).values() if "An earlier agent-memory sync" in t]) == 1
    if not bucket.startswith("file://"):
        return
    # a machine that still syncs the old way pushes to the old scope: only its new lines are delivered
    later = f"# Memory\n{own}{theirs}- learned on laptop, still the old way: tabs in Makefiles\n"
    bases = ["20261201-000000-000000-0000000003"]
    four = Version("20261202-000000-000000-0000000004", "MEMORY.md", bases, later, "laptop", "t4")
    target = Path(bucket.removeprefix("file://")) / object_path("codex", "user", four)
    target.parent.mkdir(parents=True, mode=0o700)
    target.write_bytes(encode("codex", "user", four))
    before_count = len(resources(b))
    sync_now(b)
    new = [t for t in resources(b).values() if "still the old way" in t]
    assert len(resources(b)) == before_count + 1 and len(new) == 1 and theirs.strip() not in new[0]
    assert snapshot(memories(b)) == before


def _old_layout(machine: Machine, bucket: str, own: str, theirs: str, monkeypatch: pytest.MonkeyPatch):
    """Give `machine` the record the old layout left: versions of MEMORY.md in the shared scope `user` (one made on
    laptop, one on desktop, their merge), the folder in step with the merge. Returns a count of that scope's
    versions in this machine's record."""
    from agent_memory.config import settings
    from agent_memory.config.context import Context
    from agent_memory.sync.history import History
    from agent_memory.sync.index import FolderIndex

    with monkeypatch.context() as patched:
        for key, value in machine.env.items():
            patched.setenv(key, value)
        bucket = settings.bucket(Context().config)  # as the helper spells it
        history = History(bucket, "codex", "user")
        one = Version("20261201-000000-000000-0000000001", "MEMORY.md", [], f"# Memory\n{theirs}", "laptop", "t1")
        two = Version("20261201-000000-000000-0000000002", "MEMORY.md", [], f"# Memory\n{own}", "desktop", "t2")
        text = f"# Memory\n{own}{theirs}"
        three = Version("20261201-000000-000000-0000000003", "MEMORY.md", [one.id, two.id], text, "desktop", "t3")
        for version in (one, two, three):
            history.add(version, object_path("codex", "user", version))
            assert encode("codex", "user", version)
        history.save()
        index = FolderIndex(history.folder, memories(machine))
        info = (memories(machine) / "MEMORY.md").stat()
        index.files["MEMORY.md"] = {
            "size": info.st_size,
            "mtime_ns": info.st_mtime_ns,
            "hash": three.hash,
            "version": three.id,
        }
        index.save(synced=True)

    def count() -> int:
        with monkeypatch.context() as patched:
            for key, value in machine.env.items():
                patched.setenv(key, value)
            return len(History(bucket, "codex", "user").versions)

    return count


@pytest.mark.slow
def test_the_real_codex_consolidation_reads_our_extension(machine, machine_b, folder_store):
    """Codex 0.169.0 with its memories on, offline against a scripted model: a session start on B finds its memory
    folder changed (our extension's files) and spawns the consolidation agent, whose prompt names the extensions
    root; its scripted turn reads the workspace diff Codex made for it, which lists our instructions and resource.
    Codex runs the consolidation in the background, so the user's session waits (a bounded shell loop) until the
    consolidation's turn is over."""
    a, b = set_up(machine, folder_store, "laptop"), set_up(machine_b, folder_store, "desktop")
    write(a, {"MEMORY.md": MEMORY_A})
    sync_now(a)
    sync_now(b)
    (resource,) = resources(b)
    done = b.root / "consolidation-done"
    look = "cat phase2_workspace_diff.md; ls extensions/agent-memory/resources"
    wait = f"for i in $(seq 600); do [ -e {done} ] && exit 0; sleep 0.1; done; exit 1"
    with ConsolidatingModel(
        [Shell(wait), Say("Noted.")],
        consolidation=[Shell(look), Say("Consolidated.", action=done.touch)],
    ) as model:
        cli = Codex(b, model)
        config = cli.home / "config.toml"
        # the consolidation model must be one Codex has no metadata for, to get classic function tools (X9)
        config.write_text(
            config.read_text() + '\n[features]\nmemories = true\n\n[memories]\nconsolidation_model = "gpt-5.1"\n'
        )
        run = cli.run("When are releases cut?")
        model.assert_played()
        assert model.consolidation_remaining == []
        prompt = visible_text(model.consolidation_requests[0])
        results = model.tool_results()
    tools.exited(run)
    root = memories(b) / "extensions"
    assert f"Memory extensions (under {root}/):" in prompt
    assert "read each instructions.md first and follow it" in prompt
    (looked,) = [result for result in results if result.command == look]
    assert "A extensions/agent-memory/instructions.md" in looked.output
    assert f"A extensions/agent-memory/resources/{resource}" in looked.output
    assert resource in looked.output.split("```")[-1]  # and the folder lists it


def test_what_the_guard_refuses_or_a_link_is_never_delivered(machine, machine_b, folder_store, tmp_path):
    """A version in another machine's scope that holds a token (planted: that machine's own guard would have kept it)
    is not delivered, and said; a link planted where the resources go is never written through."""
    a, b = set_up(machine, folder_store, "laptop"), set_up(machine_b, folder_store, "desktop")
    write(a, {"MEMORY.md": MEMORY_A})
    sync_now(a)
    store = tmp_path / "store"
    (good,) = [p for p in (store / "sync" / "codex").rglob("*.json")]
    value = json.loads(good.read_text())
    text = "- the deploy token is ghp_" + "Ab3" * 12 + "\n"
    version = "20300101-000000-000000-00000000aa"
    value.update({"id": version, "path": "leak.md", "bases": [], "text": text, "hash": sha256(text.encode())})
    folder = good.parent.parent / path_key("leak.md")
    folder.mkdir(mode=0o700)
    (folder / f"{version}.json").write_text(json.dumps(value))

    done = sync_now(b)
    refused = [item for folder in done["folders"] for item in folder["refused"]]
    assert [item["path"] for item in refused] == ["laptop: leak.md"] and "secret" in refused[0]["why"]
    delivered = resources(b)
    assert len(delivered) == 1 and "ghp_" not in "".join(delivered.values())

    outside = b.root / "outside"
    outside.mkdir()
    shutil.rmtree(extension(b) / "resources")
    os.symlink(outside, extension(b) / "resources")
    write(a, {"MEMORY.md": MEMORY_A + "- one more line\n"})
    sync_now(a)
    done = sync_now(b)
    refused = [item for folder in done["folders"] for item in folder["refused"]]
    assert refused and "could not be written" in refused[0]["why"] and list(outside.iterdir()) == []
    # once the link is gone, the next sync delivers what could not be written: nothing is lost to a failed write
    os.unlink(extension(b) / "resources")
    sync_now(b)
    assert any("- one more line" in text for text in resources(b).values())


@pytest.mark.slow
def test_parallel_syncs_deliver_once_and_a_damaged_record_loses_nothing(machine, machine_b, folder_store):
    """Three syncs at once on B (the user's session, Codex's consolidation session and a `sync now`) deliver each
    change once: they take turns under the scope's lock. A record of deliveries that is damaged is started again:
    what was delivered comes again (nothing lost), and Codex's own files are still untouched."""
    a, b = set_up(machine, folder_store, "laptop"), set_up(machine_b, folder_store, "desktop")
    write(a, {"MEMORY.md": MEMORY_A, "memory_summary.md": SUMMARY_A})
    write(b, {"MEMORY.md": MEMORY_B})
    sync_now(a)
    before = snapshot(memories(b))
    assert not list(b.state.rglob("*machine-id*"))  # made by the first of them: all must agree on it
    procs = [b.popen("sync", "now", "--json") for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    assert len(resources(b)) == 2 and snapshot(memories(b)) == before
    assert [p.name for p in b.state.rglob("*machine-id*")] == ["machine-id"]

    record = next(p for p in b.state.rglob("delivered.json"))
    record.write_bytes(record.read_bytes()[:40])  # cut short, as by a full disk
    sync_now(b)
    texts = list(resources(b).values())
    assert len(texts) == 4 and sum("lookahead of 2" in text for text in texts) == 2
    assert snapshot(memories(b)) == before
