"""A folder store on a mount that never answers (a FUSE filesystem hung the way a hard NFS mount hangs) holds no
command and no hook: the first search gives up on it within its hearing time and records the outage; every later
command and hook answers from what is local without touching the mount (saves go pending, searches are stale,
reads come from the cache), and the hooks exit 0 with at most one line. A process whose store call is still blocked
in the kernel ends all the same once its output is written.

The times asked of it (first search within 6 s, later ones within 1.5 s) are measured by `bench/outage.py`; here
the bounds, scaled by the machine's load, only tell a bounded wait from a hang (the commands' budget is 20 s and
more), and "at once" is proved by the outage record's failures staying at one (no later command met the mount).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import hung_mount
import pytest

import tools

HOOKS = [
    ("hook", "session-start", "--agent", "claude"),
    ("hook", "session-start", "--agent", "codex"),
    ("hook", "stop", "--agent", "claude"),
    ("hook", "stop", "--agent", "codex"),
    ("hook", "session-end", "--agent", "claude"),
]


@pytest.fixture
def mount(tmp_path: Path):
    if (why := hung_mount.missing()) is not None:
        tools.missing(f"a hung folder store needs FUSE: {why}")
    source = tmp_path / "store-source"
    source.mkdir(mode=0o700)
    found = hung_mount.HungMount(source, tmp_path / "store")
    yield found
    found.stop()


def _timed(machine, *args: str, input: str = "{}", env: dict[str, str] | None = None):
    started = time.monotonic()
    result = machine.run(*args, input=input, env=env, process=True, timeout=120)
    return result, time.monotonic() - started


def _wait_over(machine) -> None:
    """As if the outage's wait had passed: its end moved to the past, its count kept."""
    record = json.loads(machine.outage.read_text())
    machine.outage.write_text(json.dumps({**record, "until": time.time() - 1}))


def _failures(machine) -> int:
    return json.loads(machine.outage.read_text())["failures"]


def test_a_hung_folder_store_costs_the_first_search_only(machine, mount):
    machine.setup(f"file://{mount.mount}")
    for agent in ("claude", "codex"):
        tools.exited(machine.run("sync", "enable", "--agent", agent))
    saved = machine.save("# Pool size\n\nThe connection pool holds 8 sockets.", "--title", "Pool size")
    tools.exited(saved)
    fresh = machine.run("search", "pool", "--json", process=True)
    assert fresh.json["freshness"]["status"] == "fresh", fresh.out
    mount.hang()

    first, seconds = _timed(machine, "search", "pool", "--json")
    tools.exited(first)
    assert first.json["freshness"]["status"] == "stale" and first.json["freshness"]["reason"] == "offline", first.out
    assert [r["id"] for r in first.json["results"]] == [saved.json["id"]]  # the cache answers
    assert seconds < tools.scaled(12), seconds  # a hang detector: the budget is 20 s and more
    record = json.loads(machine.outage.read_text())
    assert record["bucket"] == f"file://{mount.mount}" and record["failures"] == 1, record
    assert "did not answer" in record["detail"], record

    later, seconds = _timed(machine, "search", "pool", "--json")
    tools.exited(later)
    assert (
        later.json["freshness"]["status"] == "stale"
        and "the folder store has not answered since" in (later.json["freshness"]["detail"])
    ), later.out
    assert seconds < tools.scaled(8), seconds

    pending, _ = _timed(machine, "save", "--json", "--title", "Socket limit", input="Raise the socket limit.")
    tools.exited(pending, 75)
    assert pending.json["status"] == "pending" and "has not answered since" in pending.json["message"], pending.out

    read, _ = _timed(machine, "read", saved.json["id"], "--json")
    tools.exited(read)
    assert read.json["source"] == "cache"

    status, _ = _timed(machine, "status", "--json")
    tools.exited(status)
    assert status.json["outage"] is not None, status.out

    for hook in HOOKS:
        result, seconds = _timed(machine, *hook)
        assert result.code == 0, (hook, result.err)
        assert len(result.err.splitlines()) <= 1 and len(result.out.splitlines()) <= 1, (hook, result.out, result.err)
        assert seconds < tools.scaled(8), (hook, seconds)
    assert _failures(machine) == 1  # none of them met the mount: they answered from the outage memory


def test_hooks_leave_the_probe_of_a_store_that_did_not_answer_to_a_process_nobody_waits_for(machine, mount):
    machine.setup(f"file://{mount.mount}")
    mount.hang()
    pending, _ = _timed(machine, "save", "--json", "--title", "Socket limit", input="Raise the socket limit.")
    tools.exited(pending, 75)  # kept in the outbox, pending, the mount given up on
    assert _failures(machine) == 1

    _wait_over(machine)  # the outage's wait is over: the store may be asked again, but not by a hook
    stop, _ = _timed(machine, "hook", "stop", "--agent", "claude")
    assert stop.code == 0 and len(stop.out.splitlines()) <= 1 and not stop.err, stop
    record = json.loads(machine.outage.read_text())
    assert record["failures"] == 1 and "probed" in record, record  # the hook started the probe and asked nothing
    # the probe, in a process of its own, meets the silence and records the next, longer wait
    assert tools.until(lambda: _failures(machine) == 2, tools.scaled(30)), machine.outage.read_text()


