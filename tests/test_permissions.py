"""Local state is private on a shared machine: below the config, cache and state roots every folder is 0700 and
every file 0600, whatever the umask; an install left open by an earlier version is tightened on next use; the
agents' skill folders, which are not ours, keep ordinary permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import BUCKET


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request):
    """Commands inherit this process's umask."""
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def _skill(folder: Path) -> Path:
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: db-migrations\ndescription: Safe migrations.\n---\n\n# Steps\n")
    (folder / "references" / "checklist.md").write_text("- back up first\n")
    return folder


def _roots(machine) -> list[Path]:
    return [machine.state / name for name in ("config", "cache", "state")]


def _open_to_others(machine) -> list[str]:
    """Everything below the roots that is not owner-only: folders 0700, files 0600 (0700 for an executable)."""
    found = []
    for root in _roots(machine):
        for path in [root, *root.rglob("*")] if root.exists() else []:
            info = path.lstat()
            mode = stat.S_IMODE(info.st_mode)
            wanted = (0o700,) if stat.S_ISDIR(info.st_mode) else (0o600, 0o700)
            if stat.S_ISLNK(info.st_mode) or mode not in wanted:
                found.append(f"{path} {oct(mode)}")
    return found


def _run(machine, *args, ok=(0,), input=None):
    result = machine.run(*args, input=input)
    assert result.code in ok, (args, result.err)
    assert _open_to_others(machine) == [], args
    return result


def test_every_command_keeps_local_state_owner_only(machine, hub, tmp_path, umask):
    _run(machine, "bootstrap", "--project", "demo", "--bucket", BUCKET)
    assert all(root.is_dir() for root in _roots(machine))
    note = _run(machine, "save", "--json", input="# Private\n\nA note about the billing service.\n").json
    _run(machine, "search", "billing")
    _run(machine, "search", "billing", "--offline")
    _run(machine, "read", note["id"])
    _run(machine, "read", note["id"], "--fresh")
    hub.fault("batch", "fail", status=500)
    pending = _run(machine, "save", "--json", input="kept pending for a while", ok=(75,)).json
    _run(machine, "status")
    _run(machine, "save", "--retry", pending["id"])
    source = _skill(tmp_path / "src" / "db-migrations")
    hub.fault("batch", "fail", status=500)
    revision = _run(machine, "publish-skill", str(source), "--json", ok=(75,)).json["revision"]
    _run(machine, "publish-skill", "--retry", revision)
    _run(machine, "search", "--skills", "migrations")
    _run(machine, "install-skill", "db-migrations", "--revision", revision)
    (source / "extra.md").write_text("a second revision\n")
    second = _run(machine, "publish-skill", str(source), "--json").json["revision"]
    backup = _run(machine, "install-skill", "db-migrations", "--revision", second, "--replace", "--json").json
    assert machine.state in Path(backup["backup"]).parents

    # the agents' skill folders are the user's, not ours: ordinary permissions, as any other skill, and never
    # group or other write, whatever the umask
    installed = machine.home / ".agents" / "skills" / "db-migrations"
    assert stat.S_IMODE(installed.stat().st_mode) == 0o755
    assert stat.S_IMODE((installed / "SKILL.md").stat().st_mode) == 0o644


def test_an_install_left_open_is_tightened_on_next_use(machine, folder_store, umask):
    ready = machine.setup(folder_store)
    note = ready.save("an older install wrote this cache with ordinary permissions").json
    ready.run("search", "older")
    for root in _roots(ready):
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # what an earlier version left
    assert _open_to_others(ready) != []
    assert ready.run("read", note["id"]).code == 0  # any command: here one that writes nothing
    assert _open_to_others(ready) == []


def test_a_folder_store_fetch_and_locks_are_owner_only_under_a_permissive_umask(machine, machine_b, folder_store):
    previous = os.umask(0o000)
    try:
        machine.setup(folder_store).save("written by another machine")
        reader = machine_b.setup(folder_store)
        assert len(reader.run("search", "another machine", "--json").json["results"]) == 1
        assert _open_to_others(reader) == []
    finally:
        os.umask(previous)
