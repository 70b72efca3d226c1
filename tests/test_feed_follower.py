"""The bucket's feed follower (`store.follow`, `store.follower`): with sync on and a Hub bucket, the SessionStart hook
starts a detached process that holds the bucket's change feed open; a session start that it shows nothing changed
for asks the bucket nothing and loads no Hub library, and any doubt (a killed follower, a feed that is not served,
a reset, a stalled stream, a damaged record) makes the session ask, losing nothing. Through the Hub emulator with
the real huggingface_hub, counting its requests; no follower outlives its test."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_import_paths import loaded
from test_sync import claude_folder, reminder, sync_now, two_machines

import followers
import tools
from conftest import BUCKET, Machine

pytestmark = pytest.mark.outside_tmp  # Claude Code's memory folders: see conftest's outside_tmp

SCOPE = "sync/claude/demo"  # the folder of the project's Claude Code memory in the bucket, as the follower counts it


def folder(machine: Machine) -> Path:
    return machine.state / "state" / "follow" / "hf--alice--memory"


def record(machine: Machine) -> dict | None:
    try:
        return json.loads((folder(machine) / "record.json").read_text())
    except (OSError, ValueError):
        return None


def wait_for(check: Callable[[], object], what: str, seconds: float = 20) -> object:
    """What `check` gives once it is true; fails after `seconds` (scaled with the machine's load)."""
    end = time.monotonic() + tools.scaled(seconds)
    while time.monotonic() < end:
        if found := check():
            return found
        time.sleep(0.05)
    raise AssertionError(f"waited {tools.scaled(seconds):.0f} s for {what}; the record: {record_text()}")


record_text: Callable[[], str] = lambda: ""  # noqa: E731 (set by each test for its failure messages)


def live(machine: Machine) -> dict | None:
    found = record(machine)
    return found if found and found.get("live") is True and found.get("since") else None


def asked(hub) -> list[str]:
    return [endpoint for _method, endpoint, _path in hub.requests]


def write_memory(machine: Machine, text: str) -> None:
    claude_folder(machine).mkdir(parents=True, exist_ok=True)
    (claude_folder(machine) / "MEMORY.md").write_text(text)
    sync_now(machine)


def quiet(machine: Machine, machine_b: Machine, hub, stream: float = 600) -> tuple[Machine, Machine]:
    """A on the bucket, B with a live follower and a refresh since its follow began: B's next session asks nothing."""
    global record_text
    hub.feed_stream_seconds = stream  # by default one stream for the whole test: its requests are only the hooks'
    a, b = two_machines(machine, machine_b, BUCKET)
    record_text = lambda: str(record(b))  # noqa: E731
    write_memory(a, "- one\n")
    assert "- one" in reminder(b)  # the first session starts the follower, and asks
    wait_for(lambda: live(b), "a live follower")
    reminder(b)  # its refresh began after the follow did
    hub.reset_requests()
    reminder(b)
    assert [endpoint for endpoint in asked(hub) if endpoint != "events"] == []  # (the follower's, if it reconnected)
    return a, b


def test_a_session_with_nothing_changed_asks_nothing_and_loads_no_hub_library(machine, machine_b, hub, tmp_path):
    _a, b = quiet(machine, machine_b, hub)
    event = json.dumps({"cwd": str(b.work), "hook_event_name": "SessionStart"})
    modules = loaded(b, tmp_path, "hook", "session-start", "--agent", "claude", stdin=event)
    assert "agent_memory.hooks.memory_sync" in modules and "agent_memory.store.follow" in modules  # it pulled
    assert not modules & {"huggingface_hub", "hf_xet", "httpx2", "agent_memory.store.hub", "subprocess"}
    assert hub.requests == []
    assert followers.running(b.state) == [record(b)["pid"]]


def test_what_another_machine_pushes_reaches_the_next_session(machine, machine_b, hub):
    a, b = quiet(machine, machine_b, hub)
    before = record(b)["changes"].get(SCOPE, 0)
    write_memory(a, "- one\n- two\n")
    wait_for(lambda: record(b)["changes"].get(SCOPE, 0) > before, "the follower to see the push")
    told = reminder(b)
    assert "- two" in told and "changed on another machine" in told
    assert (claude_folder(b) / "MEMORY.md").read_text() == "- one\n- two\n"
    assert "info" in asked(hub)
    hub.reset_requests()
    reminder(b)  # the pull learned it: quiet again
    assert hub.requests == []


def test_a_killed_follower_is_replaced_and_the_session_asks(machine, machine_b, hub):
    a, b = quiet(machine, machine_b, hub)
    pid = record(b)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not followers.running(b.state), "the follower to be gone")
    write_memory(a, "- one\n- while nobody followed\n")
    hub.reset_requests()
    assert "- while nobody followed" in reminder(b)
    assert "info" in asked(hub)
    wait_for(lambda: (found := live(b)) and found["pid"] != pid, "a new follower")
    assert followers.running(b.state) == [record(b)["pid"]]


