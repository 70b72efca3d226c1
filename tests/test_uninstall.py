"""`agent-memory uninstall`: what bootstrap put into the agents' files comes out again, byte for byte, in the
reverse order and with backups; the user's memory (store, cache, outbox, configuration) stays; pending uploads
hold it back unless the user says to leave them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import tools
from conftest import Machine

USER_FILES = {  # what the user had before bootstrap, in each runtime's folder
    ".codex/AGENTS.md": "# My Codex rules\n\nAlways run the tests.\n",
    ".codex/config.toml": '# mine\nmodel = "gpt-5.1"\n\n[features]\nweb_search = true\n',
    ".codex/hooks.json": json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}, indent=4
    ),
    ".claude/settings.json": '{\n\t"model": "opus",\n\t"permissions": {"allow": ["Bash(ls)"]}\n}\n',
    ".claude/skills/my-own/SKILL.md": "---\nname: my-own\ndescription: Mine.\n---\n\n# Mine\n",
}
AGENT_FOLDERS = (".codex", ".claude", ".agents", ".local/bin")


def snapshot(machine: Machine) -> dict[str, bytes | str]:
    """Every file (its bytes) and link (its target) under the agents' folders and the PATH folder."""
    found: dict[str, bytes | str] = {}
    for folder in AGENT_FOLDERS:
        for path in sorted((machine.home / folder).rglob("*")):
            key = str(path.relative_to(machine.home))
            if path.is_symlink():
                found[key] = os.readlink(path)
            elif path.is_file():
                found[key] = path.read_bytes()
    return found


def user_machine(machine: Machine) -> dict[str, bytes | str]:
    for name, text in USER_FILES.items():
        path = machine.home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return snapshot(machine)


def bootstrap(machine: Machine, folder_store: str) -> dict:
    result = machine.run(
        "bootstrap", "--project", "demo", "--bucket", folder_store, "--hooks", "--codex-sandbox", "--json"
    )
    tools.exited(result)
    return result.json


def test_uninstall_after_bootstrap_gives_back_the_agents_files_byte_for_byte(machine, folder_store):
    before = user_machine(machine)
    boot = bootstrap(machine, folder_store)
    installed = snapshot(machine)
    assert b"If agent-memory is no longer installed, delete these lines" in installed[".codex/config.toml"]
    assert ".claude/CLAUDE.md" in installed and ".claude/skills/agent-memory/SKILL.md" in installed
    assert ".agents/skills/agent-memory/SKILL.md" in installed and installed != before
    machine.save("# Kept\n\nA note that outlives the install.")

    result = machine.run("uninstall", "--json")
    tools.exited(result)
    assert snapshot(machine) == before  # CLAUDE.md, which bootstrap created and held only the block, is gone too
    out = result.json
    assert [step["step"] for step in out["steps"]] == ["command", "codex-sandbox", "hooks", "instructions", "skills"]
    steps = {step["step"]: step for step in out["steps"]}
    home = machine.home
    assert steps["codex-sandbox"]["removed"] == [str(home / ".codex" / "config.toml")]
    assert sorted(steps["hooks"]["removed"]) == sorted(
        [str(home / ".codex/hooks.json"), str(home / ".claude/settings.json")]
    )
    assert steps["instructions"]["deleted"] == [str(home / ".claude" / "CLAUDE.md")]
    assert sorted(steps["skills"]["removed"]) == sorted(
        [str(home / ".agents/skills/agent-memory"), str(home / ".claude/skills/agent-memory")]
    )
    assert steps["skills"]["backups"] == []  # unmodified: what the package holds, nothing of the user's
    for step in ("codex-sandbox", "hooks", "instructions"):  # every file it changed was backed up first
        assert steps[step]["backups"] and all(Path(b).exists() for b in steps[step]["backups"]), step
    assert boot["command"]["state"] == "linked"  # a new login shell finds the helper through that link
    assert steps["command"]["removed"] == [str(home / ".local" / "bin" / "agent-memory")]
    assert out["changed"] is True and out["pending"] == 0 and out["warnings"] == []

    # the user's memory stays: the configuration, the cache, the note
    assert machine.run("config", "show", "--json").json["bucket"] == folder_store
    assert "Kept" in machine.run("search", "outlives", "--offline").out
    text = machine.run("uninstall")
    tools.exited(text)
    assert "nothing to remove" in text.out and snapshot(machine) == before  # once is enough


