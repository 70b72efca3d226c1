"""`agent-memory sync` tells each side what happened: a conflict reaches the first machine to push at its next pull,
the side that deleted a file is told so, names that hold a token stay here, lines from elsewhere say whose they
are, and `sync history` shows texts and differences."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import test_sync
from test_contract import keys
from test_sync import claude_folder, reminder, sync_now, two_machines

import tools
from agent_memory import contract
from agent_memory.contents import sha256
from agent_memory.sync.versions import path_key
from conftest import BUCKET

pytestmark = pytest.mark.outside_tmp


class Stored:
    """The sync's objects of either store, read and planted the same way: a folder store's files, or the Hub
    emulator's bucket (planted as an older helper, or a hand, would put them there)."""

    def __init__(self, request: pytest.FixtureRequest, bucket: str) -> None:
        self.folder = Path(bucket.removeprefix("file://")) if bucket.startswith("file://") else None
        self.hub = None if self.folder else request.getfixturevalue("hub")

    def objects(self) -> dict[str, bytes]:
        if self.folder is not None:
            return test_sync.store_objects(self.folder)  # by their paths in the store: `sync/...`
        paths = [path for path in self.hub.list_paths(BUCKET) if path.startswith("sync/")]
        return {path: self.hub.read_file(BUCKET, path) for path in paths}

    def plant(self, path: str, data: bytes) -> None:
        if self.folder is not None:
            (self.folder / path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            (self.folder / path).write_bytes(data)
        else:
            self.hub.put_file(BUCKET, path, data)


def _on_both(a, b, text: str) -> None:
    """MEMORY.md made on A with `text`, and in step on A and B."""
    claude_folder(a).mkdir(parents=True, exist_ok=True)
    (claude_folder(a) / "MEMORY.md").write_text(text)
    sync_now(a)
    sync_now(b)


def _diverge(a, b, mine: str | None, theirs: str) -> None:
    """MEMORY.md in step on both, then changed on A (`mine`; None: deleted) and pushed, then changed on B and
    pushed: B meets the conflict. Two other files stay beside it: one deletion is not many at once."""
    claude_folder(a).mkdir(parents=True)
    for name in ("topic-1.md", "topic-2.md"):
        (claude_folder(a) / name).write_text(f"{name}\n")
    _on_both(a, b, "# Index\n- release: Tuesday\n")
    if mine is None:
        (claude_folder(a) / "MEMORY.md").unlink()
    else:
        (claude_folder(a) / "MEMORY.md").write_text(mine)
    (claude_folder(b) / "MEMORY.md").write_text(theirs)
    sync_now(a)
    assert sync_now(b)["folders"][0]["conflicts"]


def test_the_first_machine_to_push_is_told_at_its_next_session_start(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    _diverge(a, b, "# Index\n- release: Wednesday\n", "# Index\n- release: Friday\n")
    assert a.run("status", "--json").json["sync"]["conflicts"] == []  # nothing pulled yet: nothing known

    context = reminder(a)  # one pull
    assert "MEMORY.md was changed here and on another machine on the same lines" in context
    assert "sync history MEMORY.md" in context
    assert (claude_folder(a) / "MEMORY.md").read_text() == "# Index\n- release: Wednesday\n"  # its text, untouched
    (conflict,) = a.run("status", "--json").json["sync"]["conflicts"]
    assert conflict["path"] == "MEMORY.md" and not conflict["deleted_here"]
    status = tools.exited(a.run("sync", "status"))
    assert "1 conflicts" in status.out and "Conflict: MEMORY.md (claude) was changed here and" in status.out
    with open(conflict["kept"][0]) as kept:
        assert kept.read() == "# Index\n- release: Friday\n"

    # settled as any conflict: an edit here decides, everywhere
    (claude_folder(a) / "MEMORY.md").write_text("# Index\n- release: Wednesday or Friday (ask)\n")
    assert not sync_now(a)["folders"][0]["conflicts"]
    assert sync_now(b)["folders"][0]["pulled"] == ["MEMORY.md"]
    assert (claude_folder(b) / "MEMORY.md").read_text() == "# Index\n- release: Wednesday or Friday (ask)\n"
    for one in (a, b):
        assert one.run("status", "--json").json["sync"]["conflicts"] == []
    assert "MEMORY.md" not in reminder(a)


def test_the_side_that_deleted_a_file_is_told_it_deleted_it(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    _diverge(a, b, None, "# Index\n- release: Friday\n")
    told = tools.exited(b.run("sync", "now"))
    assert "MEMORY.md (claude) was changed here and deleted on another machine" in told.err

    context = reminder(a)
    assert "MEMORY.md was deleted here and changed on another machine; it stays deleted here" in context
    assert not (claude_folder(a) / "MEMORY.md").exists()
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    assert done.json["folders"][0]["conflicts"][0]["deleted_here"] is True
    assert "MEMORY.md (claude) was deleted here and changed on another machine; it stays deleted here" in done.err
    assert "same lines" not in done.err


def test_a_token_in_a_name_keeps_the_file_here_and_is_never_printed(machine, machine_b, bucket, request):
    a, b = two_machines(machine, machine_b, bucket)
    stored = Stored(request, bucket)
    token = "ghp_" + "Ab3" * 12
    mine = claude_folder(a)
    (mine / f"keys-{token}").mkdir(parents=True)
    (mine / f"deploy-{token}.md").write_text("How to deploy.\n")
    (mine / f"keys-{token}" / "notes.md").write_text("Where the keys are.\n")
    (mine / "MEMORY.md").write_text("- deploy notes\n")
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    folder = done.json["folders"][0]
    assert folder["pushed"] == ["MEMORY.md"]
    assert sorted(item["path"] for item in folder["refused"]) == ["deploy-[redacted].md", "keys-[redacted]/notes.md"]
    assert all("its name looks like it holds a secret (GitHub token)" in item["why"] for item in folder["refused"])
    assert "Not synced: deploy-[redacted].md" in done.err
    assert token not in done.out + done.err
    objects = stored.objects()
    assert objects and not any(b"ghp_" in data or "ghp_" in name for name, data in objects.items())

    stopped = test_sync.hook(a, "Stop")  # held: unchanged, the hook has nothing to do
    tools.exited(stopped)
    assert token not in stopped.out + stopped.err and "pushed" not in stopped.err

    # a version with such a name in the bucket (an older helper pushed it) is never written here
    planted = json.loads(next(iter(stored.objects().values())))
    path = f"other-{token}.md"
    planted.update(id="20300101-000000-000000-0000000001", path=path, bases=[], text="planted\n")
    planted["hash"] = sha256(b"planted\n")
    stored.plant(f"sync/claude/demo/{path_key(path)}/{planted['id']}.json", json.dumps(planted).encode())
    pulled = b.run("sync", "now", "--json")
    tools.exited(pulled)
    assert sorted(os.listdir(claude_folder(b))) == ["MEMORY.md"]
    assert token not in pulled.out + pulled.err and "other-[redacted].md" in pulled.err


def test_a_pull_and_a_push_count_the_files_in_step_alike(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- one\n")
    (claude_folder(a) / "topic.md").write_text("two\n")
    pushed = tools.exited(a.run("sync", "now"))
    assert pushed.out.endswith(": 2 pushed, 2 in step\n")
    pulled = tools.exited(b.run("sync", "now"))
    assert pulled.out.endswith(": 2 pulled, 2 in step\n")
    assert tools.exited(b.run("sync", "now")).out.endswith(": 2 in step\n")


def test_restore_over_a_link_says_what_to_do(machine, machine_b, folder_store, tmp_path):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- one\n")
    sync_now(a)
    (version,) = a.run("sync", "history", "MEMORY.md", "--json").json["versions"]
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("the user's own file\n")
    (claude_folder(a) / "MEMORY.md").unlink()
    os.symlink(elsewhere, claude_folder(a) / "MEMORY.md")
    refused = tools.exited(a.run("sync", "restore", "MEMORY.md", "--version", version["id"]), 1)
    place = claude_folder(a) / "MEMORY.md"
    assert refused.err.startswith("Error: MEMORY.md was not restored: it is a link (in ")
    assert "Unexpected" not in refused.err and "Traceback" not in refused.err
    assert refused.err.endswith(
        f"\nNext: rm -- {place} && agent-memory sync restore MEMORY.md --version {version['id']} --agent claude\n"
    )
    assert elsewhere.read_text() == "the user's own file\n" and place.is_symlink()
    shown = a.run("sync", "history", "MEMORY.md", "--json").json
    assert shown["not_synced"] == "it is a link or not a regular file: sync never follows a link"


def test_history_of_a_file_sync_leaves_out_says_why(machine, machine_b, folder_store):
    a, _b = two_machines(machine, machine_b, folder_store, "codex")
    memories = test_sync.codex_folder(a)
    memories.mkdir(parents=True)
    (memories / "phase2_workspace_diff.md").write_text("Codex's own working file\n")
    (memories / "deploy.md").write_text(f"# Deploy\n\n{test_sync.TOKEN_LINE}\n")
    (memories / "big.md").write_text("x" * 300 * 1024)
    sync_now(a)
    for name, why in (
        ("phase2_workspace_diff.md", "it is one of Codex's own working files, not a memory"),
        ("deploy.md", "it looks like it holds a secret: it stays on this machine only"),
        ("big.md", "it is larger than 262144 bytes"),
    ):
        shown = a.run("sync", "history", name, "--agent", "codex")
        tools.exited(shown, about=name)
        assert f"  not synced: {why}\n" in shown.out and "pushed by the next sync" not in shown.out, name
        assert a.run("sync", "history", name, "--agent", "codex", "--json").json["not_synced"] == why
    (memories / "new.md").write_text("new\n")
    assert "  no version yet: it is pushed by the next sync" in a.run("sync", "history", "new.md").out


def test_two_homes_on_one_host_get_distinct_machine_names(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    _on_both(a, b, "- one\n")
    (claude_folder(b) / "MEMORY.md").write_text("- one\n- two\n")
    sync_now(b)
    first, second = (v["machine"] for v in b.run("sync", "history", "MEMORY.md", "--json").json["versions"])
    assert first != second
    for name, one in ((first, a), (second, b)):
        suffix = (one.state / "state" / "machine-suffix").read_text()
        assert re.fullmatch(r"[0-9a-f]{4}", suffix) and name.endswith(f"-{suffix}")
    (b.state / "state" / "machine-suffix").write_text("garbage\n")  # a damaged record: a name all the same
    saved = b.save("# A note\n\nbody").json
    assert re.search(r"\nmachine: [A-Za-z0-9_-]+-[0-9a-f]{4}\n", b.run("read", saved["id"]).out)

    # the override still wins
    b.own_env["AGENT_MEMORY_MACHINE"] = "laptop"
    (claude_folder(b) / "MEMORY.md").write_text("- one\n- two\n- three\n")
    sync_now(b)
    assert b.run("sync", "history", "MEMORY.md", "--json").json["versions"][-1]["machine"] == "laptop"


def _claude_folders(one) -> list[dict]:
    return next(agent for agent in one.run("sync", "status", "--json").json["agents"] if agent["agent"] == "claude")[
        "folders"
    ]


def test_lines_from_elsewhere_say_whose_and_when(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    a.own_env["AGENT_MEMORY_MACHINE"] = "desk"
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- [Parser](parser.md): lookahead 2\n")
    sync_now(a)
    context = reminder(b)
    day = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"
    assert re.search(
        rf"lines another machine added to MEMORY.md after this session loaded it \(from desk, {day}\):", context
    )
    assert re.search(rf"updated here: 1 memory file \(MEMORY.md, from desk, {day}\)\.", context)
    (state,) = _claude_folders(b)
    assert [(item["path"], item["machines"]) for item in state["arrived"]] == [("MEMORY.md", ["desk"])]
    assert set(state["arrived"][0]) == keys(contract.SyncArrival)
    assert re.search(
        rf"arrived since this machine's last session: MEMORY.md \(from desk, {day}\)", b.run("sync", "status").out
    )

    reminder(b)  # a new session with nothing new: what arrived before it is no longer listed
    assert _claude_folders(b)[0]["arrived"] == []
    (claude_folder(a) / "parser.md").write_text("The parser uses a lookahead of 2.\n")
    sync_now(a)
    sync_now(b)
    (state,) = _claude_folders(b)
    assert [(item["path"], item["machines"]) for item in state["arrived"]] == [("parser.md", ["desk"])]


def test_a_pulled_version_the_guard_refuses_is_never_written(machine, machine_b, bucket, request):
    a, b = two_machines(machine, machine_b, bucket)
    stored = Stored(request, bucket)
    _on_both(a, b, "- fine\n")
    ((name, data),) = stored.objects().items()
    head = json.loads(data)
    text = f"- fine\n- {test_sync.TOKEN_LINE}\n"  # planted by a machine whose guard did not look (or by hand)
    planted = {**head, "id": "20300101-000000-000000-0000000002", "bases": [head["id"]], "text": text}
    planted["hash"] = sha256(text.encode())
    stored.plant(name.replace(head["id"], planted["id"]), json.dumps(planted).encode())

    context = reminder(b)
    assert "not written here: MEMORY.md: the version from another machine looks like it holds a secret" in context
    assert "line 2: GitHub token" in context and "ghp_" not in context
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- fine\n"
    history = tools.exited(b.run("sync", "history", "MEMORY.md", "--diff")).out
    assert "+- The deploy token is [redacted] for now." in history and "ghp_" not in history
    done = b.run("sync", "now", "--json")
    tools.exited(done)
    assert [item["path"] for item in done.json["folders"][0]["refused"]] == ["MEMORY.md"]
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- fine\n"

    # an edit here merges with it: the merged text holds the other side's secret, so nothing is written or pushed
    (claude_folder(b) / "MEMORY.md").write_text("- fine\n- and more\n")
    done = b.run("sync", "now", "--json")
    tools.exited(done)
    assert "not written here" in done.json["folders"][0]["refused"][0]["why"]
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- fine\n- and more\n"
    holding = [key for key, data in stored.objects().items() if b"ghp_" in data]
    assert holding == [name.replace(head["id"], planted["id"])]  # the planted version alone


def test_history_shows_each_text_and_the_differences(machine, machine_b, folder_store):
    a, _b = two_machines(machine, machine_b, folder_store)
    memory = claude_folder(a) / "MEMORY.md"
    claude_folder(a).mkdir(parents=True)
    for text in (
        "- one\n",
        "- one\n- two \x1b[2K\n",
        "- one (edited)\n- two \x1b[2K\n" + "".join(f"{n}\n" for n in range(60)),
    ):
        memory.write_text(text)
        sync_now(a)
    shown = a.run("sync", "history", "MEMORY.md", "--json").json
    first, second, third = shown["versions"]
    assert first["text"] == ["- one"] and first["more_lines"] == 0
    assert second["text"] == ["- one", "- two \\u001b[2K"]  # control characters never printed raw
    assert len(third["text"]) == 40 and third["more_lines"] == 22 and shown["diffs"] == []
    out = tools.exited(a.run("sync", "history", "MEMORY.md")).out
    assert f"  {first['id']} " in out and "\n      - one\n" in out and "      (22 more lines)\n" in out

    diffs = a.run("sync", "history", "MEMORY.md", "--diff", "--json").json["diffs"]
    assert [(d["older"], d["newer"]) for d in diffs] == [
        (None, first["id"]),
        (first["id"], second["id"]),
        (second["id"], third["id"]),
    ]
    assert all(set(change) == keys(contract.SyncDiff) for change in diffs)
    assert diffs[1]["lines"] == [
        f"--- MEMORY.md {first['id']}",
        f"+++ MEMORY.md {second['id']}",
        "@@ -1 +1,2 @@",
        " - one",
        "+- two \\u001b[2K",
    ]
    (chosen,) = a.run("sync", "history", "MEMORY.md", "--diff", third["id"], first["id"], "--json").json["diffs"]
    assert (chosen["older"], chosen["newer"]) == (third["id"], first["id"]) and "+- one" in chosen["lines"]
    text = tools.exited(a.run("sync", "history", "MEMORY.md", "--diff", first["id"], second["id"])).out
    assert f"  changes from {first['id']} to {second['id']}:\n" in text and "      +- two \\u001b[2K\n" in text
    assert "\x1b" not in text

    for args, fragment in (
        (
            ("--diff", first["id"]),
            "--diff takes no version id (each version against the one before it) or two ids, not 1.",
        ),
        (
            ("--diff", first["id"], "20200101-000000-000000-0000000000"),
            "20200101-000000-000000-0000000000 is not a version of MEMORY.md.",
        ),
    ):
        refused = tools.exited(a.run("sync", "history", "MEMORY.md", *args), 2, about=args)
        assert refused.err.startswith(f"Error: {fragment}\nNext: agent-memory sync history MEMORY.md")
    assert "--diff [ID ...]" in a.run("sync", "history", "--help").out


def test_history_of_a_hidden_file_says_it_is_not_synced(machine, machine_b, folder_store):
    a, _b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / ".draft.md").write_text("a draft\n")
    refused = tools.exited(a.run("sync", "history", ".draft.md"), 2)
    assert refused.err == (
        "Error: .draft.md is not synced: its path leaves the folder, is absolute, hidden or too deep.\n"
        "Next: agent-memory sync status (lists the synced folders)\n"
    )


def test_a_damaged_record_of_arrivals_is_read_as_anyones(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    _on_both(a, b, "- one\n")
    (record,) = (b.state / "state" / "sync").rglob("folders/*.json")
    value = json.loads(record.read_text())
    value.update(arrived=[{"path": 5, "machines": "desk", "time": None}, "junk"], session_at="soon")
    record.write_text(json.dumps(value))
    (state,) = _claude_folders(b)
    assert state["arrived"] == [{"path": "5", "machines": [], "time": "None"}]
    assert "5 (from another machine, None)" in tools.exited(b.run("sync", "status")).out


def test_deleted_files_are_not_counted_in_step(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(a).mkdir(parents=True)
    for name in ("MEMORY.md", "one.md", "two.md"):
        (claude_folder(a) / name).write_text(f"{name}\n")
    sync_now(a)
    sync_now(b)
    (claude_folder(a) / "one.md").unlink()
    assert tools.exited(a.run("sync", "now")).out.endswith(": 1 pushed, 2 in step\n")
    assert tools.exited(b.run("sync", "now")).out.endswith(": 1 pulled, 2 in step\n")
    for one in (a, b):  # and every later pass: a file deleted everywhere is no file in step
        assert tools.exited(one.run("sync", "now")).out.endswith(": 2 in step\n")


def test_restore_of_a_file_both_agents_have_takes_the_agent_its_version_is_of(machine, machine_b, folder_store):
    """MEMORY.md is in Claude Code's and in Codex's memory: a version id of Claude Code's MEMORY.md restores that
    file, without --agent; an id of neither says which agent's history to look at, as a command that works."""
    a, b = two_machines(machine, machine_b, folder_store, "both")
    claude_folder(a).mkdir(parents=True)
    test_sync.codex_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- first\n")
    (test_sync.codex_folder(a) / "MEMORY.md").write_text("- codex's\n")
    sync_now(a)
    (first,) = a.run("sync", "history", "MEMORY.md", "--agent", "claude", "--json").json["versions"]
    (claude_folder(a) / "MEMORY.md").write_text("- second\n")
    sync_now(a)

    tools.exited(a.run("sync", "restore", "MEMORY.md", "--version", first["id"]))
    assert (claude_folder(a) / "MEMORY.md").read_text() == "- first\n"
    assert (test_sync.codex_folder(a) / "MEMORY.md").read_text() == "- codex's\n"

    unknown = "20300101-000000-000000-0000000001"
    refused = tools.exited(a.run("sync", "restore", "MEMORY.md", "--version", unknown), 2)
    agent = re.search(r"--agent (\w+)\n$", refused.err)
    assert agent, refused.err
    shown = a.run("sync", "history", "MEMORY.md", "--agent", agent[1], "--json")
    assert tools.exited(shown).json["agent"] == agent[1]
    assert (claude_folder(a) / "MEMORY.md").read_text() == "- first\n"


def test_a_file_that_arrived_twice_is_listed_once(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    claude_folder(b).mkdir(parents=True)
    for text in ("- one\n", "- one\n- two\n", "- one\n- two\n- three\n"):
        (claude_folder(b) / "MEMORY.md").write_text(text)
        sync_now(b)
        sync_now(a)
    (claude,) = [agent for agent in a.run("sync", "status", "--json").json["agents"] if agent["agent"] == "claude"]
    (folder,) = claude["folders"]
    (arrived,) = folder["arrived"]
    assert arrived["path"] == "MEMORY.md" and len(arrived["machines"]) == 1
    shown = tools.exited(a.run("sync", "status")).out
    assert shown.count("MEMORY.md (from ") == 1


def test_a_conflict_in_two_checkouts_of_one_project_is_told_once(machine, machine_b, folder_store):
    a, b = two_machines(machine, machine_b, folder_store)
    other = a.root / "work" / "second-clone"
    other.mkdir(parents=True)
    tools.exited(a.run("project", "map", "demo", cwd=other))
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- release: Tuesday\n")
    for one in (a, a, b):
        sync_now(one)
    assert (claude_folder(a, other) / "MEMORY.md").read_text() == "- release: Tuesday\n"
    (claude_folder(a) / "MEMORY.md").write_text("- release: Wednesday\n")
    (claude_folder(b) / "MEMORY.md").write_text("- release: Friday\n")
    sync_now(a)
    sync_now(b)

    context = reminder(a)
    assert context.count("MEMORY.md was changed here and on another machine on the same lines") == 1, context
    status = tools.exited(a.run("status")).out
    assert status.count("CONFLICT claude MEMORY.md needs a decision") == 1, status
    for folder in (claude_folder(a), claude_folder(a, other)):  # each checkout keeps this machine's text
        assert (folder / "MEMORY.md").read_text() == "- release: Wednesday\n"


def test_each_file_not_synced_carries_its_fix_chosen_where_it_was_refused(machine, machine_b, folder_store):
    """`sync now --json` gives each refused file its `next`, picked by why it was refused (not by the words of its
    reason), and the text says the same: a link, a file too large, text that is not UTF-8."""
    a, _b = two_machines(machine, machine_b, folder_store)
    folder = claude_folder(a)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- the index\n")
    for name in ("linked.md", "large.md", "binary.md"):
        (folder / name).write_text("- synced once\n")
    sync_now(a)
    (folder / "linked.md").unlink()
    (folder / "linked.md").symlink_to(folder / "MEMORY.md")
    (folder / "large.md").write_text("x" * (256 * 1024 + 1))
    (folder / "binary.md").write_bytes(b"\xff\xfe not text")
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    refused = {item["path"]: item for item in done.json["folders"][0]["refused"]}
    again = "agent-memory sync now"
    assert refused["linked.md"]["next"] == (
        f"put a regular file in place of {folder / 'linked.md'} (sync never follows a link), then {again}"
    )
    assert refused["large.md"]["next"] == (
        f"make {folder / 'large.md'} smaller, or move it out of the memory folder, then {again}"
    )
    assert refused["binary.md"]["why"] == "it is not UTF-8 text"
    assert refused["binary.md"]["next"] == (
        f"agent-memory sync history binary.md (its versions), then fix or move {folder / 'binary.md'}"
    )
    for item in refused.values():
        assert f"Not synced: {item['path']}: {item['why']}.\nNext: {item['next']}" in done.err


def test_history_of_a_file_both_agents_keep_asks_which(machine, machine_b, folder_store):
    """Claude Code and Codex both keep a MEMORY.md: `sync history MEMORY.md` without --agent names both and the
    command for each, rather than showing one of them in silence; with --agent, that one's."""
    a, _b = two_machines(machine, machine_b, folder_store)
    tools.exited(a.run("sync", "enable", "--agent", "codex"))
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "MEMORY.md").write_text("- from Claude Code\n")
    codex = test_sync.codex_folder(a)
    codex.mkdir(parents=True)
    (codex / "MEMORY.md").write_text("- from Codex\n")
    sync_now(a)

    asked = a.run("sync", "history", "MEMORY.md")
    tools.exited(asked, 2)
    assert "Error: Both Codex's own memory and Claude Code's own memory have MEMORY.md." in asked.err
    assert (
        "Next: agent-memory sync history MEMORY.md --agent codex or "
        "agent-memory sync history MEMORY.md --agent claude" in asked.err
    )
    for agent, line in (("claude", "- from Claude Code"), ("codex", "- from Codex")):
        shown = tools.exited(a.run("sync", "history", "MEMORY.md", "--agent", agent, "--json")).json
        assert shown["agent"] == agent and shown["versions"][-1]["text"] == [line]


def test_history_looks_each_agents_memory_up_once(machine, machine_b, folder_store, monkeypatch):
    """Which agents have the file, and the one shown, come from one look at each agent's memory folders."""
    from agent_memory.sync import restoring

    a, _b = two_machines(machine, machine_b, folder_store)
    tools.exited(a.run("sync", "enable", "--agent", "codex"))
    claude_folder(a).mkdir(parents=True)
    (claude_folder(a) / "notes.md").write_text("- from Claude Code\n")
    sync_now(a)
    looked: list[str] = []
    scopes = restoring.scopes
    monkeypatch.setattr(
        restoring, "scopes", lambda ctx, runtime, folder: looked.append(runtime) or scopes(ctx, runtime, folder)
    )
    shown = tools.exited(a.run("sync", "history", "notes.md", "--json")).json
    assert shown["agent"] == "claude" and shown["versions"][-1]["text"] == ["- from Claude Code"]
    assert sorted(looked) == ["claude", "codex"]


def test_a_file_not_synced_is_told_with_what_makes_it_sync(machine, machine_b, folder_store):
    """Every file `sync now` leaves out comes with a Next: line: a secret in its text or its name, a link."""
    a, _b = two_machines(machine, machine_b, folder_store)
    folder = claude_folder(a)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- the index\n")
    (folder / "elsewhere.md").write_text("- synced once\n")
    sync_now(a)
    (folder / "deploy.md").write_text("token " + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + "\n")
    (folder / "elsewhere.md").unlink()
    (folder / "elsewhere.md").symlink_to(folder / "MEMORY.md")  # a synced file replaced by a link
    err = tools.exited(a.run("sync", "now")).err
    assert "Not synced: deploy.md: it looks like it holds a secret" in err
    assert (
        f"Next: take the credential out of {folder / 'deploy.md'} (or out of its name), then agent-memory sync now"
        in err
    )
    assert "Not synced: elsewhere.md: it is a link or not a regular file." in err
    assert f"Next: put a regular file in place of {folder / 'elsewhere.md'} (sync never follows a link)" in err
