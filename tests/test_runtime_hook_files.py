"""`agent-memory hooks install|remove|status`: our handlers merged into the runtimes' own hook files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent_memory
import tools
from agent_memory.setup import command as helper_command

HELPER = str(Path(sys.executable).parent / "agent-memory")  # the console script beside the tests' interpreter
ENTRY_KEYS = {"agent", "file", "state", "events", "note", "changed", "backup"}
OWN = "installed (your own entry)"

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
    return {
        "type": "command",
        "command": f"[ ! -x {HELPER} ] || {HELPER} hook {event} --agent {runtime}",
        "timeout": timeout,
    }


def write_json(path: Path, value) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(value, indent=4).encode()
    path.write_bytes(data)
    return data


def hooks(machine, *args):
    return machine.run("hooks", *args, "--json")


def test_install_into_empty_folders_then_remove_leaves_nothing(machine):
    result = hooks(machine, "install")
    tools.exited(result)
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
    tools.exited(removed)
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
    tools.exited(result)
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

    tools.exited(hooks(machine, "remove"))
    assert json.loads(claude_file(machine).read_text()) == USER_CLAUDE_SETTINGS
    assert json.loads(codex_file(machine).read_text()) == USER_CODEX_HOOKS


def test_one_runtime_only(machine):
    tools.exited(hooks(machine, "install", "--agent", "claude"))
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
        b'{\n  "model": "opus",\n  "hooks": {\n    "Stop": [\n      {"hooks": [',  # cut short
        b'{"hooks": {}, "limit": NaN}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_a_file_we_cannot_merge_into_is_refused_and_nothing_changes(machine, content):
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).write_bytes(content)
    original_codex = write_json(codex_file(machine), USER_CODEX_HOOKS)
    for action in ("install", "remove"):
        result = machine.run("hooks", action)
        tools.exited(result, 1)
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

    tools.exited(hooks(machine, "install", "--agent", "codex"))
    stop = json.loads(codex_file(machine).read_text())["hooks"]["Stop"]
    assert stop == [{"hooks": [ours("codex", "stop", 30)]}, {"hooks": [{"command": "x"}]}]


def test_our_handler_in_a_group_of_the_users_is_their_own_entry(machine):
    """Install only ever appends a group of its own, so a handler of ours inside the user's group is theirs."""
    mixed = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}, ours("claude", "stop", 30)]}]}}
    original = write_json(claude_file(machine), mixed)
    removed = hooks(machine, "remove", "--agent", "claude").json["agents"][0]
    assert removed["changed"] is False and claude_file(machine).read_bytes() == original
    assert removed["events"]["Stop"] == "installed (your own entry)"
    installed = hooks(machine, "install", "--agent", "claude").json["agents"][0]
    assert installed["state"] == "installed"
    assert installed["events"] == {"SessionStart": "installed", "Stop": OWN, "SessionEnd": "installed"}
    assert json.loads(claude_file(machine).read_text())["hooks"]["Stop"] == mixed["hooks"]["Stop"]  # not twice


def test_a_symlinked_settings_file_is_written_through(machine, tmp_path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(real, {"model": "opus"})
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).symlink_to(real)
    tools.exited(hooks(machine, "install", "--agent", "claude"))
    assert claude_file(machine).is_symlink()
    assert json.loads(real.read_text())["hooks"]["Stop"] == [{"hooks": [ours("claude", "stop", 30)]}]


def test_concurrent_installs_and_status_lose_nothing(machine):
    write_json(claude_file(machine), USER_CLAUDE_SETTINGS)
    procs = [machine.popen("hooks", "install") for _ in range(6)] + [machine.popen("status", "--json")]
    for proc in procs:
        ended = tools.exited(tools.finished(proc, timeout=120))
        _out, _err = ended.stdout, ended.stderr
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
    tools.exited(result, 1)
    assert "cannot be edited safely" in result.err
    assert not (machine.state / "config" / "config.json").exists()
    assert not codex_file(machine).exists() and not (machine.home / ".codex" / "AGENTS.md").exists()


