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


def _until(check, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return check()


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
    assert _until(lambda: _failures(machine) == 2, tools.scaled(30)), machine.outage.read_text()
