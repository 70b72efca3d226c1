"""`agent-memory sync`: the runtimes' own memory (Claude Code's auto memory, Codex's memories) on two machines, through
a folder store and through the Hub emulator (the real huggingface_hub and hf_xet): push at Stop, pull at session
start, merges, conflicts that keep both texts, deletions and restores, the secret guard, hostile versions, the outbox,
and the cost of the hooks when nothing changed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import tools
from agent_memory.contents import sha256
from agent_memory.sync import folders
from agent_memory.sync.folders import Moved
from agent_memory.sync.versions import path_key
from conftest import BUCKET, Machine

# Claude Code's memory folder of a checkout in no repository: see conftest's outside_tmp
pytestmark = pytest.mark.outside_tmp

TOKEN_LINE = "The deploy token is ghp_" + "Ab3" * 12 + " for now."


def claude_folder(machine: Machine, checkout: Path | None = None) -> Path:
    """Claude Code's auto memory folder for a checkout that is not in a git repository (keyed by its own path)."""
    key = re.sub(r"[^a-zA-Z0-9]", "-", str((checkout or machine.work).resolve()))
    return machine.home / ".claude" / "projects" / key / "memory"


def codex_folder(machine: Machine) -> Path:
    return machine.home / ".codex" / "memories"


def hook(machine: Machine, event: str, agent: str = "claude", cwd: Path | None = None):
    payload = json.dumps({"cwd": str(cwd or machine.work), "hook_event_name": event})
    name = {"SessionStart": "session-start", "Stop": "stop", "SessionEnd": "session-end"}[event]
    return machine.run("hook", name, "--agent", agent, "--json", input=payload)


def reminder(machine: Machine, agent: str = "claude", cwd: Path | None = None) -> str:
    started = hook(machine, "SessionStart", agent, cwd)
    tools.exited(started)
    return started.json["context"]


def sync_now(machine: Machine, *args: str) -> dict:
    done = machine.run("sync", "now", "--json", *args)
    tools.exited(done)
    return done.json


def store_objects(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted((store / "sync").rglob("*.json"))}


def two_machines(machine: Machine, machine_b: Machine, bucket: str, agent: str = "claude") -> tuple[Machine, Machine]:
    """Machine A, and machine B with the project checked out at another path; both sync `agent`'s memory."""
    machine_b.work = machine_b.root / "elsewhere" / "parser"
    machine_b.work.mkdir(parents=True)
    for one in (machine, machine_b):
        one.setup(bucket)
        tools.exited(one.run("sync", "enable", "--agent", agent))
    return machine, machine_b


def diverge(a: Machine, b: Machine, base: str, on_a: str, on_b: str) -> None:
    """MEMORY.md synced as `base` on both machines, then edited on each: A's edit is synced, B's not yet (B's next
    sync meets both)."""
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text(base)
    sync_now(a)
    sync_now(b)
    (claude_folder(a) / "MEMORY.md").write_text(on_a)
    (claude_folder(b) / "MEMORY.md").write_text(on_b)
    sync_now(a)