def test_hook_commands_are_posix_sh_and_byte_stable(machine):
    """The strings are part of Codex's trust (X3) and run under dash (C2): an absolute helper, nothing else."""
    tools.exited(hooks(machine, "install"))
    commands = [
        h["command"]
        for path in (codex_file(machine), claude_file(machine))
        for groups in json.loads(path.read_text())["hooks"].values()
        for group in groups
        for h in group["hooks"]
    ]
    assert len(commands) == 5
    for command in commands:
        # the guard (silent once the helper is gone) tests the file it then runs, by the same absolute path
        guard, _or, run = command.partition(" || ")
        assert guard == f"[ ! -x {HELPER} ]" and run.startswith(HELPER + " hook ") and os.path.isabs(HELPER)
        assert not any(c in run for c in "$`\"'[]{}&|;<>*?~")


# -- the user's own entries and the file's own layout ---------------------------------------------------------

EVENTS = {"codex": ("SessionStart", "Stop"), "claude": ("SessionStart", "Stop", "SessionEnd")}
ARGUMENTS = {"SessionStart": ("session-start", 10), "Stop": ("stop", 30), "SessionEnd": ("session-end", 5)}


def hook_file(machine, runtime: str) -> Path:
    return codex_file(machine) if runtime == "codex" else claude_file(machine)


def own_entry(runtime: str, event: str, **fields) -> dict:
    """The user's own handler running our exact command, with fields of their own (a longer timeout)."""
    return {"type": "command", "command": f"{HELPER} hook {ARGUMENTS[event][0]} --agent {runtime}", **fields}


def our_group(runtime: str, event: str) -> dict:
    return {"hooks": [ours(runtime, event=ARGUMENTS[event][0], timeout=ARGUMENTS[event][1])]}


def with_ours(settings: dict, runtime: str) -> dict:
    """`settings` as install should leave them: a group of ours appended to each event, new events last."""
    expected = json.loads(json.dumps(settings))
    for event in EVENTS[runtime]:
        expected.setdefault("hooks", {}).setdefault(event, []).append(our_group(runtime, event))
    return expected


def aged(path: Path) -> int:
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return path.stat().st_mtime_ns


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_the_users_own_entry_with_our_command_is_left_alone_and_counted_as_installed(machine, runtime):
    path = hook_file(machine, runtime)
    settings = {"hooks": {e: [{"hooks": [own_entry(runtime, e, timeout=99)]}] for e in EVENTS[runtime]}}
    original = write_json(path, settings)
    mtime = aged(path)
    for action in ("install", "status", "remove", "install"):
        entry = hooks(machine, action, "--agent", runtime).json["agents"][0]
        assert path.read_bytes() == original and path.stat().st_mtime_ns == mtime, action  # not even rewritten
        assert entry["state"] == "installed" and set(entry["events"].values()) == {OWN}, action
        assert entry.get("changed", False) is False and entry.get("backup") is None
        assert (
            f"{' and '.join(EVENTS[runtime])} are your own entries, which agent-memory never changes" in entry["note"]
        )
    assert not (machine.state / "state" / "backups").exists()
    assert "are your own entries, which agent-memory never changes or removes" in machine.run("hooks", "status").out


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_install_adds_only_the_events_the_users_own_entries_do_not_cover(machine, runtime):
    path = hook_file(machine, runtime)
    own_stop = {"matcher": "", "hooks": [own_entry(runtime, "Stop", timeout=99, statusMessage="saving")]}
    settings = {"hooks": {"Stop": [own_stop]}}
    original = write_json(path, settings)
    entry = hooks(machine, "install", "--agent", runtime).json["agents"][0]
    assert entry["changed"] is True and Path(entry["backup"]).read_bytes() == original
    assert entry["events"]["Stop"] == OWN and entry["state"] == "installed"
    installed = json.loads(path.read_text())
    assert installed["hooks"]["Stop"] == [own_stop]  # no second group of ours: the hook would run twice
    assert installed["hooks"]["SessionStart"] == [our_group(runtime, "SessionStart")]
    assert "Stop is your own entry, which agent-memory never changes or removes" in entry["note"]

    removed = hooks(machine, "remove", "--agent", runtime).json["agents"][0]
    assert path.read_bytes() == original
    assert removed["events"]["Stop"] == OWN and removed["events"]["SessionStart"] == "missing"


