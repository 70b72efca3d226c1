"""`agent-memory bootstrap`: first machine, additional machines, repairs, refusals, the embedded default."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

import tools
from agent_memory.setup.instructions import BEGIN, END
from conftest import BUCKET, OWNER, TOKEN

REPO = Path(__file__).resolve().parent.parent
DEFAULT = f"{OWNER}/agent-memory"
KEYS = {
    "bucket",
    "bucket_created",
    "bucket_was",
    "project",
    "root",
    "mapping",
    "found",
    "origin",
    "agents",
    "skill",
    "skills",
    "instructions",
    "backups",
    "hooks",
    "sync",
    "codex_sandbox",
    "command",
    "changed",
    "verification",
    "warnings",
}
SANDBOX_WARNING = "In Codex's usual workspace-write sandbox"


def bootstrap(machine, *args, env=None):
    return machine.run("bootstrap", "--project", "demo", "--json", *args, env=env)


def bootstrap_text(machine, *args):
    result = machine.run("bootstrap", "--project", "demo", *args)
    tools.exited(result)
    return result.out


def skill_tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".agent-memory-skill.json"
    }


def packaged_skill() -> dict[str, bytes]:
    return skill_tree(REPO / "skill")


def notes_in(hub, bucket):
    return [p for p in hub.list_paths(bucket) if "/notes/" in p]


def creates(hub):
    return [r for r in hub.requests if r[1] == "create"]


def test_first_machine(machine, hub):
    result = bootstrap(machine)
    tools.exited(result)
    out = result.json
    assert set(out) == KEYS
    assert out["bucket"] == f"hf://buckets/{DEFAULT}" and out["bucket_created"] is True
    assert hub.bucket_exists(DEFAULT) and hub.is_private(DEFAULT)
    assert (out["project"], out["root"]) == ("demo", str(machine.work.resolve()))
    assert out["agents"] == ["codex", "claude"]
    codex_skill = machine.home / ".agents" / "skills" / "agent-memory"
    claude_skill = machine.home / ".claude" / "skills" / "agent-memory"
    assert out["skill"] == {
        "installed": [str(codex_skill), str(claude_skill)],
        "updated": [],
        "unchanged": [],
        "kept": [],
        "backups": [],
    }
    for folder in (codex_skill, claude_skill):
        assert skill_tree(folder) == packaged_skill()
    assert out["instructions"] == [
        {"file": str(machine.home / ".codex" / "AGENTS.md"), "state": "created"},
        {"file": str(machine.home / ".claude" / "CLAUDE.md"), "state": "created"},
    ]
    for entry in out["instructions"]:
        text = Path(entry["file"]).read_text()
        assert text.count(BEGIN) == 1 and text.count(END) == 1
        assert "demo" not in text  # never a project name in the block
    assert out["backups"] == []  # both instruction files were created: there was nothing to back up
    assert out["hooks"] == {"requested": False, "installed": []} and out["codex_sandbox"] is None
    assert out["bucket_was"] is None and out["mapping"] == {"state": "mapped", "was": None}
    assert out["changed"] is True and out["skills"] == []
    link = machine.home / ".local" / "bin" / "agent-memory"
    assert out["command"]["state"] == "linked" and out["command"]["path"] == str(link) and link.is_symlink()
    assert out["verification"]["status"] == "verified"
    # without the consent, the one thing to know: saves from Codex's sandbox fail, and how to allow them
    assert len(out["warnings"]) == 1 and out["warnings"][0].startswith(SANDBOX_WARNING)
    assert out["warnings"][0].endswith(
        "run this yourself: agent-memory codex-sandbox allow (or bootstrap again with --codex-sandbox)"
    )
    assert notes_in(hub, DEFAULT) == [f"projects/demo/notes/{out['verification']['id']}.md"]
    assert "title: Memory setup verification" in hub.read_file(DEFAULT, notes_in(hub, DEFAULT)[0]).decode()

    config = json.loads((machine.state / "config" / "config.json").read_text())
    assert config["bucket"] == f"hf://buckets/{DEFAULT}"
    assert config["projects"] == {str(machine.work.resolve()): "demo"}
    assert config["core_skill"]["version"]
    assert machine.run("project", "show", "--json").json["project"] == "demo"
    assert not (machine.home / ".codex" / "hooks.json").exists()
    assert not (machine.home / ".claude" / "settings.json").exists()


def test_an_additional_machine_connects_without_creating_or_replacing(machine, machine_b, hub):
    first = bootstrap(machine).json
    modified = machine_b.home / ".claude" / "skills" / "agent-memory"
    modified.mkdir(parents=True)
    (modified / "SKILL.md").write_text("---\nname: agent-memory\ndescription: my own\n---\nmine\n")
    hub.reset_requests()

    result = bootstrap(machine_b, "--bucket", DEFAULT, "--space-revision", "abc123")
    tools.exited(result)
    out = result.json
    assert out["bucket_created"] is False and creates(hub) == []
    assert out["skill"]["kept"] == [str(modified)]
    assert out["skill"]["installed"] == [str(machine_b.home / ".agents" / "skills" / "agent-memory")]
    assert (modified / "SKILL.md").read_text().endswith("mine\n")
    assert any("Kept your modified copy" in w and "--replace" in w for w in out["warnings"])
    assert out["verification"]["id"] != first["verification"]["id"]
    assert len(notes_in(hub, DEFAULT)) == 2
    config = json.loads((machine_b.state / "config" / "config.json").read_text())
    assert config["core_skill"]["space_revision"] == "abc123"

    replaced = bootstrap(machine_b, "--replace")
    assert replaced.json["skill"]["kept"] == []
    config = json.loads((machine_b.state / "config" / "config.json").read_text())
    assert config["core_skill"]["space_revision"] == "abc123"  # kept by a run without --space-revision
    assert skill_tree(modified) == packaged_skill()
    backups = list((machine_b.state / "state" / "backups" / "skills").glob("agent-memory-*/claude/SKILL.md"))
    assert [b.read_text() for b in backups] == ["---\nname: agent-memory\ndescription: my own\n---\nmine\n"]


def test_a_repeated_bootstrap_changes_nothing(machine, hub):
    config_file = machine.state / "config" / "config.json"
    bootstrap(machine)
    config = json.loads(config_file.read_text())
    config["projects"]["/some/other/checkout"] = "other"
    config["unrelated"] = {"kept": True}
    config_file.write_text(json.dumps(config))
    agents_md = machine.home / ".codex" / "AGENTS.md"
    before = agents_md.read_bytes()
    mtime = agents_md.stat().st_mtime_ns

    again = bootstrap(machine)
    tools.exited(again)
    assert again.json["bucket_created"] is False and again.json["changed"] is False
    skills = [
        str(machine.home / ".agents" / "skills" / "agent-memory"),
        str(machine.home / ".claude" / "skills" / "agent-memory"),
    ]
    assert again.json["skill"] == {"installed": [], "updated": [], "unchanged": skills, "kept": [], "backups": []}
    assert {entry["state"] for entry in again.json["instructions"]} == {"unchanged"}
    assert again.json["mapping"]["state"] == "unchanged" and again.json["command"]["state"] == "on path"
    text = bootstrap_text(machine)
    assert "core skill installed" not in text and "core skill unchanged: " in text
    assert "instructions unchanged: " in text and "project: demo -> " in text and "(unchanged)" in text
    assert text.splitlines()[-1] == "Nothing needed changing: this machine was already set up this way."
    assert len(creates(hub)) == 1
    assert agents_md.read_bytes() == before and agents_md.stat().st_mtime_ns == mtime
    assert len(notes_in(hub, DEFAULT)) == 1
    after = json.loads(config_file.read_text())
    assert after["unrelated"] == {"kept": True} and after["projects"]["/some/other/checkout"] == "other"
    for root in (machine.home / ".agents" / "skills", machine.home / ".claude" / "skills"):
        assert os.listdir(root) == ["agent-memory"]
    assert not (machine.state / "state" / "backups").exists()


@pytest.mark.parametrize("step", ["whoami", "create", "instructions", "verification-upload", "verification-read"])
def test_an_interrupted_bootstrap_resumes_without_duplicates(machine, hub, step):
    claude_md = machine.home / ".claude" / "CLAUDE.md"
    if step == "whoami":
        hub.fault("whoami", "fail", status=500)
    elif step == "create":
        hub.fault("create", "fail", status=500)
    elif step == "instructions":
        claude_md.mkdir(parents=True)  # a folder where the file should be: writing the block fails
    elif step == "verification-upload":
        hub.fault("batch", "fail", status=500)
    else:
        hub.fault("xet-read-token", "fail", status=403)

    failed = bootstrap(machine)
    tools.exited(failed, (1, 75))
    if step == "verification-upload":
        tools.exited(failed, 75)
        verification = failed.json["verification"]
        assert verification["status"] == "pending"
        retry = f"then run: agent-memory pending retry {verification['id']}"
        assert verification["next"] == f"agent-memory status (it names the bucket and what failed last), {retry}"
        assert failed.err.endswith(f"\nNext: {verification['next']}\n")
    if step == "verification-read":
        tools.exited(failed, 1)
        assert failed.json["verification"]["status"] == "failed"
    if step in ("whoami", "create"):
        assert not (machine.state / "config" / "config.json").exists()

    hub.clear_faults()
    if step == "instructions":
        claude_md.rmdir()
    resumed = bootstrap(machine)
    tools.exited(resumed)
    assert resumed.json["verification"]["status"] == "verified"
    assert len(creates(hub)) == 1 + (step == "create")  # the failed attempt, then the one that worked
    assert hub.bucket_exists(DEFAULT)
    assert len(notes_in(hub, DEFAULT)) == 1
    for entry in resumed.json["instructions"]:
        assert Path(entry["file"]).read_text().count(BEGIN) == 1
    for root in (machine.home / ".agents" / "skills", machine.home / ".claude" / "skills"):
        assert os.listdir(root) == ["agent-memory"]
    assert machine.run("status", "--json").json["pending"] == []


def test_inaccessible_or_public_buckets_are_refused(machine, hub):
    hub.add_user("bob", "hf_" + "b" * 34)
    hub.create_bucket("bob/private", private=True)
    hub.create_bucket(DEFAULT, private=False)

    for bucket, fragment in (("bob/private", "does not exist or"), ("alice/missing", "does not exist or")):
        result = bootstrap(machine, "--bucket", bucket)
        tools.exited(result, 4)
        assert fragment in result.err
    public = bootstrap(machine)
    tools.exited(public, 4)
    assert "public" in public.err
    assert not hub.is_private(DEFAULT)
    assert creates(hub) == []
    assert not hub.bucket_exists("alice/missing")
    assert not (machine.state / "config" / "config.json").exists()


def test_missing_credentials_say_how_to_log_in_without_asking_for_a_token(machine, hub):
    result = bootstrap(machine, env={"HF_TOKEN": ""})
    tools.exited(result, 4)
    assert "hf auth login" in result.err and "HF_TOKEN" in result.err and "Never paste a token" in result.err
    assert all(r[1] == "whoami" for r in hub.requests)  # nothing was created
    assert not (machine.state / "config" / "config.json").exists()


def test_instruction_files_keep_every_byte_outside_the_block(machine, hub):
    agents_md = machine.home / ".codex" / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    before = b"# My rules\r\n\r\nBe terse.\r\n\r\n"
    after = b"\r\n\r\n## More rules\r\nNo trailing newline"
    original = before + f"{BEGIN}\r\n- an old block\r\n{END}".encode() + after
    agents_md.write_bytes(original)
    result = bootstrap(machine)
    tools.exited(result)
    (backup,) = result.json["backups"]
    assert (
        Path(backup).read_bytes() == original and Path(backup).parent == machine.state / "state" / "backups" / "codex"
    )
    data = agents_md.read_bytes()
    assert data.startswith(before) and data.endswith(after)
    block = data[len(before) : len(data) - len(after)].decode()
    assert block.startswith(BEGIN) and block.endswith(END) and "an old block" not in block
    assert "\r\n" in block and "\n" not in block.replace("\r\n", "")

    updated = agents_md.read_bytes()
    removed = machine.run("instructions", "remove", "--agent", "codex", "--json")
    assert removed.json == {"removed": [str(agents_md)], "deleted": [], "backups": removed.json["backups"]}
    assert [Path(b).read_bytes() for b in removed.json["backups"]] == [updated]
    # the block goes, with the blank line that separated it; the user's text stays as it was
    assert agents_md.read_bytes() == before + after[len(b"\r\n\r\n") :]
    claude_md = str(machine.home / ".claude" / "CLAUDE.md")  # bootstrap created it: it goes too
    created = Path(claude_md).read_bytes()
    removed = machine.run("instructions", "remove", "--json").json
    assert removed == {"removed": [claude_md], "deleted": [claude_md], "backups": removed["backups"]}
    assert not Path(claude_md).exists() and Path(removed["backups"][0]).read_bytes() == created
    assert machine.run("instructions", "remove", "--json").json == {"removed": [], "deleted": [], "backups": []}


def test_instructions_remove_undoes_exactly_what_bootstrap_did(machine, tmp_path):
    agents_md = machine.home / ".codex" / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    original = b"# My rules\n\nBe terse.\n\n"  # ends with a blank line of the user's
    agents_md.write_bytes(original)
    claude_md = machine.home / ".claude" / "CLAUDE.md"
    store = f"file://{tmp_path / 'store'}"
    tools.exited(bootstrap(machine, "--bucket", store))
    config_file = machine.state / "config" / "config.json"
    assert json.loads(config_file.read_text())["instructions_created"] == [str(claude_md)]

    removed = machine.run("instructions", "remove")
    tools.exited(removed)
    assert f"Removed the agent-memory block from {claude_md} and the file itself" in removed.out
    assert agents_md.read_bytes() == original
    assert not claude_md.exists() and claude_md.parent.is_dir()
    assert "instructions_created" not in json.loads(config_file.read_text())  # the file is no longer ours

    # created again; the user then writes their own rules around the block, with blank lines of their own
    tools.exited(bootstrap(machine))
    block = claude_md.read_text()
    claude_md.write_text("My Claude rules.\n\n" + block + "\nMore.\n")
    tools.exited(machine.run("instructions", "remove", "--agent", "claude"))
    assert claude_md.read_text() == "My Claude rules.\n\n\nMore.\n"  # everything of theirs, nothing of ours
    # from then on the file is the user's: a later bootstrap appends to it, and remove gives it back
    tools.exited(bootstrap(machine))
    tools.exited(machine.run("instructions", "remove", "--agent", "claude"))
    assert claude_md.read_text() == "My Claude rules.\n\n\nMore.\n"


USER_AGENTS_MD = f"""# My rules

