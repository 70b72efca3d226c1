"""Setting up the runtimes around the hooks: Codex's sandbox consent, the login-shell check, Claude's double load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import tools

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HELPER = str(Path(sys.executable).parent / "agent-memory")
BEGIN = "# agent-memory:begin codex-sandbox"
END = "# agent-memory:end codex-sandbox"
USER_CONFIG = """# my Codex settings
model = "gpt-5.1"
approval_policy = "on-request"

[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:9/v1"
"""


def config_toml(machine) -> Path:
    return machine.home / ".codex" / "config.toml"


def sandbox(machine, action):
    return machine.run("codex-sandbox", action, "--json")


def expected_roots(machine) -> list[str]:
    # the helper's state and cache, the Hugging Face cache and hf_xet's (which the test machines keep apart)
    return [
        str(machine.state / "state"),
        str(machine.state / "cache"),
        str(machine.home / ".cache" / "huggingface"),
        str(machine.home / ".cache" / "xet"),
    ]


def test_consent_adds_exactly_the_helpers_folders_and_network_then_comes_out_byte_for_byte(machine):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_text(USER_CONFIG)
    result = sandbox(machine, "allow")
    tools.exited(result)
    allowed = result.json
    backup = allowed.pop("backup")
    assert allowed == {
        "file": str(config_toml(machine)),
        "state": "allowed",
        "roots": expected_roots(machine),
        "network": True,
        "missing": [],
        "next": None,
        "changed": True,
    }
    assert Path(backup).read_text() == USER_CONFIG and Path(backup).is_relative_to(machine.state / "state" / "backups")
    for root in expected_roots(machine):
        assert Path(root).is_dir()  # Codex can only bind folders that exist
    parsed = tomllib.loads(config_toml(machine).read_text())
    assert parsed["sandbox_workspace_write"] == {"writable_roots": expected_roots(machine), "network_access": True}
    assert parsed["model_providers"]["local"]["base_url"] == "http://127.0.0.1:9/v1"  # the user's tables unchanged
    assert parsed["approval_policy"] == "on-request"
    assert config_toml(machine).read_text().endswith(USER_CONFIG)

    unchanged = sandbox(machine, "allow").json
    assert unchanged["changed"] is False and unchanged["backup"] is None
    assert sandbox(machine, "status").json["state"] == "allowed"
    assert "codex sandbox: allowed in" in machine.run("status").out

    removed = sandbox(machine, "remove")
    assert removed.json == {
        "file": str(config_toml(machine)),
        "state": "not allowed",
        "roots": [],
        "network": False,
        "missing": [],
        "next": "agent-memory codex-sandbox allow",
        "changed": True,
        "backup": removed.json["backup"],
    }
    assert Path(removed.json["backup"]).read_text().endswith(USER_CONFIG)  # the file with the consent block
    assert config_toml(machine).read_text() == USER_CONFIG
    backups = sorted((machine.state / "state" / "backups" / "codex").iterdir())
    assert [b.read_text() == USER_CONFIG for b in backups] == [True, False]  # before allow, before remove


def test_a_file_that_only_held_the_consent_goes_away_with_it(machine):
    assert sandbox(machine, "allow").json["backup"] is None  # there was no file to back up
    held = config_toml(machine).read_text()
    removed = machine.run("codex-sandbox", "remove")
    tools.exited(removed)
    assert not config_toml(machine).exists()
    (line,) = [line for line in removed.out.splitlines() if line.startswith("  previous file backed up in ")]
    assert Path(line.removeprefix("  previous file backed up in ")).read_text() == held
    assert sandbox(machine, "remove").json["changed"] is False


USER_MARKER_TEXT = f"""# my Codex settings
model = "gpt-5.1"
developer_instructions = \"\"\"
An example of the consent block, kept in a string:
{BEGIN}
sandbox_workspace_write.network_access = false
{END}
\"\"\"
literal = '''
  {BEGIN}'''
escaped = \"\"\"a \\\"\"\"
{END}
\"\"\"\"

[profiles.quiet]
notify = [
  {BEGIN}
  "notify-send",
]
"""


def test_marker_text_in_the_users_strings_and_arrays_is_theirs(machine):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_text(USER_MARKER_TEXT)
    before = tomllib.loads(USER_MARKER_TEXT)
    assert sandbox(machine, "status").json["state"] == "not allowed"

    allowed = sandbox(machine, "allow")
    tools.exited(allowed)
    assert allowed.json["state"] == "allowed" and allowed.json["roots"] == expected_roots(machine)
    text = config_toml(machine).read_text()
    assert text.endswith(USER_MARKER_TEXT) and text.count(BEGIN) == USER_MARKER_TEXT.count(BEGIN) + 1
    parsed = tomllib.loads(text)
    assert {k: v for k, v in parsed.items() if k != "sandbox_workspace_write"} == before  # their strings intact
    assert sandbox(machine, "allow").json["changed"] is False

    removed = sandbox(machine, "remove")
    tools.exited(removed)
    assert config_toml(machine).read_text() == USER_MARKER_TEXT


def test_lines_are_counted_as_toml_counts_them(machine):
    """A comment above the block may hold U+2028 or U+0085, which TOML allows and Python's splitlines splits at."""
    config_toml(machine).parent.mkdir(parents=True)
    tools.exited(sandbox(machine, "allow"))
    above = f'# mine \u2028 and \x85 too\nnote = """\n\n{END}\n"""\n'
    below = 'title = "a\u2029b"\n'
    content = above + config_toml(machine).read_text() + below
    config_toml(machine).write_text(content)
    assert sandbox(machine, "status").json["state"] == "allowed"
    removed = sandbox(machine, "remove")
    tools.exited(removed)
    assert config_toml(machine).read_text() == above + below


def test_a_block_that_holds_settings_of_the_users_is_not_taken_out(machine):
    config_toml(machine).parent.mkdir(parents=True)
    tools.exited(sandbox(machine, "allow"))
    lines = config_toml(machine).read_text().splitlines(keepends=True)
    content = "".join([*lines[:-1], 'model = "mine"\n', lines[-1]])  # the user wrote a line inside our block
    config_toml(machine).write_text(content)
    for action in ("allow", "remove"):
        result = machine.run("codex-sandbox", action)
        tools.exited(result, 1)
        assert "holds more than agent-memory's settings" in result.err, result.err
        assert "\nNext: remove the lines from" in result.err
        assert config_toml(machine).read_text() == content


@pytest.mark.parametrize(
    "content, error",
    [
        ("[sandbox_workspace_write]\nnetwork_access = false\n", "already has its own [sandbox_workspace_write]"),
        ('sandbox_workspace_write.writable_roots = ["/x"]\n', "already has its own [sandbox_workspace_write]"),
        ("model = \n", "is not valid TOML"),
        ("# agent-memory:begin codex-sandbox\nmodel = 'x'\n", "a begin marker has no end marker"),
    ],
)
def test_consent_refuses_a_config_it_cannot_edit_safely(machine, content, error):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_text(content)
    result = machine.run("codex-sandbox", "allow")
    tools.exited(result, 1)
    assert error in result.err and "\nNext: " in result.err
    assert config_toml(machine).read_text() == content


def test_moved_state_makes_the_consent_incomplete_until_allowed_again(machine, tmp_path):
    tools.exited(sandbox(machine, "allow"))
    moved = {"AGENT_MEMORY_HOME": str(tmp_path / "moved")}
    found = machine.run("codex-sandbox", "status", "--json", env=moved).json
    assert found["state"] == "incomplete" and found["next"] == "agent-memory codex-sandbox allow"
    assert found["missing"] == [str(tmp_path / "moved" / "state"), str(tmp_path / "moved" / "cache")]
    assert machine.run("codex-sandbox", "allow", "--json", env=moved).json["state"] == "allowed"
    assert (
        str(tmp_path / "moved" / "state")
        in tomllib.loads(config_toml(machine).read_text())["sandbox_workspace_write"]["writable_roots"]
    )


def test_concurrent_consents_write_one_block(machine):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_text(USER_CONFIG)
    procs = [machine.popen("codex-sandbox", "allow") for _ in range(5)]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=60))
    text = config_toml(machine).read_text()
    assert text.count("# agent-memory:begin codex-sandbox") == 1 and text.endswith(USER_CONFIG)
    tomllib.loads(text)


