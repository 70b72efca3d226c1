"""Search where the local cache cannot be written (Codex's sandbox without the consent, a read-only home): it
answers from the cache as it is, marked stale with the reason, and read-only commands keep working.

The cache is made read-only for real, with a read-only bind mount in a private mount namespace (`unshare -m`,
as root): a chmod would not stop root, and the tests run as root on CI."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

import tools


def _read_only_mounts_work() -> bool:
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)  # allowed in a container?
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _read_only_mounts_work(), reason="needs root and unshare -m (read-only mounts)")


def _read_only(machine, *args: str):
    """`agent-memory ARGS` with the machine's agent-memory folders mounted read-only."""
    folder = shlex.quote(str(machine.state))
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "agent_memory", *args])
    script = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && exec {command}"
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, cwd=machine.work, env=machine.env
    )


def test_search_answers_stale_from_the_cache_when_it_cannot_be_written(machine, machine_b, folder_store):
    ready = machine.setup(folder_store)
    first = ready.save("The lockfile is stale after a crash.", "--title", "Stale lockfile")
    tools.exited(first)
    tools.exited(ready.run("search", "lockfile"))  # the cache holds the first note
    other = machine_b.setup(folder_store)
    tools.exited(other.save("A lockfile from elsewhere.", "--title", "Other lockfile"))

    result = _read_only(ready, "search", "lockfile", "--json")
    tools.exited(result)
    found = json.loads(result.stdout)
    assert [n["title"] for n in found["results"]] == ["Stale lockfile"]  # the cache as it was: nothing lost
    assert found["freshness"]["status"] == "stale" and found["freshness"]["reason"] == "error"
    assert "the local cache cannot be written here (Read-only file system" in found["freshness"]["detail"]
    assert "agent-memory codex-sandbox allow" in found["freshness"]["detail"]
    assert "Results come from the local cache only" in result.stderr and "not saved" not in result.stderr

    for args in (("search", "--offline", "lockfile"), ("read", first.json["id"]), ("status",), ("pending",)):
        tools.exited(_read_only(ready, *args), about=args)

    assert ready.run("search", "lockfile", "--json").json["freshness"]["status"] == "fresh"  # writable again: refreshed
    assert len(ready.run("search", "lockfile", "--json").json["results"]) == 2