def test_an_online_search_on_a_hung_folder_store_exits_at_its_budget(machine, mount):
    """Before, its results were printed and the process never ended: its call stayed blocked in a thread."""
    machine.setup(f"file://{mount.mount}")
    saved = machine.save("# Pool size\n\nThe connection pool holds 8 sockets.", "--title", "Pool size")
    tools.exited(saved)
    tools.exited(machine.run("search", "pool", "--json", process=True))
    mount.hang()
    budget = 8
    started = time.monotonic()
    proc = machine.popen("search", "pool", "--online", "--json", env={"AGENT_MEMORY_TIMEOUT": str(budget)})
    try:
        proc.wait(timeout=tools.scaled(budget + 10))  # the process itself, not only its output
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"search --online did not exit:\nstdout: {out.decode()[-2000:]}\nstderr: {err.decode()[-2000:]}")
    seconds = time.monotonic() - started
    out, err = proc.communicate(timeout=30)  # its output ends with it: no child holds it open
    assert proc.returncode == 0, (out, err)
    found = json.loads(out)
    assert found["freshness"]["status"] == "stale" and [r["id"] for r in found["results"]] == [saved.json["id"]]
    assert seconds < tools.scaled(budget + 6), seconds  # its budget, and the stat of the store's check before it
    assert _failures(machine) == 1, machine.outage.read_text()


def test_a_search_after_the_wait_asks_nothing_in_the_foreground_and_its_probe_does(machine, mount):
    machine.setup(f"file://{mount.mount}")
    saved = machine.save("# Pool size\n\nThe connection pool holds 8 sockets.", "--title", "Pool size")
    tools.exited(saved)
    mount.hang()
    first, _ = _timed(machine, "search", "pool", "--json")
    assert first.json["freshness"]["reason"] == "offline" and _failures(machine) == 1, first.out

    _wait_over(machine)
    later, seconds = _timed(machine, "search", "pool", "--json")
    tools.exited(later)
    assert later.json["freshness"]["status"] == "stale", later.out
    assert "tries it again in the background now" in later.json["freshness"]["detail"], later.out
    assert [r["id"] for r in later.json["results"]] == [saved.json["id"]]
    record = json.loads(machine.outage.read_text())
    assert record["failures"] == 1 and "probed" in record, record  # it started the probe and asked nothing
    assert seconds < tools.scaled(4), seconds  # a hang detector: a question to the mount costs 4 s and more
    again, _ = _timed(machine, "search", "pool", "--json")  # while the probe runs: down all the same, no second probe
    assert (
        again.json["freshness"]["status"] == "stale"
        and json.loads(machine.outage.read_text())["probed"] == (record["probed"])
    ), again.out
    assert tools.until(lambda: _failures(machine) == 2, tools.scaled(30)), machine.outage.read_text()


@pytest.mark.slow
# its checkout outside /tmp: a parallel test's Codex sandbox makes /tmp a repository for a moment, and Claude Code's
# hooks then see a folder mapped to no project, which syncs nothing and never meets the mount (see conftest)
@pytest.mark.outside_tmp
@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_real_turns_on_a_hung_folder_store_end_in_their_time_and_say_no_hook_failed(runtime, machine, mount):
    from agent_clis import CLIS
    from model_servers import Say

    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        store = f"file://{mount.mount}"
        tools.exited(machine.run("bootstrap", "--project", "demo", "--bucket", store, "--agent", runtime, "--hooks"))
        tools.exited(machine.run("sync", "enable", "--agent", runtime))
        tools.exited(machine.save("# Pool size\n\nThe connection pool holds 8 sockets.", "--title", "Pool size"))
        mount.hang()
        model.script(Say("First answer."), Say("Second answer."))
        started = time.monotonic()
        first = cli.run("Hello.")
        first_seconds = time.monotonic() - started
        tools.exited(first)
        started = time.monotonic()
        second = cli.run("Again.")
        second_seconds = time.monotonic() - started
        tools.exited(second)
        model.assert_played()
    for run in (first, second):
        shown = run.out + run.err
        assert "Hook cancelled" not in shown and "Failed" not in shown, shown[-2000:]
        if runtime == "codex":  # it says how each hook ended (Claude Code says only what failed)
            assert "hook: SessionStart Completed" in run.err and "hook: Stop Completed" in run.err, run.err[-2000:]
    # before: 47-48 s per Claude Code turn and 10.5 s per Codex turn, every turn; a hang detector, scaled by load
    assert first_seconds < tools.scaled(30) and second_seconds < tools.scaled(20), (first_seconds, second_seconds)
    assert _failures(machine) == 1  # the first hook that met the mount recorded it; no later one touched it


