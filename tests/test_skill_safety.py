"""What leaves the machine with a skill: never a credential; and what comes back: the executable bit, exactly
where the publisher had it."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest
from test_guard import SECRETS

import tools
from conftest import BUCKET


def skill_folder(root, name="tools"):
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Small tools.\n---\n\nRun scripts/run.sh.\n")
    (folder / "scripts" / "run.sh").write_text('#!/bin/sh\necho "ran from $0"\n')
    (folder / "notes.md").write_text("plain\n")
    return folder


@pytest.mark.parametrize("rule", sorted(SECRETS))
def test_a_skill_carrying_a_credential_is_refused_and_nothing_leaves(alice, hub, tmp_path, rule):
    folder = skill_folder(tmp_path)
    (folder / "config.env").write_text(f"# settings\nVALUE={SECRETS[rule]}\n")
    result = alice.run("publish-skill", str(folder))
    tools.exited(result, 5)
    assert "config.env line 2" in result.err and f"rule {rule}" in result.err
    assert "Next:" in result.err
    assert SECRETS[rule].split()[-1] not in result.err + result.out
    assert hub.list_paths(BUCKET) == []
    outbox = alice.state / "state" / "outbox"
    assert not outbox.exists() or [p for p in outbox.iterdir() if not p.name.startswith(".")] == []


def test_a_credential_in_skill_md_itself_is_refused(alice, hub, tmp_path):
    folder = skill_folder(tmp_path)
    header = "---\nname: tools\ndescription: Small tools.\n---\n\n"
    (folder / "SKILL.md").write_text(header + f"token {SECRETS['hf-token']}\n")
    result = alice.run("publish-skill", str(folder))
    tools.exited(result, 5)
    assert "SKILL.md line 6" in result.err
    assert hub.list_paths(BUCKET) == []


@pytest.mark.parametrize(
    ("name", "data", "line"),
    [
        ("model.bin", b"\x89\xff\xfe\x00binary\nheader\xc3\ntoken " + SECRETS["hf-token"].encode() + b"\xff\n", 3),
        ("notes-latin1.txt", "café\nmot de passe: ".encode("latin-1") + SECRETS["hf-token"].encode(), 2),
        ("notes-utf16.txt", f"first\nsecond {SECRETS['github-token']}\n".encode("utf-16"), 2),
    ],
    ids=["binary", "latin-1", "utf-16"],
)
def test_a_credential_in_a_file_that_is_not_utf8_is_refused(alice, hub, tmp_path, name, data, line):
    folder = skill_folder(tmp_path)
    (folder / "references").mkdir()
    (folder / "references" / name).write_bytes(data)
    result = alice.run("publish-skill", str(folder))
    tools.exited(result, 5)
    assert f"references/{name} line {line}:" in result.err and "Next:" in result.err
    assert SECRETS["hf-token"] not in result.err + result.out and SECRETS["github-token"] not in result.err
    assert hub.list_paths(BUCKET) == []


def test_a_credential_in_a_file_name_is_refused_without_printing_it(alice, hub, tmp_path):
    folder = skill_folder(tmp_path)
    (folder / f"{SECRETS['hf-token']}.txt").write_text("plain\n")
    result = alice.run("publish-skill", str(folder))
    tools.exited(result, 5)
    assert "the file name [redacted].txt: Hugging Face token (rule hf-token)" in result.err
    assert SECRETS["hf-token"] not in result.err + result.out
    assert hub.list_paths(BUCKET) == []


def test_executable_bits_survive_publish_and_install_and_only_there(alice, bob, hub, tmp_path):
    folder = skill_folder(tmp_path)
    os.chmod(folder / "scripts" / "run.sh", 0o755)
    published = alice.run("publish-skill", str(folder), "--json")
    tools.exited(published)
    revision = published.json["revision"]

    # the revision folder holds exactly the skill's files; the modes sit beside it
    paths = hub.list_paths(BUCKET)
    inside = sorted(p for p in paths if p.startswith(f"skills/tools/{revision}/"))
    assert inside == [f"skills/tools/{revision}/{rel}" for rel in ("SKILL.md", "notes.md", "scripts/run.sh")]
    modes = json.loads(hub.read_file(BUCKET, f"skills/tools/{revision}.modes.json"))
    assert modes == {"executable": ["scripts/run.sh"]}
    modes_info = hub.file_info(BUCKET, f"skills/tools/{revision}.modes.json")
    assert modes_info["uploadedAt"] <= hub.file_info(BUCKET, f"skills/tools/{revision}/SKILL.md")["uploadedAt"]

    old_umask = os.umask(0o000)  # the install must not inherit a permissive umask
    try:
        installed = bob.run("install-skill", "tools", "--revision", revision, "--json")
    finally:
        os.umask(old_umask)
    tools.exited(installed)
    for root in (bob.home / ".agents" / "skills" / "tools", bob.home / ".claude" / "skills" / "tools"):
        assert stat.S_IMODE((root / "scripts" / "run.sh").stat().st_mode) == 0o755
        assert stat.S_IMODE((root / "notes.md").stat().st_mode) == 0o644
        assert stat.S_IMODE((root / "SKILL.md").stat().st_mode) == 0o644
    script = bob.home / ".agents" / "skills" / "tools" / "scripts" / "run.sh"
    assert subprocess.run([str(script)], capture_output=True, check=True).stdout.startswith(b"ran from")


def test_a_skill_without_executables_publishes_no_modes_object(alice, hub, tmp_path):
    folder = skill_folder(tmp_path)
    revision = alice.run("publish-skill", str(folder), "--json").json["revision"]
    assert f"skills/tools/{revision}.modes.json" not in hub.list_paths(BUCKET)


def test_a_modes_object_naming_files_outside_the_revision_is_refused(alice, bob, hub, tmp_path):
    folder = skill_folder(tmp_path)
    revision = alice.run("publish-skill", str(folder), "--json").json["revision"]
    hub.put_file(BUCKET, f"skills/tools/{revision}.modes.json", b'{"executable": ["../../.bashrc"]}')
    result = bob.run("install-skill", "tools", "--revision", revision)
    tools.exited(result, 5)
    assert "modes.json" in result.err
    assert not (bob.home / ".agents" / "skills" / "tools").exists()


def test_one_listing_of_a_skill_folder_with_one_rule_for_links_and_the_marker(tmp_path):
    """Publish, install, status and uninstall list a skill folder through `layout.skill_files`: a link is listed as
    a link (to a file or a folder, never followed nor entered), the install marker at the top is left out, and a file
    of the marker's name further down is the skill's."""
    from agent_memory.skills.install_read import folder_files
    from agent_memory.skills.layout import MARKER, skill_files

    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "secret.md").write_text("not the skill's")
    skill = tmp_path / "skill"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    (skill / MARKER).write_text("{}")
    (skill / "references" / MARKER).write_text("the skill's own file")
    (skill / "linked-folder").symlink_to(outside)
    (skill / "linked-file.md").symlink_to(outside / "deep" / "secret.md")

    listed = skill_files(skill)
    assert list(listed) == ["SKILL.md", "linked-file.md", "linked-folder", f"references/{MARKER}"]
    assert stat.S_ISLNK(listed["linked-folder"].st_mode) and stat.S_ISLNK(listed["linked-file.md"].st_mode)
    assert folder_files(skill) == {
        "SKILL.md": b"---\nname: s\ndescription: d\n---\n",
        "linked-file.md": None,  # differs from anything installed: never read through the link
        "linked-folder": None,
        f"references/{MARKER}": b"the skill's own file",
    }
