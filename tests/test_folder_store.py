"""The embedded default: a `file://` folder store, end to end through the command line."""

from __future__ import annotations

import json
import os

import pytest

import tools


def _objects(folder_store):
    root = folder_store[len("file://") :]
    found = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if folder == root and name == ".changes":
                continue  # the store's record of what was written, not an object
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read()
    return found


def test_save_search_read(ready, folder_store):
    saved = ready.save("# Queue design\n\nUse a durable pending queue.\n", "--tag", "design", "--source", "docs/x.md")
    tools.exited(saved)
    note = saved.json
    assert note["status"] == "saved"
    assert note["bucket"] == folder_store
    assert note["path"] == f"projects/demo/notes/{note['id']}.md"
    stored = _objects(folder_store)
    assert list(stored) == [note["path"]]

    found = ready.run("search", "PENDING QUEUE", "--json")
    tools.exited(found)
    assert [r["id"] for r in found.json["results"]] == [note["id"]]
    assert found.json["results"][0]["matches"] == [
        {"line": 1, "text": "# Queue design"},
        {"line": 3, "text": "Use a durable pending queue."},
    ]

    read = ready.run("read", note["id"])
    assert read.out.encode() == stored[note["path"]]
    text = stored[note["path"]].decode()
    assert text.startswith("---\nid: " + note["id"] + "\ntitle: Queue design\nkind: note\nproject: demo\n")
    assert "sources:\n- docs/x.md\ntags:\n- design\n---\n\n# Queue design\n" in text


def test_a_correction_is_a_new_note_and_the_original_stays(ready, folder_store):
    first = ready.save("We use Postgres 14.").json
    before = _objects(folder_store)[first["path"]]
    second = ready.save("Correction: we use Postgres 16.", "--corrects", first["id"]).json
    stored = _objects(folder_store)
    assert set(stored) == {first["path"], second["path"]}
    assert stored[first["path"]] == before
    assert f"corrects: {first['id']}\n" in stored[second["path"]].decode()
    results = ready.run("search", "postgres", "--json").json["results"]
    assert [r["id"] for r in results] == [second["id"], first["id"]]


def test_an_unreachable_folder_keeps_the_note_pending_until_retry(ready, folder_store, tmp_path):
    root = folder_store[len("file://") :]
    os.rename(root, root + ".away")  # the shared drive is unmounted
    result = ready.save("Finding: the cache must be rebuilt atomically.")
    tools.exited(result, 75)
    note = result.json
    assert note["status"] == "pending"
    assert note["message"] == (  # one sentence: what happened, in words of the folder (no doubled parentheses)
        f"Not shared yet: {note['id']} is kept on this machine only, because the bucket could not be reached: the "
        f"folder store {root} is not there; do not save it again."
    )
    fix = f"mount the drive that holds {root} (or move the folder back there)"
    assert note["next"] == f"{fix}, then run: agent-memory pending retry {note['id']}"
    text = ready.run("pending", "retry", note["id"])  # told in words: the sentence, then its Next: line
    tools.exited(text, 75)
    assert text.out == f"{note['message']}\nNext: {note['next']}\n"

    pending_search = ready.run("search", "atomically", "--json")
    assert pending_search.json["freshness"]["status"] == "stale"
    assert pending_search.json["results"][0]["pending"] is True
    assert pending_search.json["pending"] == 1
    assert ready.run("read", note["id"], "--json").json["source"] == "pending"

    os.rename(root + ".away", root)
    retried = ready.run("save", "--retry", note["id"], "--json")
    tools.exited(retried)
    assert {k: retried.json[k] for k in ("id", "path", "status")} == {
        "id": note["id"],
        "path": note["path"],
        "status": "saved",
    }
    assert list(_objects(folder_store)) == [note["path"]]
    assert ready.run("status", "--json").json["pending"] == []

    # it has left the outbox, and is in the cache: offline, search and read still find it
    os.rename(root, root + ".away")
    offline = ready.run("search", "atomically", "--offline", "--json")
    assert [(r["id"], r["pending"]) for r in offline.json["results"]] == [(note["id"], False)]
    read = ready.run("read", note["id"], "--json")
    tools.exited(read)
    assert read.json["source"] == "cache"