def test_uninstall_turns_off_the_sync_it_ran_and_drops_the_core_skills_record(machine, folder_store):
    """The sync of the agents' own memory ran from the hooks uninstall takes out and writes into the agents' folders:
    it goes off with them (nothing deleted, anywhere), so that a later bootstrap does not start it unasked. The
    record of the core skill goes with the skill. What the configuration keeps is said, and why."""
    user_machine(machine)
    tools.exited(machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--hooks", "--sync"))
    memory = machine.home / ".codex" / "memories"
    memory.mkdir(parents=True)
    (memory / "memory_summary.md").write_text("- The user prefers small commits.\n")
    tools.exited(machine.run("sync", "now"))
    store = Path(folder_store.removeprefix("file://"))
    synced = sorted(path.relative_to(store) for path in (store / "sync").rglob("*.json"))
    assert synced

    result = machine.run("uninstall", "--json")
    tools.exited(result)
    out = result.json
    assert out["sync_off"] == ["codex", "claude"] and out["changed"] is True
    config = json.loads((machine.state / "config" / "config.json").read_text())
    assert config == {"bucket": folder_store, "projects": {str(machine.work): "demo"}}  # what is not the install
    status = machine.run("sync", "status", "--json").json
    assert [agent["enabled"] for agent in status["agents"]] == [False, False]
    assert sorted(path.relative_to(store) for path in (store / "sync").rglob("*.json")) == synced  # nothing deleted
    assert (memory / "memory_summary.md").read_text() == "- The user prefers small commits.\n"

    tools.exited(machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--sync", "--agent", "claude"))
    text = machine.run("uninstall")
    tools.exited(text)
    said = (
        "turned off the sync of Claude Code's own memory, so that no later setup starts it unasked (nothing was "
        "deleted: the memory files here and their versions in the bucket stay; to turn it on again: agent-memory "
        "sync enable --agent claude)"
    )
    assert said in text.out
    kept = f"the configuration ({machine.state / 'config'}: the bucket and the folders mapped to projects"
    assert kept in text.out
    again = machine.run("uninstall", "--json")
    tools.exited(again)
    assert again.json["sync_off"] == [] and again.json["changed"] is False  # once is enough


def test_a_skill_edited_here_is_backed_up_before_it_goes_and_anothers_folder_stays(machine, folder_store):
    user_machine(machine)
    bootstrap(machine, folder_store)
    edited = machine.home / ".claude" / "skills" / "agent-memory" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy own addition.\n")
    result = machine.run("uninstall", "--json")
    tools.exited(result)
    backups = next(step for step in result.json["steps"] if step["step"] == "skills")["backups"]
    assert len(backups) == 1 and "My own addition." in (Path(backups[0]) / "claude" / "SKILL.md").read_text()
    assert not edited.exists() and (machine.home / ".claude" / "skills" / "my-own" / "SKILL.md").exists()


def test_uninstall_refuses_while_uploads_are_pending_unless_told(machine, folder_store, tmp_path):
    user_machine(machine)
    bootstrap(machine, folder_store)
    store = Path(folder_store.removeprefix("file://"))
    store.rename(tmp_path / "unmounted")  # its drive is gone: the save stays pending
    saved = machine.save("# Offline\n\nnot shared yet")
    tools.exited(saved, 75)
    installed = snapshot(machine)

    refused = machine.run("uninstall")
    tools.exited(refused, 5)
    assert refused.out == ""
    said = "1 upload saved on this machine is not shared yet, and once the hooks are gone nothing retries it."
    assert said in refused.err
    assert "agent-memory pending export ID --to PATH" in refused.err and "--discard-pending" in refused.err
    assert refused.err.rstrip().endswith("Next: agent-memory pending retry")
    assert snapshot(machine) == installed  # nothing changed
    as_json = machine.run("uninstall", "--json")
    tools.exited(as_json, 5)
    assert as_json.json["exit_code"] == 5

    done = machine.run("uninstall", "--discard-pending", "--json")
    tools.exited(done)
    assert done.json["pending"] == 1
    assert [n["id"] for n in machine.run("pending", "--json").json["notes"]] == [saved.json["id"]]  # still there
    assert (
        ".codex/hooks.json" in snapshot(machine)
        and "agent-memory" not in (machine.home / ".codex/hooks.json").read_text()
    )


def test_uninstall_help_and_bad_input(machine):
    help_text = machine.run("uninstall", "--help")
    tools.exited(help_text)
    assert "--discard-pending" in help_text.out and "Your notes stay" in help_text.out
    # how to take the sandbox consent out when the command is gone (deleted without uninstall)
    flat = " ".join(help_text.out.replace("-\n", "-").split())  # argparse wraps lines at hyphens
    assert "If the agent-memory command is already gone" in flat and "~/.codex/config.toml" in flat
    assert "'# agent-memory:begin codex-sandbox' to '# agent-memory:end codex-sandbox'" in flat
    assert "uninstall" in machine.run("--help").out
    for bad in (["--discard"], ["now"], ["--json", "--json=1"]):
        result = machine.run("uninstall", *bad)
        tools.exited(result, 2)
        assert result.err.endswith("Next: agent-memory uninstall --help\n"), bad
    assert not (machine.home / ".codex").exists()  # bad input changes nothing


def test_on_a_machine_that_never_had_agent_memory_uninstall_claims_to_keep_nothing(machine):
    result = machine.run("uninstall")
    tools.exited(result)
    assert result.out == "agent-memory is not installed in the agents' files: nothing to remove\n"


def test_a_hook_file_that_cannot_be_edited_stops_uninstall_before_anything_is_removed(machine, folder_store):
    user_machine(machine)
    bootstrap(machine, folder_store)
    (machine.home / ".claude" / "settings.json").write_text("{broken")
    installed = snapshot(machine)
    result = machine.run("uninstall")
    tools.exited(result, 1)
    assert "cannot be edited safely" in result.err
    assert snapshot(machine) == installed


def test_a_link_to_the_helper_that_bootstrap_did_not_make_stays(machine, folder_store):
    """pipx and uv link their helpers into ~/.local/bin too: that link is theirs, even to this same helper."""
    link = machine.home / ".local" / "bin" / "agent-memory"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path(sys.executable).parent / "agent-memory")
    boot = bootstrap(machine, folder_store)
    assert boot["command"]["state"] in ("on path", "unchanged")
    result = machine.run("uninstall", "--json")
    tools.exited(result)
    assert result.json["steps"][0] == {"step": "command", "removed": [], "deleted": [], "backups": []}
    assert link.is_symlink()


def test_two_uninstalls_at_once_give_back_the_same_files(machine, folder_store):
    before = user_machine(machine)
    bootstrap(machine, folder_store)
    procs = [machine.popen("uninstall", "--json") for _ in range(3)]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=300))
    assert snapshot(machine) == before