def test_bootstrap_takes_consent_only_when_asked_and_only_for_codex(machine, folder_store):
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json")
    assert result.json["codex_sandbox"] is None and not config_toml(machine).exists()
    refused = machine.run("bootstrap", "--project", "demo", "--agent", "claude", "--codex-sandbox")
    tools.exited(refused, 2)
    assert "--codex-sandbox is for Codex" in refused.err
    given = machine.run("bootstrap", "--project", "demo", "--codex-sandbox", "--json")
    tools.exited(given)
    assert given.json["codex_sandbox"]["state"] == "allowed"
    text = machine.run("bootstrap", "--project", "demo", "--codex-sandbox").out
    assert (
        "codex sandbox: allowed in " + str(config_toml(machine)) + " (unchanged): network access, and writes to "
        in text
    )


def test_bootstrap_refuses_a_conflicting_codex_config_before_setting_anything_up(machine, folder_store):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_text("[sandbox_workspace_write]\nwritable_roots = []\n")
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--codex-sandbox")
    tools.exited(result, 1)
    assert "already has its own" in result.err
    assert not (machine.state / "config" / "config.json").exists()


def test_bootstrap_checks_that_the_helper_runs_from_a_login_shell(machine, folder_store):
    ok = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json", env={"SHELL": "/bin/bash"})
    tools.exited(ok)
    assert not any("login shell" in w for w in ok.json["warnings"])

    # a login profile that fails, as Codex would meet it when it runs the model's commands (X6)
    (machine.home / ".bash_profile").write_text("echo 'broken profile' >&2\nexit 7\n")
    result = machine.run("bootstrap", "--project", "demo", "--json", env={"SHELL": "/bin/bash"})
    tools.exited(result)
    warning = next(w for w in result.json["warnings"] if "login shell" in w)
    assert f"`{HELPER} --version` failed there (exit 7: broken profile)" in warning
    assert warning.endswith(f"then run: /bin/bash -lc '{HELPER} --version'")
    claude_only = machine.run(
        "bootstrap", "--project", "demo", "--agent", "claude", "--json", env={"SHELL": "/bin/bash"}
    )
    assert not any("login shell" in w for w in claude_only.json["warnings"])  # Claude Code keeps the caller's PATH