def test_an_unavailable_feed_makes_every_session_ask_and_starts_no_follower_again(machine, machine_b, hub):
    global record_text
    hub.feed_off(501)
    a, b = two_machines(machine, machine_b, BUCKET)
    record_text = lambda: str(record(b))  # noqa: E731
    write_memory(a, "- one\n")
    assert "- one" in reminder(b)
    stopped = wait_for(lambda: (found := record(b)) and found.get("stopped"), "the follower to record the refusal")
    assert "501" in stopped["reason"] and stopped["until"] > time.time() + 600
    wait_for(lambda: not followers.running(b.state), "the follower to end")
    write_memory(a, "- one\n- two\n")
    hub.reset_requests()
    assert "- two" in reminder(b)
    assert "info" in asked(hub)
    time.sleep(tools.scaled(1))  # what a follower started by mistake would ask for by now
    assert "events" not in asked(hub) and not followers.running(b.state)


def test_a_reset_of_the_feed_starts_a_new_follow_and_the_session_asks(machine, machine_b, hub):
    a, b = quiet(machine, machine_b, hub)
    since = record(b)["since"]
    hub.feed_buffer(0)  # every change is dropped from the replay buffer before the stream sends it: `reset`
    write_memory(a, "- one\n- after the reset\n")
    wait_for(lambda: (found := live(b)) and found["since"] > since, "a new follow")
    hub.reset_requests()
    assert "- after the reset" in reminder(b)
    assert "info" in asked(hub)


def _stale(record: dict) -> bytes:
    return json.dumps({**record, "alive_at": time.time() - 100}).encode()  # no byte heard for 100 s: stalled


DAMAGE: dict[str, Callable[[dict], bytes]] = {
    "stalled": _stale,
    "truncated": lambda record: json.dumps(record).encode()[:40],
    "huge": lambda record: json.dumps({**record, "padding": "x" * 100_000}).encode(),
    "wrong types": lambda record: json.dumps({**record, "since": str(record["since"]), "changes": []}).encode(),
    "not live": lambda record: json.dumps({**record, "live": 1}).encode(),
    "a time from the future": lambda record: json.dumps({**record, "alive_at": time.time() + 3600}).encode(),
    "bad change time": lambda record: json.dumps({**record, "changes": {SCOPE: True}}).encode(),
}


@pytest.mark.parametrize("damage", [*DAMAGE, "link"])
def test_a_stalled_or_damaged_record_makes_the_session_ask(machine, machine_b, hub, damage, tmp_path):
    a, b = quiet(machine, machine_b, hub)
    pid = record(b)["pid"]
    os.kill(pid, signal.SIGSTOP)  # it holds its lock, and writes no record over ours
    try:
        file = folder(b) / "record.json"
        if damage == "link":
            target = tmp_path / "planted.json"
            target.write_text(file.read_text())
            file.unlink()
            file.symlink_to(target)
        else:
            file.write_bytes(DAMAGE[damage](json.loads(file.read_text())))
        hub.reset_requests()
        reminder(b)
        assert asked(hub) == ["info"]  # asked, and learned nothing changed
        assert followers.running(b.state) == [pid]  # it holds the lock: no other follower is started
    finally:
        os.kill(pid, signal.SIGCONT)


def test_two_session_starts_at_once_start_one_follower(machine, machine_b, hub):
    global record_text
    a, b = two_machines(machine, machine_b, BUCKET)
    record_text = lambda: str(record(b))  # noqa: E731
    write_memory(a, "- one\n")
    event = json.dumps({"cwd": str(b.work), "hook_event_name": "SessionStart"}).encode()
    starts = [b.popen("hook", "session-start", "--agent", "claude", "--json", input=event) for _ in range(3)]
    for start in starts:
        tools.exited(tools.finished(start, timeout=120))
    assert "- one" in (claude_folder(b) / "MEMORY.md").read_text()
    wait_for(lambda: live(b), "a live follower")
    wait_for(lambda: len(followers.running(b.state)) == 1, "the other followers to give way")
    assert followers.running(b.state) == [record(b)["pid"]]


@pytest.mark.parametrize("how", ["hub gone", "idle", "folder gone", "uninstall"])
def test_a_follower_ends_when_nothing_wants_it(machine, machine_b, hub, how):
    _a, b = quiet(machine, machine_b, hub)
    if how == "hub gone":
        hub.stop()
    elif how == "idle":
        old = time.time() - 2 * 3600
        os.utime(folder(b) / "wanted", (old, old))
    elif how == "uninstall":
        tools.exited(b.run("uninstall", "--json"))
    else:
        shutil.rmtree(folder(b))
    wait_for(lambda: not followers.running(b.state), "the follower to end")
    if how in ("folder gone", "uninstall"):
        assert not folder(b).exists()  # nothing made again
    else:
        assert record(b)["live"] is False and record(b)["since"] is None