def test_a_stat_left_blocked_in_the_mount_holds_none_of_the_commands_descriptors(tmp_path, mount):
    """A stat's child blocked in a hung mount must hold no pipe of the command (its output, which the agent reads to
    its end; a worker's pipe, whose end that worker would never see) and no lock."""
    from agent_memory.store.bounded import Question

    mount.hang()
    kept = os.open(tmp_path / "lock", os.O_CREAT | os.O_RDWR, 0o600)
    question = Question(mount.mount)
    try:
        assert question.answer(1.0) is None  # blocked in the mount
        held = {os.readlink(f"/proc/{question.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{question.pid}/fd")}
        assert str(tmp_path / "lock") not in held, held
        assert all(path.startswith("pipe:") or path == os.devnull for path in held), held
        assert len([path for path in held if path.startswith("pipe:")]) == 1, held  # its own answer's
    finally:
        question.close()
        os.close(kept)


def test_the_first_hook_to_meet_the_hang_records_it_however_short_its_budget(machine, mount):
    """A hook's budget shorter than the time a command gives the folder to answer (a long AGENT_MEMORY_TIMEOUT, a
    loaded machine): the hook still hears the folder out within its own budget, and records the outage."""
    machine.setup(f"file://{mount.mount}")
    mount.hang()
    pending, _ = _timed(machine, "save", "--json", "--title", "Socket limit", input="Raise the socket limit.")
    tools.exited(pending, 75)
    machine.outage.unlink()  # as if no command had met the hang yet: the Stop hook's retry is the first
    env = {"AGENT_MEMORY_HOOK_BUDGET": "1", "AGENT_MEMORY_TIMEOUT": "120"}  # a command would wait 8 s, twice
    stop, seconds = _timed(machine, "hook", "stop", "--agent", "claude", env=env)
    assert stop.code == 0 and len(stop.err.splitlines()) <= 1 and len(stop.out.splitlines()) <= 1, stop
    record = json.loads(machine.outage.read_text())
    assert record["failures"] == 1 and "did not answer" in record["detail"], record
    assert seconds < tools.scaled(8), seconds  # a hang detector: a command's hearing alone would take 16 s


@pytest.mark.parametrize("seconds", [1.0, 0.2])
def test_a_call_left_little_time_asks_a_stat_beside_it_and_a_hung_folder_answers_neither(
    tmp_path, mount, monkeypatch, seconds
):
    """Left less than the hearing time, a call cannot ask after a silence: the stat asked beside it tells a hung folder
    (neither answers: the outage is recorded) from a slow one. Left less than MIN_VERDICT, the call gives no verdict
    and a probe nobody waits for asks the folder with time of its own."""
    from agent_memory.store import bounded, outage
    from agent_memory.store.budget import Budget
    from agent_memory.store.local import FolderStore

    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "home"))
    spawned: list[str] = []
    monkeypatch.setattr("agent_memory.store.outage.probe_later", spawned.append)
    mount.hang()
    store = bounded.BoundedStore(FolderStore(mount.mount), mount.mount, Budget(seconds))
    with pytest.raises(bounded.StoreError) as raised:
        store.read("notes/a.md")
    uri = f"file://{mount.mount}"
    if seconds >= bounded.MIN_VERDICT:
        assert raised.value.lasting and outage.current(uri) is not None, raised.value.detail
        assert spawned == []
    else:
        assert not raised.value.lasting and outage.current(uri) is None, raised.value.detail
        assert spawned == [uri]
    with pytest.raises(bounded.StoreError):  # the command's later calls fail at once
        store.read("notes/b.md")
    store.close()


@pytest.mark.parametrize("command", [("config", "set", "bucket"), ("bootstrap", "--project", "demo", "--bucket")])
def test_setting_up_on_a_hung_folder_store_says_so_and_changes_nothing(machine, command, mount):
    """Before, `config set bucket` and `bootstrap` asked the folder's stat in the foreground and hung with it."""
    mount.hang()
    before = {path: path.read_bytes() for path in machine.state.rglob("*") if path.is_file()}
    budget = 4
    result, seconds = _timed(machine, *command, f"file://{mount.mount}", env={"AGENT_MEMORY_TIMEOUT": str(budget)})
    assert result.code == 1, (result.out, result.err)
    assert "did not answer a stat" in result.err and "nothing was changed" in result.err, result.err
    assert f"Next: check that the share is mounted and answers (ls {mount.mount})" in result.err, result.err
    assert seconds < tools.scaled(budget + 6), (seconds, result.err)
    after = {path: path.read_bytes() for path in machine.state.rglob("*") if path.is_file()}
    assert after == before  # no bucket set, nothing written
    assert "bucket" not in machine.run("config", "show", "--json").out