The agent-memory block looks like this:

```markdown
{BEGIN}
- an example, not the real block
{END}
```

Or, indented:

    {BEGIN}
    {END}
"""
USER_CLAUDE_MD = f"""Notes

~~~~ text
{BEGIN}
~~~
still code: a shorter fence does not close a longer one
~~~~~

\t{END}
- the end"""  # no final newline


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_marker_examples_in_code_stay_the_users_text(machine, tmp_path, newline):
    files = {
        machine.home / ".codex" / "AGENTS.md": USER_AGENTS_MD.replace("\n", newline).encode(),
        machine.home / ".claude" / "CLAUDE.md": USER_CLAUDE_MD.replace("\n", newline).encode(),
    }
    for path, original in files.items():
        path.parent.mkdir(parents=True)
        path.write_bytes(original)

    result = bootstrap(machine, "--bucket", f"file://{tmp_path / 'store'}")
    tools.exited(result)
    assert sorted(Path(b).read_bytes() for b in result.json["backups"]) == sorted(files.values())
    text = bootstrap_text(machine)  # nothing left to change: no backup line
    assert "previous file backed up" not in text
    for path, original in files.items():
        data = path.read_bytes()
        # the user's code blocks untouched, the real block after them and outside them
        assert data.startswith(original) and data.count(BEGIN.encode()) == original.count(BEGIN.encode()) + 1
        added = data[len(original) :].decode()
        assert added.lstrip("\r\n").startswith(BEGIN) and added.rstrip("\r\n").endswith(END)
        assert "\n" not in added.replace(newline, "")  # the file's own line ending

    with_blocks = {path: path.read_bytes() for path in files}
    removed = machine.run("instructions", "remove")
    tools.exited(removed)
    for path, original in files.items():
        assert path.read_bytes() == original  # byte for byte
    backups = [line.removeprefix("  previous file backed up in ") for line in removed.out.splitlines()[2:]]
    assert sorted(Path(b).read_bytes() for b in backups) == sorted(with_blocks.values())
    again = [line for line in bootstrap_text(machine).splitlines() if line.startswith("previous file backed up in ")]
    assert sorted(Path(line.split(" in ", 1)[1]).read_bytes() for line in again) == sorted(files.values())


@pytest.mark.slow
def test_concurrent_bootstraps_and_removes_keep_the_users_file(machine, tmp_path):
    agents_md = machine.home / ".codex" / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    original = USER_AGENTS_MD.encode()
    agents_md.write_bytes(original)
    store = f"file://{tmp_path / 'store'}"
    tools.exited(bootstrap(machine, "--bucket", store, "--agent", "codex"))
    with_block = agents_md.read_bytes()
    procs = [machine.popen("bootstrap", "--project", "demo", "--agent", "codex") for _ in range(3)]
    procs += [machine.popen("instructions", "remove", "--agent", "codex") for _ in range(3)]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=240))
    assert agents_md.read_bytes() in (original, with_block)  # one block or none, never two, never a torn file
    for backup in (machine.state / "state" / "backups" / "codex").iterdir():
        assert backup.read_bytes() in (original, with_block)
    tools.exited(machine.run("instructions", "remove"))
    assert agents_md.read_bytes() == original


def test_bootstrap_refuses_an_instruction_file_that_ends_in_open_code_before_setting_anything_up(machine, tmp_path):
    agents_md = machine.home / ".codex" / "AGENTS.md"
    agents_md.parent.mkdir(parents=True)
    agents_md.write_bytes(b"# Rules\n\n```sh\nmake test\n")
    result = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{tmp_path / 'store'}")
    tools.exited(result, 1)
    assert "ends inside a code block that is never closed (the ``` on line 3)" in result.err
    assert f"Next: close that code block: add a line ``` at the end of {agents_md}, then run" in result.err
    assert agents_md.read_bytes() == b"# Rules\n\n```sh\nmake test\n"
    assert not (tmp_path / "store").exists() and not (machine.state / "config" / "config.json").exists()
    assert not (machine.home / ".claude" / "CLAUDE.md").exists()


def test_an_instruction_file_that_existed_empty_is_kept(machine, tmp_path):
    claude_md = machine.home / ".claude" / "CLAUDE.md"
    claude_md.parent.mkdir(parents=True)
    claude_md.write_bytes(b"")
    tools.exited(bootstrap(machine, "--bucket", f"file://{tmp_path / 'store'}", "--agent", "claude"))
    result = machine.run("instructions", "remove", "--json")
    assert result.json == {"removed": [str(claude_md)], "deleted": [], "backups": result.json["backups"]}
    assert claude_md.exists() and claude_md.read_bytes() == b""


def test_codex_override_file_is_warned_about(machine, hub):
    override = machine.home / ".codex" / "AGENTS.override.md"
    override.parent.mkdir(parents=True)
    override.write_text("team rules\n")
    warnings = bootstrap(machine).json["warnings"]
    assert any("AGENTS.override.md" in w for w in warnings)
    assert override.read_text() == "team rules\n"


def test_hooks_are_installed_when_asked(machine, hub):
    result = bootstrap(machine, "--hooks")
    hooks = result.json["hooks"]
    assert hooks["requested"] is True
    assert [(h["agent"], h["state"]) for h in hooks["installed"]] == [("codex", "installed"), ("claude", "installed")]
    assert (machine.home / ".codex" / "hooks.json").exists() and (machine.home / ".claude" / "settings.json").exists()
    text = bootstrap_text(machine, "--hooks")
    assert (
        f"hooks (codex): already installed in {machine.home / '.codex' / 'hooks.json'}, unchanged; Codex will ask"
        in text
    )


def test_one_agent_only(machine, hub):
    out = bootstrap(machine, "--agent", "claude").json
    assert out["agents"] == ["claude"]
    assert not (machine.home / ".agents").exists() and not (machine.home / ".codex" / "AGENTS.md").exists()


def test_shared_skills_at_a_revision(machine, hub, tmp_path):
    skill = tmp_path / "src" / "review-checklist"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review-checklist\ndescription: Review code.\n---\nbody\n")
    bootstrap(machine)
    revision = machine.run("publish-skill", str(skill), "--json").json["revision"]
    result = bootstrap(machine, "--skill", f"review-checklist@{revision}")
    tools.exited(result)
    installed = machine.home / ".agents" / "skills" / "review-checklist"
    assert (installed / "SKILL.md").read_bytes() == (skill / "SKILL.md").read_bytes()
    assert result.json["skills"] == [{"name": "review-checklist", "revision": revision, "state": "installed"}]
    again = bootstrap(machine, "--skill", f"review-checklist@{revision}")
    tools.exited(again)
    assert not any("review-checklist" in w for w in again.json["warnings"])
    assert again.json["skills"] == [{"name": "review-checklist", "revision": revision, "state": "unchanged"}]
    tools.exited(bootstrap(machine, "--skill", "review-checklist"), 2)


def test_the_embedded_default_needs_no_account(machine, tmp_path):
    store = tmp_path / "store"
    result = bootstrap(machine, "--bucket", f"file://{store}")
    tools.exited(result)
    out = result.json
    assert out["bucket"] == f"file://{store}" and out["bucket_created"] is True
    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    assert out["verification"]["status"] == "verified"
    saved = machine.save("Decision: keep the store on the shared drive.")
    tools.exited(saved)
    found = machine.run("search", "shared drive", "--json").json["results"]
    assert [r["id"] for r in found] == [saved.json["id"]]
    again = bootstrap(machine)  # the configured folder store is reused
    tools.exited(again)
    assert again.json["bucket_created"] is False


def test_folder_stores_that_others_can_open_are_refused(machine, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    result = bootstrap(machine, "--bucket", f"file://{shared}")
    tools.exited(result, 4)
    assert "other users" in result.err
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    for bad in ("file://relative/store", f"file://{tmp_path}/no-parent/store"):
        tools.exited(bootstrap(machine, "--bucket", bad), 2, about=bad)


@pytest.mark.parametrize(
    "args",
    [
        ("--project", "../bad"),
        ("--project", "ok", "--bucket", "not a bucket"),
        ("--project", "ok", "--skill", "Bad_Name@20260101-000000-000000-0000000000"),
    ],
)
def test_bad_input_changes_nothing(machine, hub, args):
    before = {p for p in machine.root.rglob("*")}
    result = machine.run("bootstrap", *args)
    tools.exited(result, (2, 5))
    assert {p for p in machine.root.rglob("*")} == before
    assert hub.requests == []


def test_an_unwritable_home_is_detected_before_anything_remote(machine, hub, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where agent-memory's home should be")
    result = bootstrap(machine, env={"AGENT_MEMORY_HOME": str(blocker)})
    tools.exited(result, 1)
    assert "Cannot write" in result.err
    assert hub.requests == [] and not hub.bucket_exists(DEFAULT)
    assert not (machine.home / ".agents").exists()


def test_bootstrap_never_prints_the_token(machine, hub):
    result = bootstrap(machine)
    assert TOKEN not in result.out and TOKEN not in result.err
    for file in machine.root.rglob("*"):
        if file.is_file():
            assert TOKEN.encode() not in file.read_bytes()


def test_verification_runs_from_any_directory(machine, tmp_path):
    """Bootstrap verifies through save, read --fresh and search for its project, wherever it is run from."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = f"file://{tmp_path / 'store'}"
    result = machine.run(
        "bootstrap", "--project", "demo", "--dir", str(machine.work), "--bucket", store, "--json", cwd=elsewhere
    )
    tools.exited(result)
    assert result.json["verification"]["status"] == "verified"
    note = result.json["verification"]["id"]
    shown = machine.run("search", "Memory setup verification", "--kind", "setup", "--json")  # in the mapped directory
    assert [r["id"] for r in shown.json["results"]] == [note]
    assert machine.run("search", "Memory setup verification", "--json").json["results"] == []  # not a memory
    tools.exited(machine.run("project", "show", cwd=elsewhere), 3)  # nothing was mapped but --dir


