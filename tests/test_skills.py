"""Skill sharing: immutable revisions published to the bucket, discovered, and installed at an explicit revision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tools
from conftest import BUCKET

SKILL_MD = """---
name: {name}
description: {description}
---

# {name}

Run `scripts/check.sh` to check the thing.
"""


def make_skill(folder: Path, name: str = "db-migrations", description: str = "Write safe database migrations.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, description=description))
    (folder / "references").mkdir(exist_ok=True)
    (folder / "references" / "checklist.md").write_text("- back up first\n")
    (folder / "scripts").mkdir(exist_ok=True)
    (folder / "scripts" / "check.sh").write_text('#!/bin/sh\ntouch "$HOME/SCRIPT-WAS-RUN"\n')
    (folder / "data.bin").write_bytes(bytes(range(256)) * 4)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".agent-memory-skill.json"
    }


def every_file(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def publish(machine, folder, *args):
    return machine.run("publish-skill", str(folder), "--json", *args)


def test_publish_discover_install_on_another_machine(alice, bob, hub, tmp_path):
    source = make_skill(tmp_path / "src" / "db-migrations")
    published = publish(alice, source)
    tools.exited(published)
    result = published.json
    assert set(result) == {"name", "revision", "status", "files"}
    assert result["status"] == "published" and result["name"] == "db-migrations"
    assert result["files"] == ["SKILL.md", "data.bin", "references/checklist.md", "scripts/check.sh"]
    prefix = f"skills/db-migrations/{result['revision']}/"
    assert sorted(hub.list_paths(BUCKET)) == sorted(prefix + f for f in result["files"])

    found = bob.run("search", "--skills", "MIGRATIONS", "--json")
    tools.exited(found)
    assert found.json == {
        "skills": [
            {
                "name": "db-migrations",
                "revision": result["revision"],
                "description": "Write safe database migrations.",
                "published": found.json["skills"][0]["published"],
            }
        ]
    }
    assert found.json["skills"][0]["published"].endswith("Z")
    assert bob.run("search", "--skills", "safe database", "--json").json["skills"][0]["name"] == "db-migrations"
    assert bob.run("search", "--skills", "nothing-like-this", "--json").json == {"skills": []}

    shown = bob.run("read", "--skill", "db-migrations", "--revision", result["revision"])
    assert shown.out.encode() == (source / "SKILL.md").read_bytes()
    ref = bob.run("read", "--skill", "db-migrations", "--revision", result["revision"], "references/checklist.md")
    assert ref.out == "- back up first\n"

    installed = bob.run("install-skill", "db-migrations", "--revision", result["revision"], "--json")
    tools.exited(installed)
    codex_dir = bob.home / ".agents" / "skills" / "db-migrations"
    claude_dir = bob.home / ".claude" / "skills" / "db-migrations"
    assert installed.json == {
        "name": "db-migrations",
        "revision": result["revision"],
        "installed": [str(codex_dir), str(claude_dir)],
        "unchanged": [],
        "backup": None,
    }
    for folder in (codex_dir, claude_dir):
        assert not folder.is_symlink()
        assert tree(folder) == tree(source)
        marker = json.loads((folder / ".agent-memory-skill.json").read_text())
        assert (marker["name"], marker["revision"], marker["bucket"]) == (
            "db-migrations",
            result["revision"],
            f"hf://buckets/{BUCKET}",
        )
        assert marker["installed"].endswith("Z")
    assert not (bob.home / "SCRIPT-WAS-RUN").exists()  # downloaded scripts are never executed
    again = bob.run("install-skill", "db-migrations", "--revision", result["revision"], "--json")
    tools.exited(again)  # the same revision, unmodified: nothing to do, and it says so
    assert again.json == {**installed.json, "unchanged": installed.json["installed"]}
    text = bob.run("install-skill", "db-migrations", "--revision", result["revision"]).out
    assert text.splitlines() == [
        f"Already installed, unchanged: db-migrations revision {result['revision']} in {folder}"
        for folder in (codex_dir, claude_dir)
    ]
    status = bob.run("status", "--json").json["skills"]
    assert {(s["agent"], s["name"], s["revision"], s["modified"]) for s in status} == {
        ("codex", "db-migrations", result["revision"], False),
        ("claude", "db-migrations", result["revision"], False),
    }


def test_only_one_agent(alice, hub, tmp_path):
    revision = publish(alice, make_skill(tmp_path / "s" / "db-migrations")).json["revision"]
    result = alice.run("install-skill", "db-migrations", "--revision", revision, "--agent", "claude", "--json")
    assert result.json["installed"] == [str(alice.home / ".claude" / "skills" / "db-migrations")]
    assert not (alice.home / ".agents").exists()


@pytest.mark.parametrize("failing_batch", [0, 1], ids=["supporting-files", "skill-md"])
def test_an_interrupted_publication_is_invisible_and_retry_completes_the_same_revision(
    alice, bob, hub, tmp_path, failing_batch
):
    source = make_skill(tmp_path / "src" / "db-migrations")
    original = tree(source)
    hub.fault("batch", "fail", status=500, after=failing_batch)
    pending = publish(alice, source)
    tools.exited(pending, 75)
    assert pending.json["status"] == "pending"
    revision = pending.json["revision"]
    assert "pending retry " + revision in pending.err
    assert not any(p.endswith("/SKILL.md") for p in hub.list_paths(BUCKET))
    assert bob.run("search", "--skills", "--json").json == {"skills": []}
    refused = bob.run("install-skill", "db-migrations", "--revision", revision)
    tools.exited(refused, 1)
    assert "No complete revision" in refused.err  # not found: nothing was refused
    assert not (bob.home / ".agents" / "skills" / "db-migrations").exists()
    assert [p["revision"] for p in alice.run("status", "--json").json["pending_skills"]] == [revision]

    (source / "SKILL.md").write_text(SKILL_MD.format(name="db-migrations", description="CHANGED since"))
    (source / "new-file.md").write_text("added later\n")
    hub.clear_faults()
    done = alice.run("publish-skill", "--retry", revision, "--json")
    tools.exited(done)
    assert (done.json["revision"], done.json["status"]) == (revision, "published")
    prefix = f"skills/db-migrations/{revision}/"
    assert {p[len(prefix) :]: hub.read_file(BUCKET, p) for p in hub.list_paths(BUCKET)} == original
    assert [s["revision"] for s in bob.run("search", "--skills", "--json").json["skills"]] == [revision]
    assert alice.run("status", "--json").json["pending_skills"] == []


def test_new_revisions_never_touch_earlier_ones_or_installed_copies(alice, bob, hub, tmp_path):
    source = make_skill(tmp_path / "src" / "db-migrations")
    first = publish(alice, source).json["revision"]
    first_files = {p: hub.file_info(BUCKET, p) for p in hub.list_paths(BUCKET)}
    bob.run("install-skill", "db-migrations", "--revision", first)
    installed = tree(bob.home / ".agents" / "skills" / "db-migrations")

    (source / "references" / "checklist.md").write_text("- back up first\n- then test\n")
    second = publish(alice, source).json["revision"]
    assert second > first
    for path, info in first_files.items():
        assert hub.file_info(BUCKET, path) == info
    assert tree(bob.home / ".agents" / "skills" / "db-migrations") == installed
    revisions = [s["revision"] for s in bob.run("search", "--skills", "db", "--json").json["skills"]]
    assert revisions == [second, first]  # newest first, both kept


@pytest.mark.slow
def test_two_machines_publishing_the_same_name_at_once_get_two_revisions(alice, bob, hub, tmp_path):
    one = make_skill(tmp_path / "one" / "db-migrations", description="Version one.")
    two = make_skill(tmp_path / "two" / "db-migrations", description="Version two.")
    procs = [alice.popen("publish-skill", str(one), "--json"), bob.popen("publish-skill", str(two), "--json")]
    results = []
    for proc in procs:
        ended = tools.exited(tools.finished(proc, timeout=180))
        out = ended.stdout
        results.append(json.loads(out))
    assert results[0]["revision"] != results[1]["revision"]
    listed = {s["revision"]: s["description"] for s in alice.run("search", "--skills", "--json").json["skills"]}
    assert listed == {results[0]["revision"]: "Version one.", results[1]["revision"]: "Version two."}


@pytest.mark.parametrize(
    ("planted", "reason"),
    [
        ({"SKILL.md": None, "../../escape.md": b"x"}, "Unsafe path"),
        ({"SKILL.md": None, "/abs/evil.md": b"x"}, "Unsafe path"),
        ({"SKILL.md": None, "refs\\..\\..\\evil.md": b"x"}, "Unsafe path"),
        ({"SKILL.md": None, "README.md": b"a", "readme.md": b"b"}, "collide"),
        ({"SKILL.md": None, "big.bin": b"\0" * (5 * 1024 * 1024 + 1)}, "at most"),
    ],
    ids=["dot-dot", "absolute", "backslash", "collision", "oversize"],
)
def test_hostile_revisions_are_refused_and_change_nothing(alice, hub, tmp_path, planted, reason):
    good = publish(alice, make_skill(tmp_path / "src" / "db-migrations")).json["revision"]
    tools.exited(alice.run("install-skill", "db-migrations", "--revision", good))
    before = {p: p.read_bytes() if p.is_file() else None for p in alice.root.rglob("*")}
    revision = "20260101-000000-000000-0123456789"
    for path, data in planted.items():
        content = data if data is not None else SKILL_MD.format(name="db-migrations", description="evil").encode()
        hub.put_file(BUCKET, f"skills/db-migrations/{revision}/{path}", content)
    result = alice.run("install-skill", "db-migrations", "--revision", revision, "--replace")
    tools.exited(result, 5)
    assert reason in result.err
    after = {p: p.read_bytes() if p.is_file() else None for p in alice.root.rglob("*")}
    assert after == before


def test_a_failed_download_leaves_the_installation_intact(alice, hub, tmp_path):
    source = make_skill(tmp_path / "src" / "db-migrations")
    first = publish(alice, source).json["revision"]
    alice.run("install-skill", "db-migrations", "--revision", first)
    (source / "SKILL.md").write_text(SKILL_MD.format(name="db-migrations", description="Second."))
    second = publish(alice, source).json["revision"]
    installed = alice.home / ".agents" / "skills" / "db-migrations"
    before = tree(installed)
    hub.fault("xet-read-token", "fail", status=403, times=0)
    result = alice.run("install-skill", "db-migrations", "--revision", second, "--replace")
    tools.exited(result, (1, 4))
    assert "nothing was installed or changed" in result.err
    assert tree(installed) == before
    assert not list(installed.parent.glob(".agent-memory-*"))


def test_install_never_replaces_without_consent_and_backs_up_with_it(alice, hub, tmp_path):
    source = make_skill(tmp_path / "src" / "db-migrations")
    first = publish(alice, source).json["revision"]
    alice.run("install-skill", "db-migrations", "--revision", first)
    installed = alice.home / ".agents" / "skills" / "db-migrations"
    (installed / "references" / "checklist.md").write_text("my local edit\n")
    (installed / "mine.md").write_text("my own file\n")
    with_edits = tree(installed)
    assert alice.run("status", "--json").json["skills"][0]["modified"] is True

    (source / "data.bin").unlink()
    (source / "extra.md").write_text("new\n")
    second = publish(alice, source).json["revision"]
    refused = alice.run("install-skill", "db-migrations", "--revision", second)
    tools.exited(refused, 1)
    assert "already installed" in refused.err and "--replace" in refused.err
    said = "installing it would add extra.md; remove data.bin, mine.md; change references/checklist.md"
    assert said in refused.err  # mine.md is the user's: the revision does not remove it, installing it would
    assert tree(installed) == with_edits
    again = alice.run("install-skill", "db-migrations", "--revision", first)  # the same revision, edited here
    tools.exited(again, 1)
    assert "installing it would remove mine.md; change references/checklist.md" in again.err

    replaced = alice.run("install-skill", "db-migrations", "--revision", second, "--replace", "--json")
    tools.exited(replaced)
    backup = Path(replaced.json["backup"])
    assert alice.state in backup.parents
    assert tree(backup / "codex") == with_edits
    assert tree(installed) == tree(source)
    for root in (alice.home / ".agents" / "skills", alice.home / ".claude" / "skills"):
        assert sorted(os.listdir(root)) == ["db-migrations"]  # no stray backup or staging folder


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: (d / "SKILL.md").unlink(), "has no SKILL.md"),
        (lambda d: (d / "SKILL.md").write_text("# no frontmatter\n"), "frontmatter"),
        (lambda d: (d / "SKILL.md").write_text("---\nname: db-migrations\n---\nbody\n"), "description"),
        (lambda d: (d / "SKILL.md").write_text(SKILL_MD.format(name="Bad_Name", description="x")), "Invalid skill"),
        (lambda d: (d / "SKILL.md").write_text(SKILL_MD.format(name="db-migrations", description="x" * 1025)), "1024"),
        (lambda d: os.symlink("/etc/hostname", d / "link.md"), "symbolic link"),
        (lambda d: (d / "huge.bin").write_bytes(b"\0" * (5 * 1024 * 1024 + 1)), "at most"),
        (lambda d: (d / "SKILL.md").write_text(SKILL_MD.format(name="agent-memory", description="x")), "reserved"),
    ],
    ids=["no-skill-md", "no-frontmatter", "no-description", "bad-name", "long-desc", "symlink", "big", "reserved"],
)
def test_invalid_skill_folders_are_refused(alice, hub, tmp_path, mutate, fragment):
    source = make_skill(tmp_path / "src" / "db-migrations")
    mutate(source)
    result = publish(alice, source)
    tools.exited(result, 5)
    assert fragment in result.err
    assert hub.list_paths(BUCKET) == []
    assert alice.run("status", "--json").json["pending_skills"] == []


def test_the_name_option_must_match(alice, hub, tmp_path):
    source = make_skill(tmp_path / "src" / "db-migrations")
    tools.exited(publish(alice, source, "--name", "other-name"), 5)
    tools.exited(publish(alice, source, "--name", "db-migrations"))


def test_the_core_skill_name_is_reserved_for_install(alice, hub):
    result = alice.run("install-skill", "agent-memory", "--revision", "20260101-000000-000000-0123456789")
    tools.exited(result, 5)
    assert "The core memory skill agent-memory comes only with the agent-memory package" in result.err
    assert result.err.endswith(
        "Next: agent-memory bootstrap (installs the packaged one; with --replace, over a copy edited here)\n"
    )


def test_skills_in_a_folder_store_with_a_planted_symlink(machine, folder_store, tmp_path):
    machine.setup(folder_store)
    revision = publish(machine, make_skill(tmp_path / "src" / "db-migrations")).json["revision"]
    tools.exited(machine.run("install-skill", "db-migrations", "--revision", revision, "--agent", "codex"))
    store = Path(folder_store[len("file://") :])
    hostile = store / "skills" / "db-migrations" / "20260101-000000-000000-0123456789"
    hostile.mkdir(parents=True)
    (hostile / "SKILL.md").write_text(SKILL_MD.format(name="db-migrations", description="evil"))
    os.symlink("/etc/hostname", hostile / "stolen.md")
    result = machine.run("install-skill", "db-migrations", "--revision", hostile.name, "--replace", "--agent", "codex")
    tools.exited(result, 5)
    assert "stolen.md is a symbolic link" in result.err
    assert "stolen.md" not in os.listdir(machine.home / ".agents" / "skills" / "db-migrations")


def test_offline_skill_search_uses_the_cached_index(alice, hub, tmp_path):
    revision = publish(alice, make_skill(tmp_path / "src" / "db-migrations")).json["revision"]
    assert len(alice.run("search", "--skills", "--json").json["skills"]) == 1
    hub.stop()
    offline = alice.run("search", "--skills", "db", "--offline", "--json")
    tools.exited(offline)
    assert [s["revision"] for s in offline.json["skills"]] == [revision]
    unreachable = alice.run("search", "--skills", "db")
    tools.exited(unreachable)
    assert "local cache only" in unreachable.err


def test_status_tells_an_edited_skill_without_reading_an_untouched_one(machine, folder_store):
    """`status` tells an installed skill that nothing touched since from its files' change times alone (no file read,
    no digest: it loads no hashlib); anything else, even an edit that keeps the size and the modification time, or
    a chmod that changes no byte, is compared by digest."""
    tools.exited(machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "claude"))
    [folder] = [marker.parent for marker in (machine.home / ".claude" / "skills").glob("*/.agent-memory-skill.json")]
    probe = ["-X", "importtime", "-m", "agent_memory", "status", "--json"]

    def status() -> tuple[bool, set[str]]:
        proc = subprocess.run(
            [sys.executable, *probe], capture_output=True, cwd=machine.work, env=machine.env, timeout=120
        )
        tools.exited(proc)
        loaded = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
        [skill] = [s for s in json.loads(proc.stdout)["skills"] if s["path"] == str(folder)]
        return skill["modified"], loaded

    modified, loaded = status()
    assert modified is False and "hashlib" not in loaded  # untouched: told from the change times alone
    skill_md = folder / "SKILL.md"
    os.chmod(skill_md, 0o600)  # a later change time, the same bytes: the digests say it is as installed
    modified, loaded = status()
    assert modified is False and "hashlib" in loaded
    before = skill_md.stat()
    skill_md.write_bytes(skill_md.read_bytes().replace(b"a", b"b", 1))  # same size, then the same mtime
    os.utime(skill_md, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert status()[0] is True