def test_claude_memory_reaches_another_checkout_and_its_worktree(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(b.work)], check=True)
    subprocess.run([*git, "-C", str(b.work), "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    worktree = b.root / "elsewhere" / "parser-wt"
    subprocess.run([*git, "-C", str(b.work), "worktree", "add", "-q", str(worktree)], check=True)
    mine = claude_folder(a)
    (mine / "topics").mkdir(parents=True)
    (mine / "MEMORY.md").write_text("# Memory index\n- [Parser](topics/parser.md): lookahead 2\n")
    (mine / "topics" / "parser.md").write_text("---\nname: parser\n---\nThe parser uses a lookahead of 2.\n")

    stopped = hook(a, "Stop")
    tools.exited(stopped)
    assert "2 files pushed" in stopped.err
    context = reminder(b, cwd=worktree)  # a session in the worktree: Claude Code uses the main checkout's folder
    theirs = claude_folder(b)
    assert (theirs / "MEMORY.md").read_bytes() == (mine / "MEMORY.md").read_bytes()
    assert (theirs / "topics" / "parser.md").read_bytes() == (mine / "topics" / "parser.md").read_bytes()
    assert "- [Parser](topics/parser.md): lookahead 2" in context and "updated here: 2 memory files" in context

    # a second session with nothing changed anywhere: nothing written, nothing said
    before = (theirs / "MEMORY.md").stat().st_mtime_ns
    assert "agent-memory sync" not in reminder(b, cwd=worktree)
    assert (theirs / "MEMORY.md").stat().st_mtime_ns == before
    status = b.run("sync", "status", "--json").json
    claude = next(agent for agent in status["agents"] if agent["agent"] == "claude")
    assert claude["enabled"] and claude["folders"][0]["files"] == 2 and claude["folders"][0]["pulled"] == 2


def test_codex_memories_follow_the_user(machine, machine_b, folder_store):
    """Into Codex's memory extension folder, never into its own generated files (see test_codex_extension)."""
    a, b = two_machines(machine, machine_b, folder_store, "codex")
    mine = codex_folder(a)
    (mine / "rollout_summaries").mkdir(parents=True)
    (mine / "memory_summary.md").write_text("- The user prefers small commits.\n")
    (mine / "rollout_summaries" / "one.md").write_text("Session one: fixed the parser.\n")
    (mine / "phase2_workspace_diff.md").write_text("Codex's own working file\n")
    assert "2 files pushed" in hook(a, "Stop", "codex").err  # Codex's working files are no memories
    context = reminder(b, "codex")
    theirs = codex_folder(b)
    assert not (theirs / "memory_summary.md").exists() and not (theirs / "phase2_workspace_diff.md").exists()
    (delivered,) = (theirs / "extensions" / "agent-memory" / "resources").iterdir()
    assert "- The user prefers small commits." in delivered.read_text()
    assert "- The user prefers small commits." in context


def test_an_edit_of_the_same_size_with_its_old_modification_time_is_pushed(machine, machine_b, folder_store):
    """`cp -p`, `rsync -a` and `touch -r` put a file's modification time back: size and mtime alone would call the
    edit unchanged, and it would never be pushed (the change time, which no one can set, says it changed)."""
    a, b = two_machines(machine, machine_b, folder_store)
    memory = claude_folder(a) / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("- The pool holds 8 sockets.\n")
    assert "1 file pushed" in hook(a, "Stop").err
    before = memory.stat()
    memory.write_text("- The pool holds 9 sockets.\n")  # the same size
    os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert memory.stat().st_size == before.st_size and memory.stat().st_mtime_ns == before.st_mtime_ns
    assert "1 file pushed" in hook(a, "Stop").err
    reminder(b)
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- The pool holds 9 sockets.\n"


def test_a_clean_concurrent_edit_merges(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    lines = [f"line {n}\n" for n in range(1, 9)]
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("".join(lines))
    sync_now(a)
    sync_now(b)
    (claude_folder(a) / "MEMORY.md").write_text("".join(["line 1 (edited on A)\n", *lines[1:]]))
    (claude_folder(b) / "MEMORY.md").write_text("".join([*lines[:-1], "line 8 (edited on B)\n", "line 9 (B)\n"]))
    sync_now(a)
    merged = sync_now(b)["folders"][0]
    assert merged["merged"] == ["MEMORY.md"] and not merged["conflicts"]
    sync_now(a)
    expected = "".join(["line 1 (edited on A)\n", *lines[1:-1], "line 8 (edited on B)\n", "line 9 (B)\n"])
    assert (claude_folder(a) / "MEMORY.md").read_text() == expected
    assert (claude_folder(b) / "MEMORY.md").read_text() == expected


def test_two_machines_appending_to_memory_glue_and_drop_no_line(machine, machine_b, bucket):
    """Both machines append to MEMORY.md, A without a final newline, and each adds a code fence: the merge keeps
    every line of both, B's (the merging machine's) first, none glued, both fences whole, on both machines."""
    a, b = two_machines(machine, machine_b, bucket)
    base = "# Memory\n- old\n"
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text(base)
    sync_now(a)
    sync_now(b)
    on_a = "Test with:\n```sh\nmake test\n```\n- learned on A"
    on_b = "Deploy with:\n```sh\nmake deploy\n```\n- learned on B\n"
    (claude_folder(a) / "MEMORY.md").write_text(base + on_a)
    (claude_folder(b) / "MEMORY.md").write_text(base + on_b)
    sync_now(a)
    merged = sync_now(b)["folders"][0]
    assert merged["merged"] == ["MEMORY.md"] and not merged["conflicts"]
    sync_now(a)
    expected = base + on_b + on_a
    for one in (a, b):
        text = (claude_folder(one) / "MEMORY.md").read_text()
        assert text == expected
        assert "- learned on B- learned on A" not in text and text.count("```sh\n") == 2 and text.count("```\n") == 2


def test_a_conflicting_edit_keeps_both_texts_and_is_reported(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    diverge(a, b, "# Index\n- release: Tuesday\n", "# Index\n- release: Wednesday\n", "# Index\n- release: Friday\n")
    done = b.run("sync", "now", "--json")
    tools.exited(done)
    assert "Conflict: MEMORY.md" in done.err
    conflict = done.json["folders"][0]["conflicts"][0]
    assert (claude_folder(b) / "MEMORY.md").read_text() == "# Index\n- release: Friday\n"  # this machine's text
    kept = Path(conflict["kept"][0])
    assert kept.read_text() == "# Index\n- release: Wednesday\n"
    assert not kept.is_relative_to(b.home / ".claude")  # outside what Claude Code loads
    assert conflict["show"] == "agent-memory sync history MEMORY.md --agent claude"

    status = b.run("status", "--json").json
    assert [item["path"] for item in status["sync"]["conflicts"]] == ["MEMORY.md"]
    context = reminder(b)
    assert "MEMORY.md was changed here and on another machine" in context and "sync history MEMORY.md" in context
    shown = b.run("sync", "history", "MEMORY.md", "--json").json
    assert sum(version["head"] for version in shown["versions"]) == 2 and shown["kept"] == conflict["kept"]

    # machine A sees it too, with B's text beside; a decision on B (an edit) resolves it everywhere
    again = sync_now(a)["folders"][0]
    assert again["conflicts"] and (claude_folder(a) / "MEMORY.md").read_text().endswith("Wednesday\n")
    (claude_folder(b) / "MEMORY.md").write_text("# Index\n- release: Wednesday or Friday (ask)\n")
    assert not sync_now(b)["folders"][0]["conflicts"]
    assert sync_now(a)["folders"][0]["pulled"] == ["MEMORY.md"]
    assert (claude_folder(a) / "MEMORY.md").read_text() == "# Index\n- release: Wednesday or Friday (ask)\n"
    assert b.run("status", "--json").json["sync"]["conflicts"] == []
    assert a.run("status", "--json").json["sync"]["conflicts"] == []


def test_a_deletion_propagates_and_is_restorable(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "old.md").write_text("An old memory.\n")
    (claude_folder(a) / "MEMORY.md").write_text("- [Old](old.md)\n")  # one deletion of two files: not held
    sync_now(a)
    sync_now(b)
    assert (claude_folder(b) / "old.md").is_file()
    (claude_folder(a) / "old.md").unlink()
    sync_now(a)
    assert sync_now(b)["folders"][0]["pulled"] == ["old.md"]
    assert not (claude_folder(b) / "old.md").exists()

    versions = b.run("sync", "history", "old.md", "--json").json["versions"]
    assert [v["deleted"] for v in versions] == [False, True] and versions[-1]["head"]
    restored = b.run("sync", "restore", "old.md", "--version", versions[0]["id"], "--json")
    tools.exited(restored)
    assert (claude_folder(b) / "old.md").read_text() == "An old memory.\n"
    sync_now(a)
    assert (claude_folder(a) / "old.md").read_text() == "An old memory.\n"
    assert len(a.run("sync", "history", "old.md", "--json").json["versions"]) == 3  # nothing was removed

    malformed = tools.exited(b.run("sync", "restore", "old.md", "--version", "../x"), 2)
    assert "is not a version id" in malformed.err
    wrong = b.run("sync", "restore", "old.md", "--version", "20200101-000000-000000-0000000000")
    tools.exited(wrong, 2)
    assert "Next: agent-memory sync history old.md" in wrong.err


def test_history_with_sync_off_here_says_so_and_shows_what_other_machines_synced(machine, machine_b, bucket, tmp_path):
    """`sync history` on a machine whose sync is off: a file another machine synced is answered from the bucket
    (one listing of that file's folder), any other file is refused with the sync being off as the reason and the
    command that turns it on; a file whose versions this machine knows is answered without the bucket."""
    machine_b.work = machine_b.root / "elsewhere" / "parser"
    machine_b.work.mkdir(parents=True)
    a, b = machine, machine_b
    for one in (a, b):
        one.setup(bucket)
    tools.exited(b.run("sync", "enable", "--agent", "claude"))
    claude_folder(b).mkdir(parents=True)
    (claude_folder(b) / "MEMORY.md").write_text("- synced by b\n")
    sync_now(b)

    shown = a.run("sync", "history", "MEMORY.md", "--json")
    tools.exited(shown)
    (version,) = shown.json["versions"]
    assert (shown.json["agent"], shown.json["path"], version["head"], shown.json["here"]) == (
        "claude",
        "MEMORY.md",
        True,
        None,
    )
    text = tools.exited(a.run("sync", "history", "MEMORY.md")).out
    assert f"  {version['id']} " in text
    assert (
        "  the sync of Claude Code's own memory is off on this machine: these are the versions other machines synced "
        "(turn it on: agent-memory sync enable --agent claude)"
    ) in text
    assert not claude_folder(a).exists()  # history writes nothing into the runtime's folder

    for args, whose, agent in (
        ((), "Codex's and Claude Code's own memories", "both"),
        (("--agent", "codex"), "Codex's own memory", "codex"),
    ):
        refused = a.run("sync", "history", "NOTES.md", *args)
        tools.exited(refused, 2, about=args)
        assert refused.err == (
            f"Error: The sync of {whose} is off on this machine, and no other machine synced NOTES.md for this "
            f"folder.\nNext: agent-memory sync enable --agent {agent}\n"
        )
    unknown = tools.exited(b.run("sync", "history", "NOTES.md"), 2)  # synced there: the file is unknown, not the sync
    assert unknown.err == (
        "Error: NOTES.md is not a file of Claude Code's synced memory for this folder.\n"
        "Next: agent-memory sync status (lists the synced folders)\n"
    )

    if bucket.startswith("file://"):  # a file known here is answered from what this machine knows: no bucket
        store = Path(bucket.removeprefix("file://"))
        store.rename(tmp_path / "unmounted")
        tools.exited(b.run("sync", "history", "MEMORY.md"))
        tools.exited(a.run("sync", "history", "MEMORY.md"))
        (tmp_path / "unmounted").rename(store)


def test_a_file_with_a_token_stays_local_and_is_reported(machine, machine_b, folder_store, tmp_path):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "deploy.md").write_text(f"# Deploy\n\n{TOKEN_LINE}\n")
    (claude_folder(a) / "MEMORY.md").write_text("- [Deploy](deploy.md)\n")
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    refused = done.json["folders"][0]["refused"]
    where = claude_folder(a) / "deploy.md"
    fix = f"take the credential out of {where} (or out of its name), then agent-memory sync now"
    assert refused == [{"path": "deploy.md", "why": refused[0]["why"], "next": fix}]
    assert "line 3: GitHub token" in refused[0]["why"] and "Not synced: deploy.md" in done.err
    assert done.json["folders"][0]["pushed"] == ["MEMORY.md"]
    assert not any(b"ghp_" in data for data in store_objects(tmp_path / "store").values())
    sync_now(b)
    assert not (claude_folder(b) / "deploy.md").exists() and (claude_folder(b) / "MEMORY.md").is_file()


def test_hostile_versions_are_refused(machine, machine_b, folder_store, tmp_path):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- fine\n")
    sync_now(a)
    store = tmp_path / "store"
    good = next(iter(store_objects(store)))
    template = json.loads((store / good).read_text())

    def plant(path: str, text: str, *, key: str | None = None, size: int = 0) -> None:
        version = f"20300101-000000-00000{len(path) % 10}-{sha256(path.encode())[:10]}"
        value = {**template, "id": version, "path": path, "bases": [], "text": text + "x" * size}
        value["hash"] = sha256(value["text"].encode())
        folder = store / "sync" / "claude" / "demo" / (key or path_key(path))
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        (folder / f"{version}.json").write_text(json.dumps(value))

    outside = b.root / "outside"
    outside.mkdir()
    plant("../escape.md", "out of the folder")
    plant("/etc/absolute.md", "absolute")
    plant(".hidden/x.md", "hidden")
    plant("big.md", "", size=300 * 1024)
    plant("linked/inside.md", "through a link")
    plant("mismatch.md", "wrong folder", key="0" * 20)
    os.symlink(outside, store / "sync" / "claude" / "demo" / "ffffffffffffffffffff")
    claude_folder(b).mkdir(parents=True)
    os.symlink(outside, claude_folder(b) / "linked")
    os.symlink(outside / "bashrc", claude_folder(b) / "MEMORY.md")  # a planted link where a pulled file goes

    done = b.run("sync", "now", "--json")
    tools.exited(done)
    whys = " | ".join(item["why"] for item in done.json["refused"])
    assert len(done.json["refused"]) == 6, done.json["refused"]  # all but linked/inside.md, refused where it goes
    assert whys.count("leaves the folder") == 3  # ../escape.md, /etc/absolute.md, .hidden/x.md
    assert "text of at most 262144 bytes" in whys and "does not match its folder" in whys
    assert "symbolic link" in whys or "link" in whys
    folder_refused = done.json["folders"][0]["refused"]
    assert [item["path"] for item in folder_refused] == ["MEMORY.md"]
    linked = done.json["folders"][0]["blocked"]  # a linked folder is not synced, said once for the folder
    assert [(item["folder"], item["why"]) for item in linked] == [(str(claude_folder(b) / "linked"), "it is a link")]
    assert list(outside.iterdir()) == []  # nothing written through either link
    assert sorted(p.name for p in claude_folder(b).iterdir()) == ["MEMORY.md", "linked"]
    assert not (b.root / "escape.md").exists() and not (claude_folder(b).parent / "escape.md").exists()


def test_the_outbox_keeps_a_failed_push(machine, machine_b, folder_store, tmp_path):
    a, b = two_machines(machine, machine_b, folder_store)
    store = tmp_path / "store"
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- kept while offline\n")
    store.rename(tmp_path / "unmounted")
    stopped = hook(a, "Stop")
    tools.exited(stopped)
    assert "1 file kept pending on this machine" in stopped.err and "pushed" not in stopped.err  # not sent yet
    listed = a.run("pending", "--json").json
    assert [entry["files"] for entry in listed["sync"]] == [["MEMORY.md"]]
    assert "1 uploads waiting" in a.run("status").out
    (tmp_path / "unmounted").rename(store)
    retried = a.run("pending", "retry", "--json")
    tools.exited(retried)
    assert retried.json["results"][0]["status"] == "saved"
    sync_now(b)
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- kept while offline\n"


def test_sync_disable_stops_it_and_deletes_nothing(machine, machine_b, folder_store, tmp_path):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- first\n")
    sync_now(a)
    objects = store_objects(tmp_path / "store")
    off = a.run("sync", "disable", "--agent", "claude", "--json")
    tools.exited(off)
    assert off.json["enabled"] == [] and "Nothing was deleted" in a.run("sync", "disable", "--agent", "claude").out
    (claude_folder(a) / "MEMORY.md").write_text("- first\n- second\n")
    assert hook(a, "Stop").err == ""
    assert store_objects(tmp_path / "store") == objects
    assert (claude_folder(a) / "MEMORY.md").read_text() == "- first\n- second\n"
    tools.exited(a.run("sync", "now"), 2)  # nothing is enabled: says how to enable it
    assert "agent-memory sync enable --agent claude" in a.run("sync", "now").err


def test_the_hooks_cost_nothing_when_nothing_changed(machine, machine_b, hub):
    a, b = two_machines(machine, machine_b, BUCKET)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- one\n")
    (claude_folder(a) / "deploy.md").write_text(f"{TOKEN_LINE}\n")  # kept here by the guard, and reported once
    sync_now(a)
    sync_now(b)
    hub.reset_requests()
    assert hook(a, "Stop").err == "" and hook(a, "SessionEnd").err == ""
    assert hub.requests == []  # a push with nothing changed here: one stat per file, no network
    reminder(b)
    # a pull with nothing changed in the bucket: one question (the feed's stream is the follower's that the session
    # started; once it follows, the next sessions ask nothing: test_feed_follower)
    asked = [endpoint for _method, endpoint, _path in hub.requests if endpoint != "events"]
    assert asked == ["info"], hub.requests


def test_a_runtime_write_during_sync_is_never_lost(machine, folder_store, tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("the runtime's newest text\n")
    with pytest.raises(Moved):  # what sync read before was another text: it does not replace the runtime's
        folders.write(folder, "MEMORY.md", "pulled text\n", folders.read(folder, "MEMORY.md").hash[::-1])
    assert (folder / "MEMORY.md").read_text() == "the runtime's newest text\n"
    assert [p.name for p in folder.iterdir()] == ["MEMORY.md"]  # no temporary file left


def test_concurrent_syncs_on_two_machines_lose_no_version(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    for one in (a, b):
        claude_folder(one).mkdir(parents=True)
    processes = []
    for round_ in range(3):
        for name, one in (("a", a), ("b", b)):
            (claude_folder(one) / f"{name}-{round_}.md").write_text(f"{name} {round_}\n")
        processes += [one.popen("sync", "now", "--json") for one in (a, b, a, b)]
    for process in processes:
        tools.exited(tools.finished(process, timeout=120), (0, 75))
    sync_now(a)
    sync_now(b)
    sync_now(a)
    expected = sorted(f"{name}-{n}.md" for name in "ab" for n in range(3))
    for one in (a, b):
        assert sorted(p.name for p in claude_folder(one).iterdir()) == expected


def test_damaged_records_start_again_without_losing_a_byte(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- one\n")
    (claude_folder(a) / "topic.md").write_text("topic\n")
    sync_now(a)
    sync_now(b)
    for record in (b.state / "state" / "sync").rglob("*.json"):
        record.write_bytes(record.read_bytes()[:20])  # torn by a crash
    (claude_folder(b) / "topic.md").write_text("topic, edited on B after the crash\n")
    done = sync_now(b)["folders"][0]
    # the file whose text the bucket has is in step again; the other is kept whole on both sides
    assert done["in_step"] == 1 and [item["path"] for item in done["conflicts"]] == ["topic.md"]
    assert Path(done["conflicts"][0]["kept"][0]).read_text() == "topic\n"
    assert (claude_folder(b) / "topic.md").read_text() == "topic, edited on B after the crash\n"
    assert sync_now(a)["folders"][0]["conflicts"][0]["path"] == "topic.md"
    assert (claude_folder(a) / "MEMORY.md").read_text() == "- one\n"


@pytest.mark.parametrize(
    ("agent", "whose"),
    [
        ("claude", "Claude Code's own memory"),
        ("codex", "Codex's own memory"),
        ("both", "Codex's and Claude Code's own memories"),  # each keeps its own: not "Codex and Claude Code's"
    ],
)
def test_sync_enable_and_disable_say_whose_memory(machine, folder_store, agent, whose):
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    on = tools.exited(machine.run("sync", "enable", "--agent", agent))
    assert on.out.startswith(f"Sync of {whose} is on. It runs at session start and end")
    off = tools.exited(machine.run("sync", "disable", "--agent", agent))
    assert off.out == f"Sync of {whose} is off. Nothing was deleted, here or in the bucket.\n"


def test_bootstrap_sync_turns_it_on_for_the_chosen_agents(machine, folder_store):
    args = ("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "claude", "--sync")
    done = tools.exited(machine.run(*args, "--json"))
    assert done.json["sync"] == {"requested": True, "enabled": ["claude"], "changed": True}
    again = tools.exited(machine.run(*args))
    assert "sync of the agents' own memory unchanged: claude" in again.out
    assert "Nothing needed changing" in again.out
    status = machine.run("sync", "status", "--json").json
    assert [agent["agent"] for agent in status["agents"] if agent["enabled"]] == ["claude"]


def test_sync_status_says_where_it_looks_before_there_is_anything_to_sync(machine, folder_store):
    """Before a runtime's first memory its folder does not exist: sync is on, has nothing here to sync, and says
    which folder it watches, before a sync ran and after one found nothing."""
    machine.setup(folder_store)
    tools.exited(machine.run("sync", "enable", "--agent", "both"))
    claude, codex = claude_folder(machine), codex_folder(machine)

    def shown() -> tuple[dict[str, dict], str]:
        as_json, text = machine.run("sync", "status", "--json"), machine.run("sync", "status")
        tools.exited(as_json)
        tools.exited(text)
        return {agent["agent"]: agent for agent in as_json.json["agents"]}, text.out

    agents, text = shown()
    assert agents["claude"]["enabled"] and agents["codex"]["enabled"]
    (watched,) = agents["claude"]["folders"]
    assert watched == {
        "agent": "claude",
        "scope": "demo",
        "folder": str(claude),
        "exists": False,
        "files": 0,
        "pushed": 0,
        "pulled": 0,
        "conflicts": [],
        "blocked": [],
        "held": [],
        "source": f"Claude Code's folder for {machine.work}",
        "synced": True,
        "last_sync": None,
        "arrived": [],
    }
    assert [(f["folder"], f["exists"]) for f in agents["codex"]["folders"]] == [(str(codex), False)]
    assert "claude: on\n" in text and "codex: on\n" in text
    assert f"  demo -> {claude}: nothing here to sync yet: the folder does not exist (Claude Code creates it" in text
    assert re.search(f"  machine-[0-9a-f]{{16}} -> {re.escape(str(codex))}: nothing here to sync yet: the folder", text)
    assert "last sync never" in text

    sync_now(machine)  # finds nothing, creates nothing
    agents, text = shown()
    (watched,) = agents["claude"]["folders"]
    assert not watched["exists"] and watched["last_sync"] and not claude.exists()
    assert f"  demo -> {claude}: nothing here to sync yet" in text and "last sync never" not in text

    claude.mkdir(parents=True)
    (claude / "MEMORY.md").write_text("- the first memory\n")
    sync_now(machine)
    agents, text = shown()
    (watched,) = agents["claude"]["folders"]
    assert (watched["exists"], watched["files"], watched["pushed"]) == (True, 1, 1)
    (line,) = [line for line in text.splitlines() if line.startswith(f"  demo -> {claude}: ")]
    assert line.startswith(f"  demo -> {claude}: 1 file in step, 1 pushed, 0 pulled, 0 conflicts, last sync 20")

    shutil.rmtree(claude)  # a folder that had files is not "nothing to sync": it is gone, and deletes nothing
    for synced in (False, True):
        agents, text = shown()
        (watched,) = agents["claude"]["folders"]
        assert (watched["exists"], watched["files"]) == (False, 1)
        said = f"  Not synced: {claude} (claude demo): it is gone; nothing in it is deleted, here or elsewhere. Next: "
        fix = f"mkdir -p {claude} && agent-memory sync now (its files come back from the bucket)"
        assert f"{said}{fix}\n" in text
        gone = {"agent": "claude", "scope": "demo", "folder": str(claude), "why": "it is gone", "next": fix}
        assert watched["blocked"] == [gone]
        assert f"  demo -> {claude}: nothing here to sync yet" not in text
        if not synced:
            sync_now(machine)
    assert not claude.exists()  # nothing written there either


def test_sync_status_says_when_no_project_is_mapped_for_claude_code(machine, folder_store):
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    tools.exited(machine.run("sync", "enable", "--agent", "claude"))
    shown = machine.run("sync", "status")
    tools.exited(shown)
    assert "claude: on\n  nothing to sync yet: no project is mapped on this machine" in shown.out
    assert "agent-memory project map NAME" in shown.out


def test_a_killed_sync_loses_nothing(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    texts = {f"topic-{n}.md": f"memory {n}\n" * 50 for n in range(40)}
    for delay in (0.3, 0.8, 1.5):
        for name, text in texts.items():
            (claude_folder(a) / name).write_text(text + f"round {delay}\n")
        started = a.popen("sync", "now")
        time.sleep(delay)
        started.kill()  # wherever it was: the outbox, the records, the bucket
        started.communicate(timeout=60)
    tools.exited(a.run("sync", "now"), (0, 75))
    tools.exited(a.run("pending", "retry"), 0)
    sync_now(b)
    for name, text in texts.items():
        assert (claude_folder(b) / name).read_text() == text + "round 1.5\n"
        assert (claude_folder(a) / name).read_text() == text + "round 1.5\n"
    assert not sync_now(a)["folders"][0]["conflicts"]


def test_restoring_a_version_decides_a_conflict(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    diverge(a, b, "- release: Tuesday\n", "- release: Wednesday\n", "- release: Friday\n")
    conflict = sync_now(b)["folders"][0]["conflicts"][0]
    theirs = next(head for head in conflict["heads"] if Path(conflict["kept"][0]).parent.name == head)
    restored = tools.exited(b.run("sync", "restore", "MEMORY.md", "--version", theirs, "--json"))
    assert not restored.json["folders"][0]["conflicts"] and restored.json["folders"][0]["pushed"] == ["MEMORY.md"]
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- release: Wednesday\n"
    assert not sync_now(a)["folders"][0]["conflicts"]
    assert (claude_folder(a) / "MEMORY.md").read_text() == "- release: Wednesday\n"
    history = b.run("sync", "history", "MEMORY.md", "--json").json
    assert [v["head"] for v in history["versions"]].count(True) == 1 and history["kept"] == []


@pytest.mark.parametrize(
    ("given", "stop", "pull"),
    [(None, 5, 6), ("3", 3, 3), ("20", 20, 20), ("nonsense", 5, 6), ("0", 5, 6), ("-4", 5, 6)],
)
def test_the_hooks_budget_is_the_stops_and_the_session_starts(monkeypatch, given, stop, pull):
    """AGENT_MEMORY_HOOK_BUDGET sets the network time of a Stop (its retries and push) and of a SessionStart's pull
    (the tests scale it with the load); without it, 5 and 6 seconds."""
    from agent_memory.hooks.budgets import budget_seconds

    if given is None:
        monkeypatch.delenv("AGENT_MEMORY_HOOK_BUDGET", raising=False)
    else:
        monkeypatch.setenv("AGENT_MEMORY_HOOK_BUDGET", given)
    assert (budget_seconds("stop"), budget_seconds("session-start")) == (stop, pull)
