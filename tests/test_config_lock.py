"""config.json under concurrency and damage: every change is made under a lock and written atomically."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tools


def config_path(machine):
    return machine.state / "config" / "config.json"


def read_config(machine) -> dict:
    return json.loads(config_path(machine).read_text())


@pytest.mark.slow
def test_sixteen_concurrent_project_maps_keep_every_mapping(machine, folder_store, tmp_path):
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    folders = []
    for number in range(16):
        folder = tmp_path / "checkouts" / f"c{number}"
        folder.mkdir(parents=True)
        folders.append(folder)
    procs = [machine.popen("project", "map", f"p{number}", str(folder)) for number, folder in enumerate(folders)]
    procs.append(machine.popen("config", "set", "bucket", folder_store))  # a writer of another key, meanwhile
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=120))
    config = read_config(machine)
    assert config["projects"] == {str(folder.resolve()): f"p{number}" for number, folder in enumerate(folders)}
    assert config["bucket"] == folder_store
    leftovers = sorted(p.name for p in config_path(machine).parent.iterdir())
    assert leftovers == ["config.json", "config.json.lock"]  # no temporary file left behind


def _hold_lock(machine):
    """Take the configuration's lock from this test, as a slow writer would."""
    lock = config_path(machine).with_name("config.json.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock, "a+b")  # noqa: SIM115  (held across the test)
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle


def test_a_writer_waits_for_the_lock_and_a_killed_one_changes_nothing(machine, folder_store, tmp_path):
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    before = config_path(machine).read_bytes()
    holder = _hold_lock(machine)
    try:
        waiting = machine.popen("project", "map", "demo")
        time.sleep(1.5)
        assert waiting.poll() is None  # blocked on the lock, not writing
        waiting.send_signal(signal.SIGKILL)
        waiting.wait(timeout=30)
        assert config_path(machine).read_bytes() == before

        patient = machine.popen("project", "map", "demo")
        time.sleep(0.5)
        assert patient.poll() is None
    finally:
        holder.close()  # releases the lock
    tools.exited(tools.finished(patient, timeout=60))
    assert read_config(machine)["projects"] == {str(machine.work.resolve()): "demo"}
    assert read_config(machine)["bucket"] == folder_store


def test_a_writer_killed_while_holding_the_lock_releases_it(machine, folder_store):
    """The lock is the kernel's (flock): a process that dies holding it cannot block the next writer."""
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    script = textwrap.dedent(
        """
        import sys, time
        from agent_memory.config import settings as config
        with config.editing() as values:
            values["projects"] = {"/half": "written"}
            print("holding", flush=True)
            time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=machine.env)
    assert proc.stdout.readline() == b"holding\n"
    proc.kill()
    proc.wait(timeout=30)
    assert read_config(machine) == {"bucket": folder_store}  # the killed editor saved nothing
    result = machine.run("project", "map", "demo", timeout=30)
    tools.exited(result)
    assert read_config(machine)["projects"] == {str(machine.work.resolve()): "demo"}


@pytest.mark.parametrize("damage", [b'{"bucket": "file:///x", "proj', b"", b"\xff\xfe"])
def test_a_damaged_configuration_is_never_overwritten(machine, damage):
    path = config_path(machine)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    result = machine.run("project", "map", "demo")
    tools.exited(result, 1)
    assert "Next: fix or remove" in result.err and str(path) in result.err
    assert path.read_bytes() == damage
    tools.exited(machine.run("config", "set", "bucket", "alice/memory"), 1)
    assert path.read_bytes() == damage


def _config_writes(machine, *args: str) -> tuple[int, int, str]:
    """Run a command in a process that counts the files moved onto config.json (how atomic writes land)."""
    script = textwrap.dedent(
        """
        import os, sys
        writes = []
        def audit(event, args):
            if event == "os.rename" and os.fspath(args[1]).endswith("config.json"):
                writes.append(os.fspath(args[1]))
        sys.addaudithook(audit)
        from agent_memory.entry import run
        code = run(sys.argv[1:])
        sys.stderr.write(f"\\nconfig writes: {len(writes)}\\n")
        sys.exit(code)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, cwd=machine.work, env=machine.env, timeout=120
    )
    err = proc.stderr.decode()
    counted = [line for line in err.splitlines() if line.startswith("config writes: ")]
    assert len(counted) == 1, err
    return proc.returncode, int(counted[0].split(": ")[1]), err


def test_bootstrap_writes_its_configuration_once(machine, tmp_path):
    store = tmp_path / "store"
    code, writes, err = _config_writes(machine, "bootstrap", "--project", "demo", "--bucket", f"file://{store}")
    assert code == 0, err
    assert writes == 1
    config = read_config(machine)
    assert config["bucket"] == f"file://{store}"
    assert config["projects"] == {str(machine.work.resolve()): "demo"}
    assert config["core_skill"]["version"]
    code, writes, err = _config_writes(machine, "bootstrap", "--project", "demo")  # a re-run: again one write
    assert code == 0, err
    assert writes == 1
    code, writes, err = _config_writes(machine, "project", "map", "other")  # the counter sees other writes too
    assert (code, writes) == (0, 1), err


def test_a_bootstrap_that_fails_before_the_end_records_nothing(machine, tmp_path):
    claude_md = machine.home / ".claude" / "CLAUDE.md"
    claude_md.mkdir(parents=True)  # a folder where the instruction file should be
    result = machine.run("bootstrap", "--project", "demo", "--bucket", f"file://{tmp_path / 'store'}")
    tools.exited(result, 1)
    assert not config_path(machine).exists()


def test_config_set_is_atomic_for_readers(machine, folder_store, tmp_path):
    """Readers running while the file is rewritten again and again only ever see a whole configuration."""
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    writers = [machine.popen("project", "map", f"p{n}", str(_folder(tmp_path, n))) for n in range(8)]
    seen = 0
    while any(w.poll() is None for w in writers):
        with open(config_path(machine), "rb") as handle:
            json.loads(handle.read())  # never a torn file
        seen += 1
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    assert seen > 0 and len(read_config(machine)["projects"]) == 8


def _folder(tmp_path, number):
    folder = tmp_path / "readers" / f"r{number}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