def test_a_group_of_ours_beside_the_users_own_entry_goes_without_moving_theirs(machine):
    own_stop = {"hooks": [own_entry("codex", "Stop", timeout=99)]}
    write_json(codex_file(machine), {"hooks": {"Stop": [our_group("codex", "Stop"), own_stop]}})
    tools.exited(hooks(machine, "install", "--agent", "codex"))
    # theirs runs our hook already: ours would run it twice, and theirs keeps index 1 (and Codex's trust in it)
    assert json.loads(codex_file(machine).read_text())["hooks"]["Stop"] == [{"hooks": []}, own_stop]


def test_the_users_own_entry_running_another_helper_is_reported_not_changed(machine):
    old = {"type": "command", "command": "/old/venv/bin/agent-memory hook stop --agent codex", "timeout": 99}
    write_json(codex_file(machine), {"hooks": {"Stop": [{"hooks": [old]}]}})
    entry = hooks(machine, "install", "--agent", "codex").json["agents"][0]
    installed = json.loads(codex_file(machine).read_text())
    assert installed["hooks"]["Stop"] == [{"hooks": [old]}]  # neither changed nor joined by a second Stop hook
    assert entry["state"] == "incomplete" and entry["events"] == {
        "SessionStart": "installed",
        "Stop": "outdated (your own entry)",
    }
    assert entry["note"].endswith(
        "Stop is your own entry, which agent-memory never changes or removes; "
        f"change the command of your Stop entry to [ ! -x {HELPER} ] || {HELPER} hook stop --agent codex"
    )
    tools.exited(hooks(machine, "remove", "--agent", "codex"))
    assert json.loads(codex_file(machine).read_text()) == {"hooks": {"Stop": [{"hooks": [old]}]}}