def test_on_a_machine_that_had_nothing_uninstall_leaves_no_file_of_ours(machine, folder_store):
    bootstrap(machine, folder_store)
    result = machine.run("uninstall", "--json")
    tools.exited(result)
    assert snapshot(machine) == {}
    steps = {step["step"]: step for step in result.json["steps"]}
    for step in ("codex-sandbox", "hooks", "instructions"):  # emptied, so taken away: the user had none
        assert steps[step]["deleted"] == steps[step]["removed"] and steps[step]["removed"], step


def _link_into_dotfiles(machine: Machine, names: list[str]) -> Path:
    """The agents' files as links into a dotfiles folder outside HOME, as stow, chezmoi and home-manager make."""
    dotfiles = machine.root / "dotfiles"
    for name in names:
        target = dotfiles / name.lstrip(".").replace("/", "-")
        target.parent.mkdir(parents=True, exist_ok=True)
        if name in USER_FILES:
            target.write_text(USER_FILES[name])
        link = machine.home / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    return dotfiles


def _dotfiles(dotfiles: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(dotfiles.iterdir())}


LINKED = [".codex/hooks.json", ".codex/AGENTS.md", ".claude/settings.json"]


def test_files_linked_into_a_dotfiles_folder_are_edited_where_they_lead_and_the_links_stay(machine, folder_store):
    dotfiles = _link_into_dotfiles(machine, LINKED)
    before, links = _dotfiles(dotfiles), {name: os.readlink(machine.home / name) for name in LINKED}
    boot = bootstrap(machine, folder_store)
    assert boot["warnings"] == [] or all("links to" not in w for w in boot["warnings"])
    after = _dotfiles(dotfiles)
    assert all(after[name] != before[name] for name in before)  # the block and the hooks, where the links lead
    assert b"agent-memory hook" in after["codex-hooks.json"] and b"agent-memory:begin" in after["codex-AGENTS.md"]
    assert {name: os.readlink(machine.home / name) for name in LINKED} == links
    result = machine.run("uninstall", "--json")
    tools.exited(result)
    assert _dotfiles(dotfiles) == before and {n: os.readlink(machine.home / n) for n in LINKED} == links
    steps = {step["step"]: step for step in result.json["steps"]}
    assert sorted(steps["hooks"]["removed"]) == sorted(str(machine.home / n) for n in LINKED if "AGENTS" not in n)
    assert steps["instructions"]["removed"][0] == str(machine.home / ".codex/AGENTS.md")
    assert (
        steps["hooks"]["deleted"] == []
        and str(machine.home / ".codex/AGENTS.md") not in steps["instructions"]["deleted"]
    )
    assert all(Path(b).exists() for step in steps.values() for b in step["backups"])