def test_bootstrap_reports_a_block_claude_code_would_load_twice(machine, folder_store):
    default = {"CLAUDE_CONFIG_DIR": str(machine.home / ".claude")}
    moved = {"CLAUDE_CONFIG_DIR": str(machine.home / ".config" / "claude")}
    args = ("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "claude", "--json")
    assert machine.run(*args, env=default).json["warnings"] == []
    warnings = machine.run(*args, env=moved).json["warnings"]
    stray = machine.home / ".claude" / "CLAUDE.md"
    assert len(warnings) == 1 and warnings[0].startswith("Claude Code will show the agent-memory block twice")
    fix = f"CLAUDE_CONFIG_DIR={machine.home / '.claude'} agent-memory instructions remove --agent claude"
    assert warnings[0].endswith(fix)
    tools.exited(machine.run("instructions", "remove", "--agent", "claude", env=default))  # the fix it names
    assert machine.run(*args, env=moved).json["warnings"] == []
    assert not stray.exists()  # bootstrap had created it, and nothing else was in it: remove deleted it
    assert json.loads(machine.run("status", "--json", env=moved).out)["hooks"][1]["file"].startswith(
        moved["CLAUDE_CONFIG_DIR"]
    )


def test_a_config_with_a_utf8_bom_keeps_it_byte_for_byte(machine):
    original = b"\xef\xbb\xbf" + USER_CONFIG.encode()
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_bytes(original)
    allowed = machine.run("codex-sandbox", "allow", "--json")
    tools.exited(allowed)
    data = config_toml(machine).read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# agent-memory:begin codex-sandbox") and data.endswith(USER_CONFIG.encode())
    assert machine.run("codex-sandbox", "status", "--json").json["state"] == "allowed"
    tools.exited(machine.run("codex-sandbox", "remove"))
    assert config_toml(machine).read_bytes() == original


@pytest.mark.parametrize("original", [b"", b"\xef\xbb\xbf"])
def test_an_empty_config_survives_allow_then_remove(machine, original):
    config_toml(machine).parent.mkdir(parents=True)
    config_toml(machine).write_bytes(original)
    tools.exited(sandbox(machine, "allow"))
    assert sandbox(machine, "allow").json["changed"] is False  # a second consent keeps what the first recorded
    removed = sandbox(machine, "remove")
    tools.exited(removed)
    assert removed.json["changed"] is True, removed.err
    assert config_toml(machine).read_bytes() == original

    # the record went with the consent: a file created by allow goes with remove, as before
    config_toml(machine).unlink()
    tools.exited(sandbox(machine, "allow"))
    tools.exited(sandbox(machine, "remove"))
    assert not config_toml(machine).exists()

    # an empty file consented to, then deleted by the user: the file allow creates next goes with remove
    config_toml(machine).write_bytes(original)
    tools.exited(sandbox(machine, "allow"))
    config_toml(machine).unlink()
    tools.exited(sandbox(machine, "allow"))
    tools.exited(sandbox(machine, "remove"))
    assert not config_toml(machine).exists()


def test_with_a_folder_store_the_consent_opens_its_folder_and_not_the_hugging_face_caches(machine, folder_store):
    store = folder_store.removeprefix("file://")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    allowed = sandbox(machine, "allow").json
    roots = [str(machine.state / "state"), str(machine.state / "cache"), store]
    assert allowed["state"] == "allowed" and allowed["roots"] == roots and allowed["missing"] == []
    granted = tomllib.loads(config_toml(machine).read_text())["sandbox_workspace_write"]["writable_roots"]
    assert granted == roots  # exactly what a save to this store writes
    assert not (machine.home / ".cache" / "huggingface").exists()  # nothing made for a library that is not used


def test_switching_to_a_folder_store_leaves_the_consent_incomplete_with_the_fix(machine, folder_store, tmp_path):
    tools.exited(machine.run("config", "set", "bucket", "alice/memory"))
    assert sandbox(machine, "allow").json["state"] == "allowed"
    switched = machine.run("config", "set", "bucket", folder_store)
    store = folder_store.removeprefix("file://")
    tools.exited(switched)
    assert f"Warning: Your consent for Codex's sandbox leaves out {store}" in switched.err
    assert "run this yourself: agent-memory codex-sandbox allow" in switched.err

    found = sandbox(machine, "status")
    assert found.json["state"] == "incomplete" and found.json["missing"] == [store]
    assert found.json["next"] == "agent-memory codex-sandbox allow"
    text = machine.run("codex-sandbox", "status").out.splitlines()
    assert text == [
        f"codex sandbox: incomplete in {config_toml(machine)}: not writable: {store}",
        "  Next: agent-memory codex-sandbox allow",
    ]
    status = machine.run("status")
    tools.exited(status)
    assert f"codex sandbox: incomplete in {config_toml(machine)}" in status.out
    assert "  Next: agent-memory codex-sandbox allow" in status.out.splitlines()
    assert machine.run("status", "--json").json["codex_sandbox"]["missing"] == [store]

    assert sandbox(machine, "allow").json["state"] == "allowed"  # the fix it names
    roots = [str(machine.state / "state"), str(machine.state / "cache"), store]
    assert sandbox(machine, "status").json["roots"] == roots

    tools.exited(machine.run("config", "set", "bucket", "alice/memory"))  # back: the store's folder is not needed
    back = sandbox(machine, "status").json
    assert back["state"] == "incomplete" and back["missing"] == expected_roots(machine)[2:]


def test_a_consent_that_opens_a_parent_folder_is_complete_but_outdated(machine, folder_store):
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    config_toml(machine).parent.mkdir(parents=True, exist_ok=True)
    tools.exited(sandbox(machine, "allow"))
    text = config_toml(machine).read_text()
    config_toml(machine).write_text(text.replace("writable_roots = [", f'writable_roots = ["{machine.root}", '))
    found = sandbox(machine, "status").json
    assert found["state"] == "outdated" and found["missing"] == []
    assert found["next"] == "agent-memory codex-sandbox allow"


def test_bootstrap_with_a_folder_store_consents_for_that_store(machine, folder_store):
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--codex-sandbox", "--json")
    tools.exited(result)
    consent = result.json["codex_sandbox"]
    assert consent["state"] == "allowed" and folder_store.removeprefix("file://") in consent["roots"]
    assert not any("sandbox" in warning for warning in result.json["warnings"])


def test_bootstrap_warns_when_the_consent_leaves_out_the_new_store(machine, folder_store):
    tools.exited(machine.run("config", "set", "bucket", "alice/memory"))
    tools.exited(sandbox(machine, "allow"))
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "codex", "--json")
    store = folder_store.removeprefix("file://")
    (warning,) = [w for w in result.json["warnings"] if "sandbox" in w]
    assert warning.startswith(f"Your consent for Codex's sandbox leaves out {store}, which agent-memory now writes")
    assert warning.endswith("run this yourself: agent-memory codex-sandbox allow")
