"""`agent-memory hooks install|remove|status`: our handlers merged into the runtimes' own hook files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HELPER = str(Path(sys.executable).parent / "agent-memory")  # the console script beside the tests' interpreter
ENTRY_KEYS = {"agent", "file", "state", "events", "note", "changed", "backup"}

USER_CLAUDE_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard"}]}],
    },
}
USER_CODEX_HOOKS = {
    "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}
}


def claude_file(machine) -> Path:
    return machine.home / ".claude" / "settings.json"


def codex_file(machine) -> Path:
    return machine.home / ".codex" / "hooks.json"


def ours(runtime: str, event: str, timeout: int) -> dict:
    return {"type": "command", "command": f"{HELPER} hook {event} --agent {runtime}", "timeout": timeout}


def write_json(path: Path, value) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(value, indent=4).encode()
    path.write_bytes(data)
    return data


def hooks(machine, *args):
    return machine.run("hooks", *args, "--json")


def test_install_into_empty_folders_then_remove_leaves_nothing(machine):
    result = hooks(machine, "install")
    assert result.code == 0, result.err
    entries = result.json["agents"]
    assert [e["agent"] for e in entries] == ["codex", "claude"] and all(set(e) == ENTRY_KEYS for e in entries)
    codex, claude = entries
    assert codex["state"] == "installed" and codex["note"] == "installed; Codex will ask you to trust them (/hooks)"
    assert codex["events"] == {"SessionStart": "installed", "Stop": "installed"}
    assert claude["events"] == {"SessionStart": "installed", "Stop": "installed", "SessionEnd": "installed"}
    assert codex["changed"] and claude["changed"] and codex["backup"] is None
    assert json.loads(codex_file(machine).read_text()) == {
        "hooks": {
            "SessionStart": [{"hooks": [ours("codex", "session-start", 10)]}],
            "Stop": [{"hooks": [ours("codex", "stop", 30)]}],
        }
    }
    assert json.loads(claude_file(machine).read_text())["hooks"]["SessionEnd"] == [
        {"hooks": [ours("claude", "session-end", 5)]}
    ]

    removed = hooks(machine, "remove")
    assert removed.code == 0, removed.err
    assert [e["state"] for e in removed.json["agents"]] == ["not installed", "not installed"]
    assert not codex_file(machine).exists() and not claude_file(machine).exists()  # we created them: gone again
    assert machine.run("hooks", "status").out.splitlines() == [
        f"codex: not installed (agent-memory hooks install --agent codex) ({codex_file(machine)})",
        f"claude: not installed (agent-memory hooks install --agent claude) ({claude_file(machine)})",
    ]


def test_install_keeps_everything_else_appends_after_the_users_groups_and_backs_up(machine):
    original_claude = write_json(claude_file(machine), USER_CLAUDE_SETTINGS)
    original_codex = write_json(codex_file(machine), USER_CODEX_HOOKS)
    claude_file(machine).chmod(0o640)

    result = hooks(machine, "install")
    assert result.code == 0, result.err
    claude = json.loads(claude_file(machine).read_text())
    assert {k: v for k, v in claude.items() if k != "hooks"} == {
        "model": "opus",
        "permissions": {"allow": ["Bash(git status)"]},
    }
    assert claude["hooks"]["PreToolUse"] == USER_CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    assert claude["hooks"]["Stop"] == [
        USER_CLAUDE_SETTINGS["hooks"]["Stop"][0],
        {"hooks": [ours("claude", "stop", 30)]},
    ]
    codex = json.loads(codex_file(machine).read_text())
    # the user's group keeps index 0: Codex keys trust by position, so nothing the user trusted moves (X3)
    assert codex["hooks"]["SessionStart"] == [
        USER_CODEX_HOOKS["hooks"]["SessionStart"][0],
        {"hooks": [ours("codex", "session-start", 10)]},
    ]
    assert claude_file(machine).stat().st_mode & 0o777 == 0o640
    backups = {e["agent"]: Path(e["backup"]) for e in result.json["agents"]}
    assert backups["claude"].read_bytes() == original_claude and backups["codex"].read_bytes() == original_codex
    for backup in backups.values():  # kept with agent-memory's state, never in the agent's own folders
        assert backup.is_relative_to(machine.state) and backup.stat().st_mode & 0o077 == 0

    again = hooks(machine, "install")
    assert [e["changed"] for e in again.json["agents"]] == [False, False]
    assert [e["backup"] for e in again.json["agents"]] == [None, None]
    assert json.loads(claude_file(machine).read_text()) == claude  # installed twice = installed once

    assert hooks(machine, "remove").code == 0
    assert json.loads(claude_file(machine).read_text()) == USER_CLAUDE_SETTINGS
    assert json.loads(codex_file(machine).read_text()) == USER_CODEX_HOOKS


def test_one_runtime_only(machine):
    assert hooks(machine, "install", "--agent", "claude").code == 0
    assert claude_file(machine).exists() and not codex_file(machine).exists()
    states = [e["state"] for e in hooks(machine, "status").json["agents"]]
    assert states == ["not installed", "installed"]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[1, 2]",
        b'{"hooks": []}',
        b'{"hooks": {"Stop": {"hooks": []}}}',
        b'{"hooks": {"Stop": [1]}}',
        b"\xff\xfe",
    ],
)
def test_a_file_we_cannot_merge_into_is_refused_and_nothing_changes(machine, content):
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).write_bytes(content)
    original_codex = write_json(codex_file(machine), USER_CODEX_HOOKS)
    for action in ("install", "remove"):
        result = machine.run("hooks", action)
        assert result.code == 1, result.err
        assert result.err.startswith(f"Error: {claude_file(machine)} cannot be edited safely: ")
        assert "Nothing was changed." in result.err and "\nNext: fix " in result.err
        assert claude_file(machine).read_bytes() == content
        assert codex_file(machine).read_bytes() == original_codex  # the other runtime's file is untouched too
    status = hooks(machine, "status").json["agents"]
    assert status[1]["state"] == "unreadable" and status[0]["state"] == "not installed"


def test_a_moved_helper_is_updated_in_place_not_installed_twice(machine):
    old = "/old/venv/bin/agent-memory hook stop --agent codex"
    settings = {
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": old, "timeout": 30}]}, {"hooks": [{"command": "x"}]}],
        }
    }
    write_json(codex_file(machine), settings)
    status = hooks(machine, "status", "--agent", "codex").json["agents"][0]
    assert status["state"] == "incomplete" and status["events"] == {"SessionStart": "missing", "Stop": "outdated"}

    assert hooks(machine, "install", "--agent", "codex").code == 0
    stop = json.loads(codex_file(machine).read_text())["hooks"]["Stop"]
    assert stop == [{"hooks": [ours("codex", "stop", 30)]}, {"hooks": [{"command": "x"}]}]


def test_remove_takes_only_our_handlers_out_of_a_shared_group(machine):
    mixed = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}, ours("claude", "stop", 30)]}]}}
    write_json(claude_file(machine), mixed)
    assert hooks(machine, "remove", "--agent", "claude").code == 0
    assert json.loads(claude_file(machine).read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}
    }


def test_a_symlinked_settings_file_is_written_through(machine, tmp_path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(real, {"model": "opus"})
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).symlink_to(real)
    assert hooks(machine, "install", "--agent", "claude").code == 0
    assert claude_file(machine).is_symlink()
    assert json.loads(real.read_text())["hooks"]["Stop"] == [{"hooks": [ours("claude", "stop", 30)]}]


def test_concurrent_installs_and_status_lose_nothing(machine):
    write_json(claude_file(machine), USER_CLAUDE_SETTINGS)
    procs = [machine.popen("hooks", "install") for _ in range(6)] + [machine.popen("status", "--json")]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    claude = json.loads(claude_file(machine).read_text())
    assert claude["hooks"]["Stop"] == [
        USER_CLAUDE_SETTINGS["hooks"]["Stop"][0],
        {"hooks": [ours("claude", "stop", 30)]},
    ]
    assert claude["model"] == "opus"
    codex = json.loads(codex_file(machine).read_text())
    assert [len(groups) for groups in codex["hooks"].values()] == [1, 1]


def test_status_shows_hooks_per_runtime(machine, folder_store):
    machine.setup(folder_store)
    machine.run("hooks", "install", "--agent", "codex")
    status = machine.run("status", "--json").json
    assert [(h["agent"], h["state"]) for h in status["hooks"]] == [("codex", "installed"), ("claude", "not installed")]
    text = machine.run("status").out
    assert "hooks (codex): installed; Codex will ask you to trust them (/hooks)" in text
    assert "hooks (claude): not installed (agent-memory hooks install --agent claude)" in text


def test_bootstrap_refuses_a_broken_hook_file_before_setting_anything_up(machine, folder_store):
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).write_text("{oops")
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--hooks")
    assert result.code == 1 and "cannot be edited safely" in result.err
    assert not (machine.state / "config" / "config.json").exists()
    assert not codex_file(machine).exists() and not (machine.home / ".codex" / "AGENTS.md").exists()


def test_hook_commands_are_posix_sh_and_byte_stable(machine):
    """The strings are part of Codex's trust (X3) and run under dash (C2): an absolute helper, nothing else."""
    assert hooks(machine, "install").code == 0
    commands = [
        h["command"]
        for path in (codex_file(machine), claude_file(machine))
        for groups in json.loads(path.read_text())["hooks"].values()
        for group in groups
        for h in group["hooks"]
    ]
    assert len(commands) == 5
    for command in commands:
        assert command.startswith(HELPER + " hook ") and os.path.isabs(command.split()[0])
        assert not any(c in command for c in "$`\"'[]{}&|;<>*?~")
