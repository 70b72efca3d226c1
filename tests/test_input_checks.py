"""Checks a new user met missing: `status` checks the store as save does (a refused folder store is exit 4 there
too), and `save --corrects` must name a note of the project (a pending one counts)."""

from __future__ import annotations

import os
from pathlib import Path

import tools
from conftest import BUCKET


def test_status_reports_a_refused_folder_store_with_exit_4_like_save(ready, folder_store):
    assert ready.run("status", "--json").json["store"] == {"status": "ok", "detail": None, "next": None}
    assert "store: ok" in ready.run("status").out.splitlines()
    folder = Path(folder_store.removeprefix("file://"))
    os.chmod(folder, 0o755)
    saved = ready.save("a note")
    tools.exited(saved, 4)
    shown = ready.run("status", "--json")
    tools.exited(shown, 4)
    store = shown.json["store"]
    assert store["status"] == "refused" and "can be read or written by other users" in store["detail"]
    assert store["next"].startswith(f"chmod 700 {folder}")
    text = ready.run("status")
    tools.exited(text, 4)
    assert f"store: REFUSED: The folder store {folder} can be read or written by other users" in text.out
    assert f"  Next: chmod 700 {folder}" in text.out
    assert text.err.startswith("Error: The folder store") and "\nNext: chmod 700 " in text.err
    os.chmod(folder, 0o700)
    tools.exited(ready.run("status"))


def test_status_reports_a_folder_store_that_is_not_there(ready, folder_store):
    folder = Path(folder_store.removeprefix("file://"))
    folder.rmdir()
    shown = ready.run("status", "--json")
    tools.exited(shown)
    assert shown.json["store"]["status"] == "missing"
    assert "store: MISSING: the folder store" in ready.run("status").out


def test_status_of_a_hub_bucket_uses_no_network(machine):
    machine.setup(BUCKET)  # no Hub runs: status must not try to reach one
    store = machine.run("status", "--json").json["store"]
    assert store["status"] == "not checked" and "no network" in store["detail"]


def test_corrects_must_name_a_note_of_the_project(ready, machine_b, folder_store):
    for bogus in ("bogus", "20260101-000000-000000-0123456789"):
        refused = ready.save("a correction", "--corrects", bogus)
        tools.exited(refused, 2)
        assert f"--corrects {bogus}: project demo has no such note" in refused.err
        assert "Next: agent-memory search QUERY" in refused.err
    assert ready.run("pending", "--json").json["notes"] == []
    assert not list(Path(folder_store.removeprefix("file://")).rglob("*.md"))  # nothing was saved

    original = ready.save("Decision: use WAL.").json["id"]
    corrected = ready.save("Correction: use WAL with synchronous=NORMAL.", "--corrects", original)
    tools.exited(corrected)
    assert corrected.json["status"] == "saved"

    # another machine knows it only from the bucket: not cached there, still a note of the project
    machine_b.setup(folder_store)
    tools.exited(machine_b.save("Another correction.", "--corrects", original))

    # a note pending on this machine counts too
    folder = Path(folder_store.removeprefix("file://"))
    os.rename(folder, folder.with_name("unmounted"))
    pending = ready.save("Not shared yet.")
    tools.exited(pending, 75)
    # while the store cannot say, an id nobody can check is kept with the note: refusing would lose the correction
    unknown = ready.save("Offline correction.", "--corrects", "20260101-000000-000000-0123456789")
    tools.exited(unknown, 75)
    assert unknown.json["status"] == "pending"
    os.rename(folder.with_name("unmounted"), folder)
    tools.exited(ready.save("Correcting the pending one.", "--corrects", pending.json["id"]))


def test_corrects_of_another_project_s_note_is_refused(ready):
    other = ready.work.parent / "other"
    other.mkdir()
    tools.exited(ready.run("project", "map", "other", str(other)))
    theirs = ready.run("save", "--json", input="In the other project.", cwd=other).json["id"]
    refused = ready.save("a correction", "--corrects", theirs)
    tools.exited(refused, 2)
    assert "project demo has no such note" in refused.err
