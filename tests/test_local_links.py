"""Nothing planted in agent-memory's own folders leads its writes elsewhere: a symbolic link, a hard link or another
user's file in place of a lock, the cache's checksums or search pack, or a folder on the way, is never written
through. The file outside stays byte for byte; the command either refuses, naming the file and saying to remove
it, or goes on safely (the search pack is derived data: it is rebuilt, which replaces the link)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import tools

BASHRC = b"# the user's shell start-up file\nexport PATH=$HOME/bin:$PATH\n"
KINDS = ["symlink", "hardlink", "other-user"]


@pytest.fixture
def outside(machine) -> Path:
    """A file of the user's outside agent-memory's folders, that a planted link would lead to."""
    file = machine.home / ".bashrc"
    file.write_bytes(BASHRC)
    os.chmod(file, 0o644)
    return file


def plant(path: Path, kind: str, target: Path) -> None:
    """Put a link to `target` (or another user's file) where agent-memory keeps `path`."""
    if kind == "other-user" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "symlink":
        path.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        path.write_bytes(b"")
        os.chown(path, 4242, -1)


def refused(result, path: Path, kind: str) -> None:
    why = {"symlink": "is a symbolic link", "hardlink": "has 2 hard links", "other-user": "belongs to another user"}
    tools.exited(result, 1)
    assert f"Error: {path} {why[kind]}" in result.err and "so agent-memory will not use it" in result.err
    assert f"\nNext: rm {path} (that name only; agent-memory makes its own again)" in result.err
    assert "Traceback" not in result.err


def cache_dir(machine, project="demo") -> Path:
    [found] = (machine.state / "cache").glob(f"*/projects/{project}")
    return found


@pytest.fixture
def searched(ready):
    """A machine on a folder store whose cache holds one note."""
    ready.note = ready.save("Finding: the widgets need grease.").json["id"]
    tools.exited(ready.run("search", "widgets"))
    return ready


@pytest.mark.parametrize("kind", KINDS)
def test_the_caches_checksums_are_never_read_or_written_through_a_planted_file(searched, outside, kind):
    checksums = cache_dir(searched) / "checksums"
    plant(checksums, kind, outside)
    for args in (("search", "widgets"), ("search", "widgets", "--offline"), ("read", searched.note)):
        refused(searched.run(*args), checksums, kind)
    assert outside.read_bytes() == BASHRC
    checksums.unlink()  # what Next says
    found = searched.run("search", "widgets", "--json")
    tools.exited(found)
    assert [r["id"] for r in found.json["results"]] == [searched.note]
    assert stat.S_ISREG(checksums.lstat().st_mode) and checksums.stat().st_nlink == 1
    assert outside.read_bytes() == BASHRC


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_search_pack_is_rebuilt_in_place_and_never_written_through(searched, outside, kind):
    pack = cache_dir(searched) / "search.pack"
    copy = outside.with_name("pack-copy")  # a whole pack, that an append would happily extend
    copy.write_bytes(pack.read_bytes())
    before = copy.read_bytes()
    plant(pack, kind, copy)
    tools.exited(searched.save("Finding: more widgets."))  # its copy is added to the cache, and the pack
    found = searched.run("search", "widgets", "--json")
    tools.exited(found)
    assert len(found.json["results"]) == 2
    info = pack.lstat()
    assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == os.getuid()
    assert copy.read_bytes() == before and copy.stat().st_nlink == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_cache_lock_refuses_the_refresh_and_the_save_still_lands(
    searched, machine_b, folder_store, outside, kind
):
    lock = cache_dir(searched) / ".lock"
    plant(lock, kind, outside)
    # the save is shared all the same: keeping a copy in the cache is a convenience that is skipped
    saved = searched.save("Finding: more widgets.")
    tools.exited(saved)
    refused(searched.run("search", "widgets"), lock, kind)
    assert outside.read_bytes() == BASHRC
    lock.unlink()
    found = searched.run("search", "widgets", "--json")
    tools.exited(found)
    assert len(found.json["results"]) == 2
    # and another machine sees both notes
    assert len(machine_b.setup(folder_store).run("search", "widgets", "--json").json["results"]) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_outbox_lock_keeps_the_note_pending(ready, folder_store, outside, kind):
    store = Path(folder_store[len("file://") :])
    os.rename(store, f"{store}.away")  # unmounted: the note waits in the outbox
    pending = ready.save("Finding: kept for later.")
    tools.exited(pending, 75)
    os.rename(f"{store}.away", store)
    note = pending.json["id"]
    lock = ready.state / "state" / "outbox" / ".locks" / f"note-{note}.lock"
    plant(lock, kind, outside)
    refused(ready.run("save", "--retry", note), lock, kind)
    assert outside.read_bytes() == BASHRC
    assert [n["id"] for n in ready.run("pending", "--json").json["notes"]] == [note]  # still waiting, not lost
    lock.unlink()
    tools.exited(ready.run("save", "--retry", note))
    assert ready.run("pending", "--json").json["notes"] == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_config_lock_changes_no_setting(ready, outside, kind):
    config = ready.state / "config" / "config.json"
    before = config.read_bytes()
    lock = config.with_name("config.json.lock")
    plant(lock, kind, outside)
    refused(ready.run("project", "map", "other"), lock, kind)
    assert config.read_bytes() == before and outside.read_bytes() == BASHRC
    lock.unlink()
    tools.exited(ready.run("project", "map", "other"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_agent_files_lock_installs_no_hook(machine, outside, kind):
    lock = machine.state / "state" / "agent-files.lock"
    plant(lock, kind, outside)
    refused(machine.run("hooks", "install"), lock, kind)
    assert not (machine.home / ".claude" / "settings.json").exists()
    assert not (machine.home / ".codex" / "hooks.json").exists()
    assert outside.read_bytes() == BASHRC
    lock.unlink()
    tools.exited(machine.run("hooks", "install"))


def test_a_folder_of_the_cache_linked_elsewhere_is_never_written_into(searched, machine_b, folder_store, tmp_path):
    project = cache_dir(searched)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project.rename(tmp_path / "old-cache")
    project.symlink_to(elsewhere, target_is_directory=True)
    machine_b.setup(folder_store).save("Finding: a note to download.")
    result = searched.run("search", "widgets")
    refused(result, project, "symlink")
    assert list(elsewhere.iterdir()) == []
    project.unlink()
    assert searched.run("search", "widgets", "--json").json["freshness"]["status"] == "fresh"


def test_a_planted_fifo_refuses_without_blocking(searched):
    checksums = cache_dir(searched) / "checksums"
    checksums.unlink()
    os.mkfifo(checksums, 0o600)
    result = searched.run("search", "widgets", timeout=60)
    tools.exited(result, 1)
    assert f"{checksums} is not a regular file" in result.err