def test_a_codex_session_asks_nothing_until_another_machines_memories_change(machine, machine_b, hub):
    """Codex's pull also delivers every other machine's Codex memories: the follower's silence must cover them all."""
    global record_text
    hub.feed_stream_seconds = 600
    a, b = two_machines(machine, machine_b, BUCKET, agent="codex")
    record_text = lambda: str(record(b))  # noqa: E731
    memory = a.home / ".codex" / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("- learned: the parser uses a lookahead of 2\n")
    sync_now(a)
    assert "lookahead of 2" in reminder(b, "codex")
    wait_for(lambda: live(b), "a live follower")
    reminder(b, "codex")
    hub.reset_requests()
    reminder(b, "codex")
    assert hub.requests == []
    memory.write_text("- learned: the parser uses a lookahead of 2\n- learned: releases are cut on Tuesdays\n")
    sync_now(a)
    wait_for(lambda: any(name.startswith("sync/codex/") for name in record(b)["changes"]), "the follower to see it")
    assert "releases are cut on Tuesdays" in reminder(b, "codex")
    hub.reset_requests()
    reminder(b, "codex")
    assert hub.requests == []


def test_the_record_stays_bounded_and_what_overflows_counts_for_every_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "state"))
    from agent_memory.store import follow
    from agent_memory.store.follower import Follower

    follower = Follower(follow.folder("hf://buckets/alice/memory"))
    follower.since, follower.live = time.time() - 10, True
    follower.saw([f"projects/p{i}/notes/n.md" for i in range(follow.MAX_KEYS + 50)])
    saved = json.loads((follower.where / "record.json").read_text())
    assert len(saved["changes"]) == follow.MAX_KEYS and saved["other"] is not None
    assert follow.Watch(saved, held=True).quiet([SCOPE], time.time() + 0.5)  # all of it before the refresh began
    assert not follow.Watch(saved, held=True).quiet([SCOPE], saved["other"])  # an overflow: any folder may have
    assert not follow.Watch(saved, held=False).quiet([SCOPE], time.time() + 0.5)  # no follower holds the lock

    follower.other = None
    follower.saw(["sync/" + "x" * 1000 + "/n.json"])  # a folder name too long to keep: counted as any change
    saved = json.loads((follower.where / "record.json").read_text())
    assert len((follower.where / "record.json").read_bytes()) < follow.MAX_RECORD and saved["other"] is not None
    assert not follow.Watch(saved, held=True).quiet([SCOPE], saved["other"])


def test_the_switch_turns_the_follower_off(machine, machine_b, hub):
    a, b = two_machines(machine, machine_b, BUCKET)
    b.own_env["AGENT_MEMORY_FOLLOW"] = "0"
    write_memory(a, "- one\n")
    assert "- one" in reminder(b)
    for _ in range(2):
        hub.reset_requests()
        reminder(b)
        assert asked(hub) == ["info"]  # every session asks, as before the follower, and nothing follows the feed
    assert not folder(b).exists() and not followers.running(b.state)


def test_a_session_that_checks_at_the_same_moment_is_not_taken_for_a_follower(machine, machine_b, hub):
    """A session finds a follower by its lock; another session looking at that lock at the same instant, after the
    follower died, must not pass for it (its record still looks live)."""
    import fcntl

    a, b = quiet(machine, machine_b, hub)
    os.kill(record(b)["pid"], signal.SIGKILL)
    wait_for(lambda: not followers.running(b.state), "the follower to be gone")
    write_memory(a, "- one\n- after the follower died\n")
    with open(folder(b) / "lock", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)  # what another session's look at the lock holds, for an instant
        hub.reset_requests()
        assert "- after the follower died" in reminder(b)
    assert "info" in asked(hub)


def test_a_stream_the_server_ends_is_resumed_at_its_cursor_and_the_follow_goes_on(machine, machine_b, hub):
    a, b = quiet(machine, machine_b, hub, stream=6)  # the server ends each stream with `reconnect` after 6 s
    since = record(b)["since"]
    hub.reset_requests()
    wait_for(lambda: asked(hub).count("events") >= 1 and live(b), "the follower to resume after a `reconnect`")
    assert record(b)["since"] == since  # the replay after its cursor covered the gap: one follow
    hub.reset_requests()
    reminder(b)
    assert [endpoint for endpoint in asked(hub) if endpoint != "events"] == []
    before = record(b)["changes"].get(SCOPE, 0)
    write_memory(a, "- one\n- across streams\n")
    wait_for(lambda: record(b)["changes"].get(SCOPE, 0) > before, "the follower to see the push")
    assert "- across streams" in reminder(b)