def test_a_bucket_switch_says_what_it_was_and_what_it_is_now(machine, hub, tmp_path):
    first = bootstrap(machine, "--bucket", BUCKET)
    tools.exited(first)
    assert first.json["bucket_was"] is None
    store = tmp_path / "store"
    switched = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{store}")
    tools.exited(switched)
    assert (
        f"bucket: file://{store} (created, owner-only) (was hf://buckets/{BUCKET}: every project mapped on this "
        "machine now uses this bucket)"
    ) in switched.out.splitlines()
    again = bootstrap(machine, "--bucket", f"file://{store}")
    assert again.json["bucket_was"] is None and again.json["bucket_created"] is False
    text = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{store}")
    assert f"bucket: file://{store} (unchanged)" in text.out.splitlines()
    back = bootstrap(machine, "--bucket", BUCKET)
    assert back.json["bucket_was"] == f"file://{store}" and back.json["bucket"] == f"hf://buckets/{BUCKET}"


def test_a_folder_mapped_to_another_project_says_what_it_was(machine, folder_store):
    assert bootstrap(machine, "--bucket", folder_store).json["mapping"] == {"state": "mapped", "was": None}
    moved = machine.run("bootstrap", "--project", "other")
    tools.exited(moved)
    assert f"project: other -> {machine.work.resolve()} (mapped, was demo)" in moved.out.splitlines()
    assert bootstrap(machine).json["mapping"] == {"state": "remapped", "was": "other"}