def test_offline_search_makes_no_store_access(ready, folder_store):
    ready.save("alpha note")
    root = folder_store[len("file://") :]
    os.rename(root, root + ".away")
    result = ready.run("search", "alpha", "--offline", "--json")
    tools.exited(result)
    assert result.json["freshness"] == {
        "status": "stale",
        "reason": "offline",
        "detail": "--offline: the bucket was not consulted",
        "kind": None,
        "skipped": [],
        "gone": [],
    }
    assert len(result.json["results"]) == 1


def test_empty_query_lists_recent_notes_bounded(ready):
    ids = [ready.save(f"note number {i}").json["id"] for i in range(4)]
    listed = ready.run("search", "--limit", "3", "--json").json["results"]
    assert [r["id"] for r in listed] == ids[::-1][:3]
    assert all(r["matches"] == [] for r in listed)


def test_kind_filter(ready):
    ready.save("a plain note about caching")
    checkpoint = ready.save("checkpoint about caching", "--kind", "checkpoint").json
    results = ready.run("search", "caching", "--kind", "checkpoint", "--json").json["results"]
    assert [r["id"] for r in results] == [checkpoint["id"]]
    assert results[0]["kind"] == "checkpoint"


def test_the_search_is_literal_not_a_regex(ready):
    ready.save("price is $5 (approx.) [sic]")
    ready.save("price is 5 dollars")
    results = ready.run("search", "$5 (approx.) [sic]", "--json").json["results"]
    assert len(results) == 1
    assert ready.run("search", "p.ice", "--json").json["results"] == []


def test_non_ascii_case_insensitive_search(ready):
    note = ready.save("Über die Änderung der ÉCOLE").json
    assert [r["id"] for r in ready.run("search", "über die änderung", "--json").json["results"]] == [note["id"]]
    assert len(ready.run("search", "école", "--json").json["results"]) == 1


def test_refused_notes_leave_nothing_behind(ready, folder_store):
    secret = "hf_" + "Q" * 34
    result = ready.save(f"line one\ntoken is {secret}\n")
    tools.exited(result, 5)
    assert secret not in result.err and secret not in result.out
    assert "line 2" in result.err and "hf-token" in result.err
    for body, code in ((b"", 5), (b"\xff\xfe\x00", 5), (b"x" * (1024 * 1024 + 10), 5)):
        tools.exited(ready.run("save", input=body), code)
    tools.exited(ready.save("fine", "--kind", "diary"), 2)
    tools.exited(ready.save("fine", "--corrects", "../../etc"), 2)
    assert _objects(folder_store) == {}
    outbox = ready.state / "state" / "outbox"
    assert not outbox.exists() or not [p for p in outbox.iterdir() if not p.name.startswith(".")]


def test_an_unwritable_state_folder_is_a_clear_error(ready, tmp_path):
    (ready.state / "state").mkdir(exist_ok=True)
    (ready.state / "state" / "outbox").write_text("a file where the state folder should be")
    result = ready.save("cannot be queued")
    tools.exited(result, 1)
    assert result.err.startswith("Error: The note was not saved, not even on this machine: cannot use a local file: ")
    assert "Traceback" not in result.err


def test_a_link_in_place_of_a_state_folder_is_refused(ready, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ready.state / "state").mkdir(exist_ok=True)
    (ready.state / "state" / "outbox").symlink_to(elsewhere)
    result = ready.save("cannot be queued")
    tools.exited(result, 1)
    link = ready.state / "state" / "outbox"
    assert f"Error: {link} is a symbolic link, so agent-memory will not use it" in result.err
    assert f"\nNext: rm {link} (that name only" in result.err and "Traceback" not in result.err
    assert list(elsewhere.iterdir()) == []  # nothing was written through the link
    link.unlink()  # what Next says
    tools.exited(ready.save("queued and saved now"))


