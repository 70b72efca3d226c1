"""A `file://` store is checked wherever it is used, not only by bootstrap: a folder that other users can open,
or that belongs to someone else, is refused (exit 4) with the command that fixes it, and nothing is changed."""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

import pytest

import tools

SKILL = "---\nname: db-migrations\ndescription: Write safe database migrations.\n---\n\n# db-migrations\n"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def store(folder_store) -> Path:
    return Path(folder_store[len("file://") :])


@pytest.fixture
def ready(machine, folder_store, tmp_path):
    """A machine set up with a folder store that holds one note and one skill revision."""
    machine.setup(folder_store)
    note = machine.save("Decision: the store stays owner-only.")
    tools.exited(note)
    skill = tmp_path / "src" / "db-migrations"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    published = machine.run("publish-skill", str(skill), "--json")
    tools.exited(published)
    machine.note_id = note.json["id"]
    machine.revision = published.json["revision"]
    machine.skill_source = skill
    return machine


def _refused(result, store: Path) -> None:
    tools.exited(result, 4)
    assert f"The folder store {store} can be read or written by other users" in result.err
    assert f"\nNext: chmod 700 {shlex.quote(str(store))}" in result.err


def commands(machine) -> dict[str, tuple[str, ...]]:
    """Every command that uses the store, as a new user would type it."""
    return {
        "save": ("save", "--title", "Another decision", "--file", str(machine.work / "note.md")),
        "search": ("search", "owner-only"),
        "search --skills": ("search", "--skills"),
        "read": ("read", machine.note_id, "--fresh"),
        "read --skill": ("read", "--skill", "db-migrations", "--revision", machine.revision),
        "publish-skill": ("publish-skill", str(machine.skill_source)),
        "install-skill": ("install-skill", "db-migrations", "--revision", machine.revision),
    }


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o755, 0o750, 0o705, 0o770, 0o707, 0o710, 0o701, 0o777])
def test_a_store_opened_to_others_after_setup_is_refused_everywhere(ready, store, mode):
    (ready.work / "note.md").write_text("Finding: a second note.\n")
    os.chmod(store, mode)
    before = tree(store)
    for name, args in commands(ready).items():
        result = ready.run(*args)
        _refused(result, store)
        assert f"mode {stat.filemode(stat.S_IFDIR | mode)}" in result.err, name
    assert tree(store) == before
    assert stat.S_IMODE(store.stat().st_mode) == mode  # never changed for the user
    pending = ready.run("pending", "--json").json
    assert pending["notes"] == []  # the refused save kept nothing to upload later
    assert not (ready.home / ".agents" / "skills" / "db-migrations").exists()

    os.chmod(store, 0o700)  # what Next says
    for name, args in commands(ready).items():
        result = ready.run(*args)
        tools.exited(result, about=name)


def test_a_refused_publication_leaves_nothing_to_upload_later(ready, store):
    os.chmod(store, 0o750)
    _refused(ready.run("publish-skill", str(ready.skill_source)), store)
    assert ready.run("pending", "--json").json["skills"] == []


def test_config_set_refuses_such_a_folder_and_keeps_the_old_setting(machine, folder_store, tmp_path):
    machine.setup(folder_store)
    config = machine.state / "config" / "config.json"
    before = config.read_bytes()
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o775)
    result = machine.run("config", "set", "bucket", f"file://{shared}")
    _refused(result, shared)
    assert config.read_bytes() == before
    os.chmod(shared, 0o700)
    tools.exited(machine.run("config", "set", "bucket", f"file://{shared}"))


def test_a_shared_temporary_folder_is_refused_with_a_folder_of_ones_own_in_it(machine, tmp_path):
    """A folder like /tmp (everyone writes there, the sticky bit keeps each one's files theirs) is shared by design:
    the fix is a folder of one's own in it, never `chmod 700` of it, which would lock every other user out."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    result = machine.run("config", "set", "bucket", f"file://{shared}")
    tools.exited(result, 4)
    assert f"The folder store {shared} can be read or written by other users" in result.err
    own = f"file://{shared}/agent-memory-store"
    assert result.err.endswith(
        f"Next: agent-memory config set bucket {own} (a folder of your own in it, created owner-only)\n"
    )
    assert "chmod" not in result.err
    tools.exited(machine.run("config", "set", "bucket", own))
    assert stat.S_IMODE((shared / "agent-memory-store").stat().st_mode) == 0o700


def test_a_pending_note_stays_pending_while_the_store_is_refused(machine, folder_store, store):
    machine.setup(folder_store)
    os.rename(store, f"{store}.away")  # unmounted: the note stays pending, as always
    saved = machine.save("Finding: retry after the drive is back.")
    tools.exited(saved, 75)
    os.rename(f"{store}.away", store)
    os.chmod(store, 0o755)
    retried = machine.run("save", "--retry", saved.json["id"])
    _refused(retried, store)
    assert [n["id"] for n in machine.run("pending", "--json").json["notes"]] == [saved.json["id"]]
    os.chmod(store, 0o700)
    tools.exited(machine.run("save", "--retry", saved.json["id"]))
    assert machine.run("pending", "--json").json["notes"] == []


def test_an_unmounted_store_is_not_mistaken_for_an_unsafe_one(machine, folder_store, store):
    machine.setup(folder_store)
    os.rename(store, f"{store}.away")
    result = machine.save("Finding: kept locally while the drive is away.")
    tools.exited(result, 75)
    assert "other users" not in result.err


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_store_owned_by_another_user_is_refused(machine, folder_store, store):
    machine.setup(folder_store)
    os.chown(store, 4242, -1)
    try:
        result = machine.save("Finding: not my folder.")
        tools.exited(result, 4)
        assert "belongs to another user (uid 4242)" in result.err
        assert "Next: use a folder of your own: agent-memory config set bucket file:///" in result.err
        tools.exited(machine.run("search", "folder"), 4)
        assert machine.run("pending", "--json").json["notes"] == []
    finally:
        os.chown(store, os.getuid(), -1)
    tools.exited(machine.save("Finding: mine again."))


def test_bootstrap_refuses_the_same_way(machine, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o750)
    result = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{shared}")
    _refused(result, shared)
    assert not (machine.state / "config" / "config.json").exists()


def test_retry_all_reports_a_refused_store_and_goes_on_with_the_others(machine, folder_store, store, hub):
    from conftest import BUCKET

    machine.setup(folder_store)
    os.rename(store, f"{store}.away")
    in_folder = machine.save("Finding: for the folder store.").json
    machine.run("config", "set", "bucket", BUCKET)
    hub.fault("batch", "fail", status=500)
    in_hub = machine.save("Finding: for the Hub.").json
    hub.clear_faults()
    os.rename(f"{store}.away", store)
    os.chmod(store, 0o755)
    retried = machine.run("save", "--retry-all", "--json")
    tools.exited(retried, 75)
    by_id = {r["id"]: r for r in retried.json["results"]}
    assert by_id[in_hub["id"]]["status"] == "saved"
    refused = by_id[in_folder["id"]]
    assert refused["status"] == "pending" and "can be read or written by other users" in refused["message"]
    assert (
        refused["next"]
        == f"chmod 700 {store} (if only you should use it), then run: agent-memory pending retry {refused['id']}"
    )
