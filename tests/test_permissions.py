"""Local state is private on a shared machine: below the config, cache and state roots every folder is 0700 and
every file 0600, whatever the umask; an install left open by an earlier version is tightened on next use; the
agents' skill folders, which are not ours, keep ordinary permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import tools
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
    tools.exited(result, ok, about=args)
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
    tools.exited(ready.run("read", note["id"]))  # any command: here one that writes nothing
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


def _writable_by_others(top: Path) -> list[str]:
    """Every file or folder below `top` (links aside) that group or others could write."""
    return [
        f"{path} {oct(stat.S_IMODE(path.lstat().st_mode))}"
        for path in [top, *top.rglob("*")]
        if not path.is_symlink() and path.lstat().st_mode & 0o022
    ]


def test_under_umask_000_nothing_the_product_creates_is_writable_by_others(machine, tmp_path):
    store = tmp_path / "store"
    source = _skill(tmp_path / "src" / "db-migrations")
    previous = os.umask(0o000)
    try:
        boot = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{store}", "--hooks", "--json")
        tools.exited(boot)
        tools.exited(machine.run("codex-sandbox", "allow"))
        tools.exited(machine.save("Finding: private whatever the umask."))
        revision = machine.run("publish-skill", str(source), "--json").json["revision"]
        installed = machine.run("install-skill", "db-migrations", "--revision", revision)
        tools.exited(installed)
        tools.exited(machine.run("search", "umask"))
    finally:
        os.umask(previous)
    home = machine.home
    for made in (
        home / ".codex" / "hooks.json",
        home / ".codex" / "config.toml",
        home / ".codex" / "AGENTS.md",
        home / ".claude" / "settings.json",
        home / ".claude" / "CLAUDE.md",
        home / ".agents" / "skills" / "db-migrations" / "references" / "checklist.md",
        home / ".claude" / "skills" / "db-migrations" / "SKILL.md",
    ):
        assert made.exists(), made  # what the walk below checks was made indeed
    assert not (home / ".cache" / "huggingface").exists()  # a folder store's consent opens its folder instead
    assert _writable_by_others(home) == []  # the agents' folders and files, installed skills
    assert _open_to_others(machine) == []  # local state: owner-only
    assert stat.S_IMODE((home / ".agents" / "skills").stat().st_mode) == 0o755
    assert stat.S_IMODE((home / ".codex").stat().st_mode) == 0o755
    objects = list(store.rglob("*"))
    assert any(p.is_file() for p in objects)
    assert [p for p in objects if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)] == []


def test_a_users_file_written_back_keeps_its_mode_but_loses_write_for_others(machine, folder_store):
    """The hook settings say which commands the agents run: a file that others could change would let them run
    anything as this user. Its mode is kept otherwise."""
    claude, codex = machine.home / ".claude", machine.home / ".codex"
    for folder in (claude, codex):
        folder.mkdir()
    files = {
        claude / "settings.json": ('{"theme": "dark"}', 0o666, 0o644),
        codex / "config.toml": ('model = "o3"\n', 0o646, 0o644),
        claude / "CLAUDE.md": ("# My rules\n", 0o640, 0o640),
        codex / "AGENTS.md": ("# Team rules\n", 0o604, 0o604),
    }
    for path, (text, mode, _wanted) in files.items():
        path.write_text(text)
        os.chmod(path, mode)
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--hooks", "--codex-sandbox")
    tools.exited(result)
    for path, (text, _mode, wanted) in files.items():
        assert text.strip("{}") in path.read_text(), path  # edited, the user's own settings kept
        assert stat.S_IMODE(path.stat().st_mode) == wanted, path
