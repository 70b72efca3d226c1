"""agent-memory's own files cannot hold it hostage: a FIFO, a link to `/dev/zero` or a file far larger than any it
writes, planted as each of its state files (an agent's shell can write those folders), makes no command and no hook
wait or read it whole. Every command finishes, says what is damaged (`status`, or the command's own error with its
`Next:` line), and both hooks exit 0.

Each command runs as a real process: a subprocess timeout is the hang detector (generous: the machine is shared),
never a measure of speed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tools

HUGE = 2 << 30  # a sparse file: 2 GiB that cost no disk, and would cost a command its memory if read whole
HANG = 90  # seconds before a command counts as hung (a loaded machine runs one in a few)

# each state file, relative to AGENT_MEMORY_HOME; `{cache}` is the project's cache, `{op}` the pending note's folder
FILES = {
    "config": "config/config.json",
    "plan": "state/outbox/{op}/plan.json",
    "object": "state/outbox/{op}/objects/0",
    "backoff": "state/retry-backoff.json",
    "outage": "state/outage.json",
    "reminded": "state/reminded-sessions",
    "stands": "{cache}/stands.json",
    "refresh": "{cache}/refresh.json",
    "checksums": "{cache}/checksums",
    "skills index": "{bucket_cache}/skills/index.json",
}
KINDS = ("fifo", "link to /dev/zero", "oversized")


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:
            handle.truncate(HUGE)


@pytest.fixture
def lived_in(ready, folder_store):
    """A machine on a folder store with a shared and cached note, a pending one, and every record written once."""
    saved = ready.save("# Pool size\n\nThe connection pool holds 8 sockets.")
    tools.exited(saved)
    assert ready.run("search", "pool", "--json").json["freshness"]["status"] == "fresh"
    tools.exited(ready.run("search", "--skills", "--json"))  # the skills index
    store = Path(folder_store.removeprefix("file://"))
    store.rename(store.with_name("away"))  # an unmounted drive: the next save stays pending
    pending = ready.save("Kept here while the drive is away.")
    store.with_name("away").rename(store)
    tools.exited(pending, 75)
    event = json.dumps({"session_id": "s-1", "source": "startup", "cwd": str(ready.work)})
    tools.exited(ready.run("hook", "session-start", "--agent", "claude", input=event))
    [cache] = (ready.state / "cache").glob("*/projects/demo")
    places = {
        "op": f"note-{pending.json['id']}",
        "cache": cache.relative_to(ready.state),
        "bucket_cache": cache.parent.parent.relative_to(ready.state),
    }
    return ready, saved.json, places


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(FILES))
def test_a_planted_state_file_hangs_nothing_and_is_told(lived_in, name, kind):
    machine, saved, places = lived_in
    target = machine.state / FILES[name].format(**places)
    _plant(target, kind)

    def run(*args: str, input: str = "") -> object:
        return machine.run(*args, input=input, process=True, timeout=HANG)

    status = run("status", "--json")  # first: the Stop hook's success would end the hooks' wait, planted or not
    event = json.dumps({"session_id": "s-2", "source": "startup", "cwd": str(machine.work)})
    for hook in ("session-start", "stop"):
        done = run("hook", hook, "--agent", "claude", input=event)
        tools.exited(done, about=(hook, done.err))  # a hook never fails a session
        assert len(done.err.splitlines()) <= 1, done.err
    results = [
        run("search", "pool", "--json"),
        run("search", "pool", "--offline", "--json"),
        run("read", saved["id"], "--json"),
        run("pending", "--json"),
        run("save", "--json", input="Saved beside a planted file."),
    ]
    if name == "config":  # nothing that needs the configuration works: each says which file and how to fix it
        for result in [status, *results[:3], results[4]]:
            tools.exited(result, 1)
            assert str(target) in result.err and "\nNext: " in result.err, result.err
        tools.exited(results[3])  # `pending` lists the outbox, which needs no configuration
        return
    tools.exited(status)
    if name in ("plan", "object"):  # the pending upload is damaged: listed as such, its bytes kept
        [damaged] = status.json["damaged"]
        assert str(target) in damaged["problem"], damaged
    else:
        told = {item["file"]: item for item in status.json["damaged_state"]}
        assert str(target) in told, status.json["damaged_state"]
        assert told[str(target)]["next"].startswith(("rm ", "mv ")), told
    for result in results:
        tools.exited(result, (0, 1, 75), about=(result.code, result.err))
        if result.code == 1:
            assert "\nNext: " in result.err, result.err
    if name == "checksums":  # what decides which cached notes are shown: the cache's readers stop and name it
        for result in results[:3]:
            tools.exited(result, 1)
            assert str(target) in result.err, result.err
        return
    found, offline, read = (result.json for result in results[:3])
    assert saved["id"] in [r["id"] for r in found["results"]]
    assert saved["id"] in [r["id"] for r in offline["results"]]
    assert read["id"] == saved["id"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_planted_file_in_an_installed_skill_hangs_nothing(machine, folder_store, kind):
    """The core skill bootstrap installed: its install marker, and a file beside it, planted as each kind."""
    set_up = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json", process=True)
    tools.exited(set_up)
    [installed] = (machine.home / ".claude" / "skills").glob("*/.agent-memory-skill.json")
    folder = installed.parent
    before = machine.run("status", "--json", process=True, timeout=HANG)
    assert [s["path"] for s in before.json["skills"] if s["agent"] == "claude"] == [str(folder)]

    _plant(folder / "planted.md", kind)  # beside what was installed: the skill now differs from it
    edited = machine.run("status", "--json", process=True, timeout=HANG)
    tools.exited(edited)
    [claude] = [s for s in edited.json["skills"] if s["agent"] == "claude"]
    assert claude["modified"] is True

    _plant(installed, kind)  # the marker itself: the folder no longer counts as one we installed
    told = machine.run("status", "--json", process=True, timeout=HANG)
    tools.exited(told)
    assert [s for s in told.json["skills"] if s["agent"] == "claude"] == []
    event = json.dumps({"session_id": "s-3", "source": "startup", "cwd": str(machine.work)})
    for hook in ("session-start", "stop"):
        tools.exited(machine.run("hook", hook, "--agent", "claude", input=event, timeout=HANG))


@pytest.mark.parametrize(
    ("name", "planted"),
    [
        ("refresh", "[1]"),  # valid JSON, not an object
        ("cache report", '"a string"'),
        ("plan attempts", None),  # a plan edited by hand: its count of attempts is text
        ("sync record", None),  # a folder record whose last pull lists no files but a number
    ],
)
def test_a_record_of_the_wrong_shape_crashes_nothing(lived_in, name, planted):
    """Well-formed JSON of another shape, in a record of ours: every command and hook reads it as damaged (told, or
    started again), never with a traceback."""
    machine, saved, places = lived_in
    cache = machine.state / str(places["cache"])
    if name == "refresh":
        (cache / "refresh.json").write_text(planted)
    elif name == "cache report":
        (cache / "report.json").write_text(planted)
    elif name == "plan attempts":
        plan = machine.state / "state" / "outbox" / str(places["op"]) / "plan.json"
        plan.write_text(json.dumps({**json.loads(plan.read_text()), "attempts": "x"}))
    else:
        tools.exited(machine.run("sync", "enable", "--agent", "claude"))
        tools.exited(machine.run("sync", "now"))
        for record in (machine.state / "state" / "sync").rglob("folders/*.json"):
            value = json.loads(record.read_text())
            record.write_text(json.dumps({**value, "recent": {"at": 9e12, "pulled": 5}}))
    event = json.dumps({"session_id": "s-3", "source": "startup", "cwd": str(machine.work)})
    for args, stdin in (
        (("status", "--json"), ""),
        (("search", "pool", "--json"), ""),
        (("pending", "--json"), ""),
        (("hook", "session-start", "--agent", "claude"), event),
        (("hook", "stop", "--agent", "claude"), event),
    ):
        done = machine.run(*args, input=stdin, process=True, timeout=HANG)
        assert "Traceback" not in done.err and "Unexpected" not in done.err, (args, done.err)
        tools.exited(done, (0, 1, 75), about=args)
    if name == "plan attempts":
        damaged = machine.run("pending", "--json").json["damaged"]
        assert [item["problem"] for item in damaged] and "attempts" in damaged[0]["problem"], damaged