def test_a_linked_file_that_only_held_ours_is_emptied_never_deleted(machine, folder_store):
    # links to files that do not exist yet: bootstrap creates them where the links lead
    dotfiles = machine.root / "dotfiles"
    dotfiles.mkdir()
    for name in (".codex/hooks.json", ".claude/settings.json"):
        (machine.home / name).parent.mkdir(parents=True, exist_ok=True)
        (machine.home / name).symlink_to(dotfiles / name.lstrip(".").replace("/", "-"))
    bootstrap(machine, folder_store)
    assert set(_dotfiles(dotfiles)) == {"codex-hooks.json", "claude-settings.json"}
    result = machine.run("uninstall", "--json")
    tools.exited(result)
    # each stays, as a link to an empty JSON document, and the report deletes nothing
    assert _dotfiles(dotfiles) == {"codex-hooks.json": b"{}\n", "claude-settings.json": b"{}\n"}
    assert all((machine.home / name).is_symlink() for name in (".codex/hooks.json", ".claude/settings.json"))
    steps = {step["step"]: step for step in result.json["steps"]}
    assert steps["hooks"]["deleted"] == [] and len(steps["hooks"]["removed"]) == 2
    assert machine.run("status", "--json").json["hooks"]  # the runtimes still read a valid file


def _read_only(path: Path) -> None:
    """Make `path` unwritable as home-manager's store is (root writes through modes: an immutable file instead)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o444)
        path.parent.chmod(0o555)


def _writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.parent.chmod(0o755)
        path.chmod(0o644)


def test_a_link_into_a_read_only_store_is_reported_not_an_error(machine, folder_store):
    dotfiles = _link_into_dotfiles(machine, [".codex/AGENTS.md"])
    target = dotfiles / "codex-AGENTS.md"
    _read_only(target)
    try:
        boot = bootstrap(machine, folder_store)
        assert target.read_text() == USER_FILES[".codex/AGENTS.md"]  # left as it was
        (warning,) = [w for w in boot["warnings"] if "links to" in w]
        assert str(machine.home / ".codex/AGENTS.md") in warning and str(target) in warning
        assert "cannot be written" in warning and "home-manager" in warning
        codex = [entry for entry in boot["instructions"] if entry["file"].endswith("AGENTS.md")]
        assert codex == [{"file": str(machine.home / ".codex/AGENTS.md"), "state": "unchanged"}]
        result = machine.run("uninstall", "--json")
        tools.exited(result)
        assert result.json["warnings"] == [] and target.read_text() == USER_FILES[".codex/AGENTS.md"]
    finally:
        _writable(target)