@pytest.mark.parametrize("indent", [2, 4, "\t"], ids=["2-spaces", "4-spaces", "tabs"])
@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_install_and_remove_keep_the_files_key_order_and_indentation(machine, runtime, indent):
    path = hook_file(machine, runtime)
    settings = {  # keys in the user's order, not sorted; the hooks in the middle
        "zeta": {"b": 1, "a": [1, 2]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
        "alpha": "caf\u00e9",
    }
    original = (json.dumps(settings, indent=indent, ensure_ascii=False) + "\n").encode()
    path.parent.mkdir(parents=True)
    path.write_bytes(original)

    tools.exited(hooks(machine, "install", "--agent", runtime))
    # exactly the user's layout, as if they had written our groups themselves
    assert path.read_text() == json.dumps(with_ours(settings, runtime), indent=indent, ensure_ascii=False) + "\n"
    mtime = aged(path)
    assert hooks(machine, "install", "--agent", runtime).json["agents"][0]["changed"] is False
    assert path.stat().st_mtime_ns == mtime  # nothing to change: not rewritten
    tools.exited(hooks(machine, "remove", "--agent", runtime))
    assert path.read_bytes() == original


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_hand_written_file_keeps_every_byte_install_did_not_add(machine, runtime):
    path = hook_file(machine, runtime)
    original = (
        b'{\r\n    "model": "opus",   "env": {"NAME": "caf\\u00e9", "PATH_X": "a\\/b"},\r\n'
        b'    "permissions": {"allow": ["Bash(git status)", "Read"]},\r\n'
        b'    "hooks": {\r\n'
        b'        "Stop": [ {"hooks": [{"type": "command", "command": "notify-send done"}]} ]\r\n'
        b'    },\r\n    "ratio": 1.50\r\n}'  # no final newline
    )
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    tools.exited(hooks(machine, "install", "--agent", runtime))
    data = path.read_bytes()
    assert json.loads(data) == with_ours(json.loads(original), runtime)
    for kept in (b'"caf\\u00e9"', b'"a\\/b"', b'["Bash(git status)", "Read"]', b'"ratio": 1.50\r\n}', b"   "):
        assert kept in data
    assert not data.endswith(b"\n") and b"\n" not in data.replace(b"\r\n", b"")
    # the user's one-line array gets our group on the same line, joined the way theirs are
    stop_line = next(line for line in data.split(b"\r\n") if b'"Stop"' in line)
    assert stop_line.startswith(b'        "Stop": [ {"hooks": [{"type": "command", "command": "notify-send done"}]}, {')
    tools.exited(hooks(machine, "remove", "--agent", runtime))
    assert path.read_bytes() == original


def test_a_file_on_one_line_stays_on_one_line(machine):
    original = b'{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}\n'
    claude_file(machine).parent.mkdir(parents=True)
    claude_file(machine).write_bytes(original)
    tools.exited(hooks(machine, "install", "--agent", "claude"))
    data = claude_file(machine).read_bytes()
    assert data.count(b"\n") == 1 and b": " not in data and b", " not in data
    assert json.loads(data) == with_ours(json.loads(original), "claude")
    tools.exited(hooks(machine, "remove", "--agent", "claude"))
    assert claude_file(machine).read_bytes() == original


def test_codex_remove_keeps_the_index_of_every_group_after_ours(machine):
    """Codex keys trust by group index (X3): a group of ours taken out before the user's leaves a placeholder."""
    tools.exited(hooks(machine, "install"))
    theirs = {"hooks": [{"type": "command", "command": "echo later"}]}
    for path in (codex_file(machine), claude_file(machine)):
        settings = json.loads(path.read_text())
        for groups in settings["hooks"].values():
            groups.append(theirs)  # added by the user after install: behind ours
        write_json(path, settings)

    tools.exited(hooks(machine, "remove"))
    codex = json.loads(codex_file(machine).read_text())["hooks"]
    assert codex == {"SessionStart": [{"hooks": []}, theirs], "Stop": [{"hooks": []}, theirs]}
    claude = json.loads(claude_file(machine).read_text())["hooks"]
    assert claude == {event: [theirs] for event in EVENTS["claude"]}  # no trust by position there: gone entirely

    # installed again: back where it was (the same key, so the same trust), no empty group left
    tools.exited(hooks(machine, "install", "--agent", "codex"))
    again = json.loads(codex_file(machine).read_text())["hooks"]
    assert again == {event: [our_group("codex", event), theirs] for event in EVENTS["codex"]}
    assert hooks(machine, "install", "--agent", "codex").json["agents"][0]["changed"] is False  # in place
    tools.exited(hooks(machine, "remove", "--agent", "codex"))
    assert json.loads(codex_file(machine).read_text())["hooks"] == codex

    # the user's group taken out meanwhile: the placeholder is last, and ours goes back into it
    write_json(codex_file(machine), {"hooks": {"Stop": [{"hooks": []}]}})
    tools.exited(hooks(machine, "install", "--agent", "codex"))
    assert json.loads(codex_file(machine).read_text())["hooks"]["Stop"] == [our_group("codex", "Stop")]


def test_a_duplicate_group_of_ours_is_taken_out_without_moving_the_users(machine):
    theirs = {"hooks": [{"type": "command", "command": "echo later"}]}
    moved = {"hooks": [{"type": "command", "command": "/old/agent-memory hook stop --agent codex", "timeout": 30}]}
    write_json(codex_file(machine), {"hooks": {"Stop": [moved, our_group("codex", "Stop"), theirs]}})
    tools.exited(hooks(machine, "install", "--agent", "codex"))
    stop = json.loads(codex_file(machine).read_text())["hooks"]["Stop"]
    assert stop == [our_group("codex", "Stop"), {"hooks": []}, theirs]


def test_concurrent_installs_and_removes_give_back_the_users_bytes(machine):
    originals = {
        "claude": write_json(claude_file(machine), USER_CLAUDE_SETTINGS),
        "codex": write_json(codex_file(machine), USER_CODEX_HOOKS),
    }
    procs = [machine.popen("hooks", action) for action in ("install", "remove") * 4]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=120))
    for runtime, original in originals.items():  # installed or not, never half of one and half of the other
        installed = json.dumps(with_ours(json.loads(original), runtime), indent=4).encode()
        assert hook_file(machine, runtime).read_bytes() in (original, installed)
    tools.exited(hooks(machine, "remove"))
    for runtime, original in originals.items():
        assert hook_file(machine, runtime).read_bytes() == original


