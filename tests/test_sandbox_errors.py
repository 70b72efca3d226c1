"""Without the consent, in Codex's sandbox: every read-only command works, and a command that must write (or reach
the bucket) says what it left undone, where, and that the user's consent is the fix.

The sandbox is stood in for by what it does: agent-memory's folders mounted read-only (see `test_read_only_cache`)
and the variables Codex gives the commands it runs (`CODEX_THREAD_ID`, and `CODEX_SANDBOX_NETWORK_DISABLED=1`
when the network is closed). The real Codex runs the same in `test_runtime_e2e`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_read_only_cache import _read_only_mounts_work

import tools
from conftest import BUCKET

CODEX = {"CODEX_THREAD_ID": "01a236f6-317c-7900-81ea-145b83a92f31"}
NO_NETWORK = {**CODEX, "CODEX_SANDBOX_NETWORK_DISABLED": "1"}
FIX = (
    "Next: agent-memory codex-sandbox allow (the user runs it in their own terminal, then starts a new Codex "
    "session; it cannot work from inside the sandbox, so do not retry from here)"
)
read_only_mounts = pytest.mark.skipif(
    not _read_only_mounts_work(), reason="needs root and unshare -m (read-only mounts)"
)


def sandboxed(machine, *args: str, env: dict[str, str] | None = None, stdin: str = ""):
    """`agent-memory ARGS` with the machine's agent-memory folders and its agents' folders read-only."""
    folders = [str(machine.state), str(machine.home)]
    mounts = " && ".join(
        f"mount --bind {shlex.quote(f)} {shlex.quote(f)} && mount -o remount,bind,ro {shlex.quote(f)}" for f in folders
    )
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "agent_memory", *args])
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mounts} && exec {command}"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=machine.work,
        env={**machine.env, **(env or {})},
    )


def _skill(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: db-migrations\ndescription: How we migrate.\n---\n# Steps\n")
    return folder


@read_only_mounts
def test_every_read_only_command_works_without_the_consent(machine, machine_b, folder_store, tmp_path):
    ready = machine.setup(folder_store)
    cached = ready.save("The lockfile is stale after a crash.", "--title", "Stale lockfile").json["id"]
    revision = ready.run("publish-skill", str(_skill(tmp_path / "src" / "db-migrations")), "--json").json["revision"]
    tools.exited(ready.run("search", "lockfile"))
    tools.exited(ready.run("search", "--skills"))
    elsewhere = machine_b.setup(folder_store).save("Saved on the other machine.", "--title", "Elsewhere").json["id"]

    for args in (
        ("search", "lockfile"),
        ("search", "--offline", "lockfile"),
        ("search", "--skills"),
        ("search", "--skills", "--offline"),
        ("read", cached),
        ("read", "--fresh", cached),
        ("read", elsewhere),  # not cached: read from the store, and not cached (it cannot be)
        ("read", "--skill", "db-migrations", "--revision", revision),
        ("status",),
        ("pending",),
        ("project", "show"),
        ("config", "show"),
        ("hooks", "status"),
        ("codex-sandbox", "status"),
    ):
        result = sandboxed(ready, *args, "--json", env=CODEX)
        tools.exited(result, about=args)
        json.loads(result.stdout)
    found = json.loads(sandboxed(ready, "read", elsewhere, "--json", env=CODEX).stdout)
    assert found["source"] == "bucket" and "Saved on the other machine." in found["content"]
    skills = sandboxed(ready, "search", "--skills", "--json", env=CODEX)
    assert [s["revision"] for s in json.loads(skills.stdout)["skills"]] == [revision]
    assert "Results come from the local cache only (error: the local cache cannot be written here" in skills.stderr


@read_only_mounts
def test_a_command_that_must_write_says_what_it_left_undone_and_that_the_consent_fixes_it(
    machine, folder_store, tmp_path
):
    ready = machine.setup(folder_store)
    source = _skill(tmp_path / "src" / "db-migrations")
    revision = ready.run("publish-skill", str(source), "--json").json["revision"]
    state = ready.state / "state"
    cases = {
        ("save", "--title", "T"): "The note was not saved, not even on this machine",
        ("publish-skill", str(source)): "The skill was not published, and nothing was queued on this machine",
    }
    for args, undone in cases.items():
        result = sandboxed(ready, *args, env=CODEX, stdin="a body")
        tools.exited(result, 1, about=args)
        error, next_line = result.stderr.splitlines()[-2:]
        assert error.startswith(f"Error: {undone}: Codex's sandbox does not let agent-memory write in {state} ("), error
        assert "Read-only file system" in error
        assert next_line == FIX

    # what writes the agents' own folders (or the configuration) is never opened by the consent: the user runs it
    for args, undone in {
        ("install-skill", "db-migrations", "--revision", revision): "The skill was not installed",
        ("project", "map", "other"): "The directory was not mapped",
        ("hooks", "install"): "The hooks were not changed",
    }.items():
        result = sandboxed(ready, *args, env=CODEX)
        tools.exited(result, 1, about=args)
        error, next_line = result.stderr.splitlines()[-2:]
        assert error.startswith(f"Error: {undone}: Codex's sandbox does not let agent-memory write in "), error
        assert next_line == (
            f"Next: agent-memory {' '.join(args)} (the user runs it in their own terminal: the sandbox's consent "
            "does not cover it)"
        )
    nothing_half_kept = {"notes": [], "skills": [], "sync": [], "damaged": []}
    assert ready.run("pending", "--json").json == nothing_half_kept

    outside = sandboxed(ready, "save", "--title", "T", stdin="a body")  # a read-only home, not Codex's sandbox
    tools.exited(outside, 1)
    assert outside.stderr.startswith("Error: The note was not saved, not even on this machine: cannot use a local file")
    assert "codex-sandbox" not in outside.stderr and "\nNext: check that folder's permissions" in outside.stderr


def test_without_network_in_codex_s_sandbox_a_read_says_so_and_names_the_consent(alice, hub, machine_b):
    saved = alice.save("Kept in the bucket only.", "--title", "Remote")
    tools.exited(saved)
    alice.run("search", "remote")
    not_cached = machine_b.setup(BUCKET).save("Not in alice's cache.", "--title", "Other").json["id"]
    closed = {**NO_NETWORK, "HF_ENDPOINT": "http://127.0.0.1:9"}  # what the sandbox leaves of the network

    for args in (("read", not_cached), ("read", "--fresh", saved.json["id"])):
        result = alice.run(*args, env=closed)
        tools.exited(result, 1)
        error, next_line = result.err.splitlines()
        assert error.startswith(f"Error: Could not read projects/demo/notes/{args[-1]}.md from hf://buckets/{BUCKET}")
        assert error.endswith(
            "This runs in Codex's sandbox, which gives commands no network unless the user allows it."
        )
        assert next_line == FIX

    found = alice.run("search", "remote", "--json", env=closed)
    tools.exited(found)
    assert [n["id"] for n in found.json["results"]] == [saved.json["id"]]
    assert found.json["freshness"]["status"] == "stale" and found.json["freshness"]["reason"] == "offline"
    assert found.json["freshness"]["detail"].endswith(
        "(This runs in Codex's sandbox, which gives commands no network unless the user allows it: "
        "agent-memory codex-sandbox allow)"
    )

    elsewhere = alice.run("read", not_cached, env={"HF_ENDPOINT": "http://127.0.0.1:9"})  # not Codex: the network
    assert "Next: check this machine's network" in elsewhere.err and "codex-sandbox" not in elsewhere.err
    assert os.environ.get("CODEX_THREAD_ID") is None


@read_only_mounts
def test_a_retry_in_the_sandbox_leaves_what_is_pending_as_it_was(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("Kept here while the Hub fails.", "--title", "Pending")
    tools.exited(saved, 75)
    hub.clear_faults()
    result = sandboxed(alice, "pending", "retry", env=CODEX)
    tools.exited(result, 1)
    error, next_line = result.stderr.splitlines()[-2:]
    assert error.startswith(
        "Error: Nothing was retried (what is pending stays pending): Codex's sandbox does not let agent-memory "
        f"write in {alice.state / 'state'} ("
    ), error
    assert next_line == FIX
    assert [n["id"] for n in alice.run("pending", "--json").json["notes"]] == [saved.json["id"]]
    tools.exited(alice.run("pending", "retry"))  # outside the sandbox, the same retry goes through
