"""The exit codes of the README's table, pinned for each command: 0 ok, 1 error (a note or revision that is not
there, among others), 2 usage (bad arguments, a file or folder argument that is not there), 3 not set up,
4 access (a refused store), 5 content refused, 75 saved locally and pending."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import BUCKET

REVISION = "20260101-000000-000000-0123456789"
NOTE_ID = "20260101-000000-000000-abcdefabcd"
SECRET = "hf_" + "Z" * 34  # what the guard takes for a Hugging Face token; no real one


def code(machine, *args: str, input: str = "", env: dict[str, str] | None = None) -> int:
    result = machine.run(*args, input=input, env=env)
    if result.code not in (0, 75):  # every failure is told in the two lines, whatever its code
        assert "Error: " in result.err and "\nNext: " in result.err, result.err
    return result.code


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    folder = tmp_path / "review"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: review\ndescription: Review code.\n---\nbody\n")
    return folder


def unmounted(store: str) -> Path:
    """Move the folder store away, as an unmounted drive; the folder to move back."""
    folder = Path(store.removeprefix("file://"))
    os.rename(folder, folder.with_name("away"))
    return folder


def test_project(machine, folder_store):
    assert code(machine, "project", "show") == 3
    assert code(machine, "project", "map", "../bad") == 2
    assert code(machine, "project", "map", "demo") == 0
    assert code(machine, "project", "show") == 0


def test_config(machine, folder_store, tmp_path):
    assert code(machine, "config", "show") == 0
    assert code(machine, "config", "set", "bucket", "not a bucket") == 2
    assert code(machine, "config", "set", "bucket", f"file://{tmp_path}/missing/store") == 2
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o755)
    assert code(machine, "config", "set", "bucket", f"file://{open_folder}") == 4
    assert code(machine, "config", "set", "bucket", folder_store) == 0


def test_save(machine, folder_store):
    assert code(machine, "save", input="a note") == 3
    machine.setup(folder_store)
    assert code(machine, "save", input="a note") == 0
    assert code(machine, "save", "--kind", "memo", input="a note") == 2
    assert code(machine, "save", "--corrects", NOTE_ID, input="a note") == 2
    assert code(machine, "save", input=f"token {SECRET}") == 5
    folder = unmounted(folder_store)
    assert code(machine, "save", input="a note") == 75
    os.rename(folder.with_name("away"), folder)
    os.chmod(folder, 0o755)
    assert code(machine, "save", input="a note") == 4


def test_search(machine, folder_store):
    machine.run("config", "set", "bucket", folder_store)
    assert code(machine, "search", "x") == 3
    machine.setup(folder_store)
    assert code(machine, "search", "x") == 0
    assert code(machine, "search", "x", "--limit", "0") == 2
    os.chmod(folder_store.removeprefix("file://"), 0o755)
    assert code(machine, "search", "x") == 4


def test_read(ready):
    saved = ready.save("a note").json["id"]
    assert code(ready, "read", saved) == 0
    assert code(ready, "read", NOTE_ID) == 1  # not there
    assert code(ready, "read", "../x") == 2


def test_publish_skill(ready, folder_store, skill, tmp_path):
    assert code(ready, "publish-skill", str(tmp_path / "no-such-folder")) == 2
    assert code(ready, "publish-skill") == 2
    (skill / "notes.md").write_text(f"token {SECRET}\n")
    assert code(ready, "publish-skill", str(skill)) == 5
    (skill / "notes.md").unlink()
    assert code(ready, "publish-skill", str(skill)) == 0
    folder = unmounted(folder_store)
    assert code(ready, "publish-skill", str(skill)) == 75
    os.rename(folder.with_name("away"), folder)


def test_install_skill(ready, skill):
    revision = ready.run("publish-skill", str(skill), "--json").json["revision"]
    assert code(ready, "install-skill", "review", "--revision", "nope") == 1  # well formed, not there
    assert code(ready, "install-skill", "review", "--revision", "../x") == 2
    assert code(ready, "install-skill", "Review", "--revision", revision) == 2
    assert code(ready, "install-skill", "agent-memory", "--revision", revision) == 5  # the reserved core skill
    assert code(ready, "install-skill", "review", "--revision", revision) == 0
    (ready.home / ".claude" / "skills" / "review" / "SKILL.md").write_text("edited\n")
    assert code(ready, "install-skill", "review", "--revision", revision) == 1  # would replace an edited folder


def test_status(ready, folder_store):
    assert code(ready, "status") == 0
    os.chmod(folder_store.removeprefix("file://"), 0o755)
    assert code(ready, "status") == 4


def test_pending(ready, folder_store):
    assert code(ready, "pending") == 0
    assert code(ready, "pending", "retry") == 0
    assert code(ready, "pending", "export", NOTE_ID, "--to", "x.md") == 1
    folder = unmounted(folder_store)
    waiting = ready.save("a note").json["id"]
    assert code(ready, "pending", "retry") == 75
    assert code(ready, "pending", "retry", waiting) == 75
    os.rename(folder.with_name("away"), folder)
    assert code(ready, "pending", "retry", waiting) == 0
    assert code(ready, "pending", "frobnicate") == 2


def test_bootstrap(machine, tmp_path, hub):
    store = f"file://{tmp_path / 'store'}"
    assert code(machine, "bootstrap", "--project", "../bad", "--bucket", store) == 2
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", f"file://{tmp_path}/no/store") == 2
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    os.chmod(open_folder, 0o755)
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", f"file://{open_folder}") == 4
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", store) == 0
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", BUCKET, env={"HF_TOKEN": ""}) == 4
    hub.fault("batch", "fail", status=500)  # the verification note cannot be uploaded: it waits on this machine
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", BUCKET) == 75
    hub.clear_faults()
    hub.fault("xet-read-token", "fail", status=403)  # it cannot be read back: the setup is not verified
    assert code(machine, "bootstrap", "--project", "demo", "--bucket", BUCKET) == 1


def test_instructions(machine):
    assert code(machine, "instructions", "remove") == 0
    assert code(machine, "instructions", "remove", "--agent", "gemini") == 2
    assert code(machine, "instructions") == 2


def test_hooks(machine):
    assert code(machine, "hooks", "install") == 0
    assert code(machine, "hooks", "status") == 0
    assert code(machine, "hooks", "remove") == 0
    (machine.home / ".claude" / "settings.json").write_text("{not json")
    assert code(machine, "hooks", "install") == 1  # a file it cannot edit safely: refused, unchanged


def test_codex_sandbox(machine):
    assert code(machine, "codex-sandbox", "status") == 0
    assert code(machine, "codex-sandbox", "allow") == 0
    assert code(machine, "codex-sandbox", "remove") == 0
    (machine.home / ".codex" / "config.toml").write_text("[sandbox_workspace_write]\nnetwork_access = false\n")
    assert code(machine, "codex-sandbox", "allow") == 1  # the user's own settings: left alone


def test_every_code_of_the_readme_is_pinned_above():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = {
        int(line.split("|")[1])
        for line in readme.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    }
    assert table == {0, 1, 2, 3, 4, 5, 75}
    source = Path(__file__).read_text()
    assert all(f"== {number}" in source for number in table)


def test_a_local_failure_on_an_open_folder_names_no_file_and_still_says_what_to_do():
    """An OSError from a call on an open folder (`dir_fd`) carries the folder's descriptor, a number, as its
    filename: the error says what happened and what to do, without taking the number for a path."""
    import errno

    from agent_memory.cli.failures import local_error

    failure = OSError(errno.ENOSPC, "No space left on device")
    failure.filename = 7
    told = local_error(failure, ["sync", "now"])
    assert "cannot use a local file: No space left on device." in told.message
    assert "check that folder's permissions and free space" in told.next_step
