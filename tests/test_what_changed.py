"""Every command that changes state says what it changed, and says "unchanged" (or "nothing to remove") when it
changed nothing: hooks, Codex's sandbox consent, install-skill and config set bucket; and the Stop hook says what it
retried, on stderr, as the README says."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import tools
from conftest import BUCKET


def test_hooks_install_remove_and_remove_again(machine, folder_store):
    machine.setup(folder_store)
    codex_file = machine.home / ".codex" / "hooks.json"
    claude_file = machine.home / ".claude" / "settings.json"
    first = machine.run("hooks", "install").out.splitlines()
    assert first == [
        f"codex: installed in {codex_file}; Codex will ask you to trust them (/hooks)",
        f"claude: installed in {claude_file}; new Claude Code sessions run them",
    ]
    again = machine.run("hooks", "install").out.splitlines()
    assert again[0] == f"codex: already installed in {codex_file}, unchanged; Codex will ask you to trust them (/hooks)"
    removed = machine.run("hooks", "remove")
    tools.exited(removed)
    assert removed.out.splitlines()[:2] == [
        f"codex: removed agent-memory's hooks from {codex_file} (and the file, which held nothing else)",
        f"claude: removed agent-memory's hooks from {claude_file} (and the file, which held nothing else)",
    ]
    nothing = machine.run("hooks", "remove")
    tools.exited(nothing)
    assert nothing.out.splitlines() == [
        f"codex: no agent-memory hooks in {codex_file}, nothing to remove",
        f"claude: no agent-memory hooks in {claude_file}, nothing to remove",
    ]
    assert "not installed (agent-memory hooks install" not in nothing.out  # a removal is no problem to fix


def test_the_sandbox_consent_given_twice_and_removed_twice(machine):
    config = machine.home / ".codex" / "config.toml"
    given = machine.run("codex-sandbox", "allow").out
    assert given.startswith(f"codex sandbox: allowed in {config}: network access") and "next session" in given
    again = machine.run("codex-sandbox", "allow").out
    assert again.startswith(f"codex sandbox: allowed in {config} (unchanged): ") and "next session" not in again
    assert machine.run("codex-sandbox", "remove").out.splitlines()[0] == f"codex sandbox: consent removed from {config}"
    assert machine.run("codex-sandbox", "remove").out.splitlines() == [
        f"codex sandbox: no consent in {config}, nothing to remove"
    ]


def test_install_skill_installs_where_it_is_missing_and_leaves_the_rest(machine, folder_store, tmp_path):
    machine.setup(folder_store)
    source = tmp_path / "review"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: review\ndescription: Review code.\n---\nbody\n")
    revision = machine.run("publish-skill", str(source), "--json").json["revision"]
    codex_dir = machine.home / ".agents" / "skills" / "review"
    claude_dir = machine.home / ".claude" / "skills" / "review"
    one = machine.run("install-skill", "review", "--revision", revision, "--agent", "codex")
    assert one.out.splitlines() == [f"Installed: review revision {revision} in {codex_dir}"]
    both = machine.run("install-skill", "review", "--revision", revision, "--json")
    tools.exited(both)  # the codex copy is the same revision: no --replace needed for the other
    assert both.json["unchanged"] == [str(codex_dir)] and both.json["installed"] == [str(codex_dir), str(claude_dir)]
    (claude_dir / "SKILL.md").write_text("edited\n")
    replaced = machine.run("install-skill", "review", "--revision", revision, "--replace")
    tools.exited(replaced)
    lines = replaced.out.splitlines()
    assert lines[0] == f"Already installed, unchanged: review revision {revision} in {codex_dir}"
    assert lines[1] == f"Replaced: review revision {revision} in {claude_dir}"
    assert lines[2].startswith("The previous folder is backed up in ")


def test_config_set_bucket_says_what_it_was(machine, folder_store):
    assert machine.run("config", "set", "bucket", BUCKET).out.strip() == f"bucket: hf://buckets/{BUCKET}"
    assert machine.run("config", "set", "bucket", BUCKET).out.strip() == f"bucket: hf://buckets/{BUCKET} (unchanged)"
    switched = machine.run("config", "set", "bucket", folder_store, "--json")
    assert switched.json == {
        "bucket": folder_store,
        "created": False,
        "was": f"hf://buckets/{BUCKET}",
        "unchanged": False,
    }
    text = machine.run("config", "set", "bucket", BUCKET).out.strip()
    assert text == (
        f"bucket: hf://buckets/{BUCKET} (was {folder_store}: every project mapped on this machine now uses this bucket)"
    )


def test_config_set_bucket_creates_a_missing_folder_store_owner_only(machine, tmp_path):
    store = tmp_path / "new-store"
    created = machine.run("config", "set", "bucket", f"file://{store}")
    tools.exited(created)
    assert created.out.strip() == f"bucket: file://{store} (created, owner-only)"
    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    tools.exited(machine.run("project", "map", "demo"))
    saved = tools.exited(machine.save("a note"))
    assert saved.json["status"] == "saved"  # not pending "unmounted drive?"

    typo = tmp_path / "no-such-drive" / "store"
    refused = machine.run("config", "set", "bucket", f"file://{typo}")
    tools.exited(refused, 2)
    assert "its parent folder does not exist" in refused.err
    assert refused.err.splitlines()[-1] == (
        f"Next: mkdir -p {typo.parent}, then run: agent-memory config set bucket file://{typo}"
    )
    assert not typo.parent.exists()
    assert machine.run("config", "show", "--json").json["bucket"] == f"file://{store}"  # nothing changed


def test_the_stop_hook_tells_the_user_only_what_it_retried(ready, folder_store):
    folder = Path(folder_store.removeprefix("file://"))
    quiet = ready.run("hook", "stop", "--agent", "claude", input="{}")
    tools.exited(quiet)
    assert (quiet.out, quiet.err) == ("", "")  # nothing pending: nothing to say
    os.rename(folder, folder.with_name("away"))
    tools.exited(ready.save("a note"), 75)
    waiting = ready.run("hook", "stop", "--agent", "claude", input="{}")
    tools.exited(waiting)
    assert waiting.err == ""  # Stop's stdout: only the user's message, never a decision
    assert json.loads(waiting.out) == {
        "systemMessage": "agent-memory: retried 1 pending upload: 0 shared, 1 still pending (see: agent-memory pending)"
    }
    os.rename(folder.with_name("away"), folder)
    ready.wait_over()  # the failed retry made the hooks wait a minute
    shared = ready.run("hook", "stop", "--agent", "claude", input="{}")
    assert shared.err == "" and json.loads(shared.out) == {
        "systemMessage": "agent-memory: retried 1 pending upload: 1 shared, 0 still pending"
    }