def test_unknown_note_id_is_an_error_that_says_how_to_search(ready):
    result = ready.run("read", "20260101-000000-000000-0000000000")
    tools.exited(result, 1)
    assert "agent-memory search" in result.err


def test_not_set_up_errors_say_what_to_run(machine):
    result = machine.save("text")
    tools.exited(result, 3)
    assert "No bucket is configured" in result.err and "agent-memory bootstrap" in result.err
    tools.exited(machine.run("search", "x"), 3)


def test_the_agent_comes_from_the_environment(ready):
    def agent_of(env, *args):
        note = ready.save("who wrote this", *args, env=env).json
        return ready.run("read", note["id"]).out

    assert "agent: codex\nmachine: box-1\nsession: thread-1\n" in agent_of(
        {"CODEX_THREAD_ID": "thread-1", "AGENT_MEMORY_MACHINE": "box-1"}
    )
    assert "agent: claude\n" in agent_of({"CLAUDECODE": "1"})
    assert "agent: my-bot\n" in agent_of({"AGENT_MEMORY_AGENT": "my-bot", "CLAUDECODE": "1"})
    assert "agent: cli-given\n" in agent_of({"CLAUDECODE": "1"}, "--agent", "cli-given")
    assert "agent: unknown\n" in agent_of({})


def test_the_store_never_overwrites_an_object(ready, folder_store):
    from agent_memory.store.base import ObjectConflict
    from agent_memory.store.local import FolderStore

    store = FolderStore(__import__("pathlib").Path(folder_store[len("file://") :]))
    store.put("projects/p/notes/x.md", b"one")
    store.put("projects/p/notes/x.md", b"one")  # the same bytes again: a no-op
    with pytest.raises(ObjectConflict):
        store.put("projects/p/notes/x.md", b"two")
    assert store.read("projects/p/notes/x.md") == b"one"
    assert [i.path for i in store.list("projects/p/notes")] == ["projects/p/notes/x.md"]


def test_status_reports_everything(ready, folder_store):
    ready.save("hello")
    status = ready.run("status", "--json").json
    assert set(status) == {
        "version",
        "config_file",
        "bucket",
        "store",
        "project",
        "project_error",
        "last_refresh",
        "pending",
        "pending_skills",
        "damaged",
        "damaged_notes",
        "skipped",
        "gone",
        "skills",
        "hooks",
        "codex_sandbox",
        "usage",
        "sync",
        "outage",
        "damaged_state",
    }
    assert status["bucket"] == folder_store and status["store"]["status"] == "ok"
    assert status["project"] == {"project": "demo", "root": str(ready.work.resolve()), "found": "mapped", "via": None}
    assert status["last_refresh"] is None
    ready.run("search", "hello")
    assert ready.run("status", "--json").json["last_refresh"] is not None
    assert json.loads(ready.run("config", "show", "--json").out)["bucket"] == folder_store


def test_a_store_failure_is_told_once_at_the_boundary_with_the_command_to_run_again(ready, folder_store):
    """A StoreError travels up to the command line, saying on its way what failed, and is told there: the
    reason's next step, ending with the very command to run again."""
    note = ready.save("Read me back.").json
    root = folder_store[len("file://") :]
    os.rename(root, root + ".away")  # the drive is unmounted
    result = ready.run("read", note["id"], "--fresh", "--json")
    tools.exited(result, 1)
    assert result.json["error"].startswith(f"Could not read {note['path']} from {folder_store}: the folder store ")
    assert result.json["next"] == (  # of the folder alone: no network, no Hub
        f"mount the drive that holds {root} (or move the folder back there), then run: "
        f"agent-memory read {note['id']} --fresh --json"
    )
    assert "Unexpected" not in result.err