def test_replace_says_where_the_edited_core_skill_went_and_an_older_package_is_updated(machine, folder_store):
    bootstrap(machine, "--bucket", folder_store)
    claude_skill = machine.home / ".claude" / "skills" / "agent-memory"
    (claude_skill / "SKILL.md").write_text("---\nname: agent-memory\ndescription: mine\n---\nmine\n")
    replaced = machine.run("bootstrap", "--project", "demo", "--replace")
    tools.exited(replaced)
    (backup,) = list((machine.state / "state" / "backups" / "skills").glob("agent-memory-*"))
    assert f"core skill: your edited copy is backed up in {backup}" in replaced.out
    assert f"core skill updated: {claude_skill}" in replaced.out
    assert (backup / "claude" / "SKILL.md").read_text().endswith("mine\n")

    # a copy that an earlier package installed, unmodified: updated, with nothing to back up
    marker = json.loads((claude_skill / ".agent-memory-skill.json").read_text())
    (claude_skill / "SKILL.md").write_text("---\nname: agent-memory\ndescription: old\n---\nold\n")
    marker["files"]["SKILL.md"] = hashlib.sha256((claude_skill / "SKILL.md").read_bytes()).hexdigest()
    (claude_skill / ".agent-memory-skill.json").write_text(json.dumps(marker))
    updated = bootstrap(machine)
    assert updated.json["skill"]["updated"] == [str(claude_skill)] and updated.json["skill"]["backups"] == []
    assert updated.json["changed"] is True and skill_tree(claude_skill) == packaged_skill()