@pytest.mark.parametrize("key", ["hooks", "codex_hooks"])
def test_settings_that_turn_every_hook_off_are_named_by_status(machine, key):
    tools.exited(hooks(machine, "install"))
    settings = json.loads(claude_file(machine).read_text())
    claude_file(machine).write_text(json.dumps({**settings, "disableAllHooks": True}))
    config = machine.home / ".codex" / "config.toml"
    config.write_text(f'model = "o3"\n\n[features]\n{key} = false\n')

    found = {e["agent"]: e for e in hooks(machine, "status").json["agents"]}
    assert found["claude"]["state"] == found["codex"]["state"] == "disabled"
    assert found["claude"]["note"] == (
        f'installed, but "disableAllHooks": true in {claude_file(machine)} turns every hook off, so they do not run '
        "(take that setting out to run them)"
    )
    assert f"[features] {key} = false in {config}" in found["codex"]["note"]
    assert 'hooks (claude): installed, but "disableAllHooks": true' in machine.run("status").out

    claude_file(machine).write_text(json.dumps({**settings, "disableAllHooks": False}))
    config.write_text('model = "o3"\n\n[features]\nhooks = true\n')
    assert [e["state"] for e in hooks(machine, "status").json["agents"]] == ["installed", "installed"]


def test_a_codex_setting_spelled_with_an_escape_still_turns_the_hooks_off(machine):
    """Status parses config.toml for the setting only where the key can be in it: a quoted key may spell it with an
    escape, and is found too; a config.toml with neither is not parsed at all (see test_import_paths)."""
    tools.exited(hooks(machine, "install", "--agent", "codex"))
    config = machine.home / ".codex" / "config.toml"
    config.write_text('model = "o3"\n\n[features]\n"\\u0068ooks" = false\n')
    found = hooks(machine, "status", "--agent", "codex").json["agents"][0]
    assert found["state"] == "disabled"
    assert f"[features] hooks = false in {config}" in found["note"]
    config.write_text('model = "o3"\n\n[tui]\nnotifications = true\n')
    assert hooks(machine, "status", "--agent", "codex").json["agents"][0]["state"] == "installed"


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_projects_own_disable_all_hooks_is_named_by_status(machine, name, tmp_path):
    tools.exited(hooks(machine, "install", "--agent", "claude"))
    project = machine.work / ".claude" / name
    project.parent.mkdir(parents=True, exist_ok=True)
    project.write_text(json.dumps({"permissions": {}, "disableAllHooks": True}))
    found = hooks(machine, "status", "--agent", "claude").json["agents"][0]
    assert found["state"] == "disabled"
    assert found["note"].startswith(f'installed, but "disableAllHooks": true in {project} turns every hook off')
    assert f'"disableAllHooks": true in {project}' in machine.run("status").out

    # a folder is anyone's: a link, a FIFO or a huge file there is not followed, waited on or read whole
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"disableAllHooks": true}')
    huge = b'{"disableAllHooks": true, "pad": "' + b"x" * (2 << 20) + b'"}'
    for plant in (lambda: project.symlink_to(elsewhere), lambda: os.mkfifo(project), lambda: project.write_bytes(huge)):
        project.unlink()
        plant()
        result = hooks(machine, "status", "--agent", "claude")
        tools.exited(result)
        assert result.json["agents"][0]["state"] == "installed", result.err


def test_the_guard_of_a_helper_run_as_python_m_tests_the_package_it_runs(tmp_path, monkeypatch):
    """Without an `agent-memory` script beside the interpreter, the hooks run `python -m agent_memory`: the guard
    then tests the package's __main__.py, and a line whose package is gone exits 0 in silence under sh."""
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(python))
    helper = helper_command.helper_command()
    assert helper == f"{python} -m agent_memory"
    main = Path(agent_memory.__file__).resolve().parent / "__main__.py"
    line = helper_command.guarded(f"{helper} --version")
    assert line == f"[ ! -f {main} ] || {helper} --version"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # outside the venv, its packages
    ran = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, timeout=60, env=env)
    tools.exited(ran)
    assert ran.stdout.startswith("agent-memory ")
    gone = line.replace(str(main), str(tmp_path / "gone" / "__main__.py"))
    silent = subprocess.run(["/bin/sh", "-c", gone], capture_output=True, text=True, timeout=60, env=env)
    assert (silent.returncode, silent.stdout, silent.stderr) == (0, "", "")