@pytest.mark.parametrize(
    "given, fix",
    [
        ("not a bucket", "agent-memory bootstrap --project demo --bucket OWNER/NAME"),
        ("/srv/agent-memory-store", "agent-memory bootstrap --project demo --bucket file:///srv/agent-memory-store"),
        ("~/agent-memory-store", 'agent-memory bootstrap --project demo --bucket "file://$HOME/agent-memory-store"'),
        ("file://relative/store", "agent-memory bootstrap --project demo --bucket file:///ABSOLUTE/PATH"),
    ],
)
def test_a_malformed_bucket_names_bootstrap_and_a_path_gets_its_file_uri(machine, given, fix):
    result = machine.run("bootstrap", "--project", "demo", "--bucket", given)
    tools.exited(result, 2)
    assert result.err.splitlines()[-1] == f"Next: {fix}", result.err
    if given.startswith(("/", "~")):
        assert "a folder store is given as a file:// URI of its absolute path" in result.err
    assert not (machine.state / "config").exists()


def test_a_bad_project_name_names_bootstrap(machine):
    result = machine.run("bootstrap", "--project", "../bad")
    tools.exited(result, 2)
    assert "Invalid project name '../bad'" in result.err
    assert (
        result.err.splitlines()[-1]
        == "Next: agent-memory bootstrap --project my-project (or another name of that kind)"
    )


def test_the_sandbox_warning_goes_once_codex_may_save(machine, folder_store):
    warned = bootstrap(machine, "--bucket", folder_store, "--agent", "codex").json["warnings"]
    assert [w for w in warned if w.startswith(SANDBOX_WARNING)] != []
    assert "fails there (nothing is saved)" in warned[0]
    allowed = bootstrap(machine, "--agent", "codex", "--codex-sandbox").json
    assert allowed["codex_sandbox"]["state"] == "allowed" and allowed["warnings"] == []
    assert bootstrap(machine, "--agent", "codex").json["warnings"] == []  # the consent is there: nothing to say
    assert bootstrap(machine, "--agent", "claude").json["warnings"] == []
