"""A Hub that hangs costs one wait, not one per command: the first search of an outage records it, every later
search, save and hook answers at once from what is local (stale results, a pending note) without a request, until
the wait is over, `--online` or an explicit retry tries, or a success anywhere ends it. Concurrent failures count
once, the outage's and the hooks' alike. A save or checkpoint that meets the outage first goes pending within
seconds and records it; a Hub that is slow but answers is waited for.

Run against the Hub emulator hung on every endpoint (it accepts connections and never answers). The times asked
of it (first search and first save within 6 s, later ones within 1.5 s) are measured by `bench/outage.py`; here a
bound far below the budget only detects a wait for it, and "at once" is proved by the emulator receiving no request
at all.
"""

from __future__ import annotations

import json
import time

import tools
from agent_memory.store import budget
from conftest import BUCKET
from hub_emulator import ENDPOINTS


def _outage(machine) -> dict:
    return json.loads(machine.outage.read_text())


def _wait_over(machine) -> None:
    """As if the outage's wait had passed: its end moved to the past, its count kept."""
    machine.outage.write_text(json.dumps({**_outage(machine), "until": time.time() - 1}))


def _seeded(alice, hub):
    """A note saved and cached while the Hub answers, and the cache following the change feed."""
    saved = alice.save("# Pool size\n\nThe connection pool holds 8 sockets.", "--title", "Pool size")
    tools.exited(saved)
    found = alice.run("search", "pool", "--json", process=True)
    assert found.json["freshness"]["status"] == "fresh", found.err
    return saved.json


def test_a_hung_hub_costs_the_first_search_only(alice, hub):
    saved = _seeded(alice, hub)
    hub.hang()

    started = time.monotonic()
    first = alice.run("search", "pool", "--json", process=True, timeout=60)
    first_seconds = time.monotonic() - started
    tools.exited(first)
    assert first.json["freshness"]["status"] == "stale" and first.json["freshness"]["reason"] == "offline", first.out
    assert [r["id"] for r in first.json["results"]] == [saved["id"]]  # the cache answers
    assert first_seconds < 15, first_seconds  # a hang detector only: the budget is 20 s (bench/outage.py times it)
    record = _outage(alice)
    assert record["failures"] == 1 and record["bucket"] == f"hf://buckets/{BUCKET}"
    assert 25 <= record["until"] - time.time() <= 30

    hub.reset_requests()
    later = alice.run("search", "pool", "--json", process=True)
    tools.exited(later)
    assert later.json["freshness"]["status"] == "stale"
    assert [r["id"] for r in later.json["results"]] == [saved["id"]]
    detail = later.json["freshness"]["detail"]
    assert "tries it again from" in detail and "--online" in detail and "--offline" in detail, detail
    assert "Results come from the local cache only" in later.err and "--offline" in later.err

    pending = alice.run("save", "--json", "--title", "Socket limit", input="Raise the socket limit.", process=True)
    tools.exited(pending, 75)
    assert pending.json["status"] == "pending"
    assert (
        pending.json["next"]
        == f"check this machine's network, then run: agent-memory pending retry {pending.json['id']}"
    )
    assert "tries it again from" in pending.json["message"]
    checkpoint = alice.run("save", "--json", "--kind", "checkpoint", input="Where I stopped.", process=True)
    tools.exited(checkpoint, 75)
    assert checkpoint.json["status"] == "pending"

    read = alice.run("read", saved["id"], "--json", process=True)  # a cached note needs no network
    tools.exited(read)
    assert read.json["source"] == "cache"
    missing = alice.run("read", "20260101-000000-000000-0000000000", process=True)
    tools.exited(missing, 1)
    assert "tries it again from" in missing.err and "\nNext: " in missing.err

    status = alice.run("status", "--json", process=True).json["outage"]
    assert status["failures"] == 1 and status["next"] == "agent-memory search --online", status
    stale = alice.run("search", "socket limit", "--json", process=True)
    assert [(r["id"], r["pending"]) for r in stale.json["results"]] == [(pending.json["id"], True)]
    assert hub.requests == []  # every command after the first answered without asking the Hub
    assert _outage(alice)["failures"] == 1


def _first_save_of_an_outage(alice, hub, *args: str) -> bytes:
    """A save (`args`: of a kind) against a Hub hung on every endpoint, with no outage recorded: it goes pending,
    with its retry line, long before its network budget, and records the outage; the Hub back, its retry uploads
    the very note (its bytes are returned)."""
    body = f"Saved as the Hub hung ({' '.join(args) or 'a note'})."
    # what the save waited before it went pending; it needs a few seconds now. The save hears the Hub for a fifteenth
    # of its budget, twice (`hub.hearing_seconds`), so that a quarter of it still tells the two apart; 30 s is the
    # least budget whose fifteenth is that hearing window (2 s), and every second more costs this test 2/15 s
    budget = tools.scaled(30)
    hub.hang()
    started = time.monotonic()
    saved = alice.run("save", "--json", *args, input=body, env={"AGENT_MEMORY_TIMEOUT": f"{budget:.0f}"}, process=True)
    seconds = time.monotonic() - started
    tools.exited(saved, 75)
    assert saved.json["status"] == "pending", saved.out
    assert saved.json["next"].endswith(f", then run: agent-memory pending retry {saved.json['id']}"), saved.out
    assert seconds < budget / 4, seconds  # a hang detector only: bench/outage.py times it
    record = _outage(alice)
    assert record["failures"] == 1 and record["bucket"] == f"hf://buckets/{BUCKET}" and record["reason"] == "offline"
    assert "no answer at all" in record["detail"], record

    hub.reset_requests()
    later = alice.run("save", "--json", *args, input="And the next one.", process=True)
    tools.exited(later, 75)
    assert hub.requests == []  # the outage is what later saves meet: at once, without a request

    hub.clear_faults()
    retried = alice.run("pending", "retry", saved.json["id"], "--json")
    tools.exited(retried)
    assert retried.json["status"] == "saved" and retried.json["id"] == saved.json["id"], retried.out
    uploaded = hub.read_file(BUCKET, retried.json["path"])
    assert uploaded.endswith(body.encode() + b"\n"), uploaded
    assert not alice.outage.exists()  # the success ended it
    return uploaded


def test_the_first_save_of_an_outage_goes_pending_within_seconds_and_records_it(alice, hub):
    _first_save_of_an_outage(alice, hub)


def test_the_first_checkpoint_of_an_outage_goes_pending_within_seconds_and_records_it(alice, hub):
    uploaded = _first_save_of_an_outage(alice, hub, "--kind", "checkpoint")
    assert b"\nkind: checkpoint\n" in uploaded.split(b"\n---\n")[0], uploaded


def test_a_slow_hub_that_answers_is_waited_for_and_a_large_note_uploads(alice, hub, monkeypatch):
    # the upload's token is slow to come (hf_xet's own request: this process sees nothing of it) for longer than a
    # call may hear nothing before it asks once more, while the Hub answers everything else: it is waited for
    # the commands' own budget (conftest's): the save hears nothing for a fifteenth of it, or 2 s, before it asks
    env = {"AGENT_MEMORY_TIMEOUT": f"{tools.scaled(20):.0f}"}
    monkeypatch.setenv("AGENT_MEMORY_TIMEOUT", env["AGENT_MEMORY_TIMEOUT"])
    slow = 1.5 * budget.hearing_seconds()  # what the save's command hears nothing for, and half as long again
    hub.fault("xet-write-token", "slow", times=0, seconds=slow)
    body = "A large note, written on a slow link.\n" + "The pool holds eight sockets.\n" * 33_000  # about 1 MB
    started = time.monotonic()
    saved = alice.run("save", "--json", "--title", "Slow link", input=body, env=env, process=True)
    seconds = time.monotonic() - started
    tools.exited(saved)
    assert saved.json["status"] == "saved", saved.out
    assert seconds >= slow  # it did wait past the silence after which the Hub is asked once more
    assert ("GET", "info") in {(method, endpoint) for method, endpoint, _path in hub.requests}  # one more request
    assert hub.read_file(BUCKET, saved.json["path"]).endswith(body.encode())
    assert not alice.outage.exists()

    hub.clear_faults()
    # the commit itself slow to answer (within the HTTP client's 20 s for an answer to begin): no different
    hub.fault("batch", "slow", times=0, seconds=min(slow, 12.0))
    again = alice.run("save", "--json", "--title", "Slow commit", input="Committed slowly.", env=env, process=True)
    tools.exited(again)
    assert again.json["status"] == "saved" and not alice.outage.exists(), again.out


def test_once_the_wait_is_over_a_probe_nobody_waits_for_tries_the_hub_and_finds_it_healthy(alice, hub):
    _seeded(alice, hub)
    hub.hang()
    assert alice.run("search", "pool", "--json", process=True, timeout=60).json["freshness"]["status"] == "stale"

    _wait_over(alice)  # still hung: the search answers from the cache at once, its probe tries once more
    again = alice.run("search", "pool", "--json", process=True, timeout=60)
    assert again.json["freshness"]["status"] == "stale", again.out
    assert "tries it again in the background now" in again.json["freshness"]["detail"], again.out
    assert _outage(alice)["failures"] == 1 and "probed" in _outage(alice)  # the search asked nothing itself
    # the probe, in a process of its own, meets the silence and records the next, longer wait
    assert tools.until(lambda: _outage(alice)["failures"] == 2, tools.scaled(30)), alice.outage.read_text()
    assert 50 <= _outage(alice)["until"] - time.time() <= 60

    hub.clear_faults()  # the Hub is back: nothing asks it before the wait is over
    hub.reset_requests()
    assert alice.run("search", "pool", "--json").json["freshness"]["status"] == "stale"
    assert hub.requests == []
    _wait_over(alice)
    waiting = alice.run("search", "pool", "--json", process=True)
    assert waiting.json["freshness"]["status"] == "stale", waiting.out  # the probe, not the search, asks it
    assert tools.until(lambda: not alice.outage.exists(), tools.scaled(30))  # the probe's success ended it
    healthy = alice.run("search", "pool", "--json")
    assert healthy.json["freshness"]["status"] == "fresh", healthy.out
    assert alice.run("status", "--json").json["outage"] is None


def test_online_and_an_explicit_retry_always_try_and_a_success_ends_the_outage(alice, hub):
    _seeded(alice, hub)
    hub.hang()
    assert alice.run("search", "pool", "--json", process=True, timeout=60).json["freshness"]["status"] == "stale"
    saved = alice.run("save", "--json", input="Kept during the outage.", process=True)
    tools.exited(saved, 75)

    hub.clear_faults()
    hub.reset_requests()
    online = alice.run("search", "pool", "--online", "--json")
    assert online.json["freshness"]["status"] == "fresh" and hub.requests != []
    assert not alice.outage.exists()
    assert alice.run("search", "pool", "--json").json["freshness"]["status"] == "fresh"

    hub.hang()  # a new outage, found by a save this time
    assert alice.run("search", "pool", "--json", process=True, timeout=60).json["freshness"]["status"] == "stale"
    hub.clear_faults()
    retried = alice.run("pending", "retry", "--json")  # the user's retry tries whatever the outage says
    tools.exited(retried)
    assert [r["status"] for r in retried.json["results"]] == ["saved"], retried.out
    assert not alice.outage.exists()

    hub.hang()
    assert alice.run("search", "pool", "--json", process=True, timeout=60).json["freshness"]["status"] == "stale"
    hub.clear_faults()
    again = alice.run("save", "--online", "--json", input="Saved with --online.")
    tools.exited(again)
    assert again.json["status"] == "saved"
    assert not alice.outage.exists()
    usage = alice.run("search", "pool", "--online", "--offline")
    tools.exited(usage, 2)
    assert "\nNext: " in usage.err


def test_concurrent_stop_hooks_that_fail_together_count_once(alice, hub):
    hub.fault("batch", "fail", times=0)
    tools.exited(alice.save("Kept while the Hub fails."), 75)
    hub.clear_faults()
    hub.hang()
    # six hooks start at once: what each has left for its upload must still be the time to hear the Hub (2 s)
    env = {"AGENT_MEMORY_HOOK_BUDGET": f"{tools.scaled(3):.0f}"}
    hooks = [alice.popen("hook", "stop", "--agent", agent, input=b"{}", env=env) for agent in ("codex", "claude") * 3]
    for proc in hooks:
        out = tools.exited(tools.finished(proc, timeout=120)).stdout
        assert out == b"" or list(json.loads(out)) == ["systemMessage"], out  # what it tells the user, if anything
    backoff = json.loads(alice.backoff.read_text())
    assert backoff["failures"] == 1, backoff  # six sessions ending a turn at once: one failure, a one-minute wait
    assert 50 <= backoff["until"] - time.time() <= 60
    assert _outage(alice)["failures"] == 1

    alice.wait_over()  # both waits
    hooks = [alice.popen("hook", "stop", "--agent", "codex", input=b"{}", env=env) for _ in range(3)]
    for proc in hooks:
        assert proc.wait(timeout=120) == 0
    assert json.loads(alice.backoff.read_text())["failures"] == 2  # the next interval's failures count once too
    # the hooks asked the Hub nothing: one of them started the one probe, which nobody waits for, and which records
    # the next interval's failure
    end = time.monotonic() + tools.scaled(30)
    while _outage(alice)["failures"] != 2 and time.monotonic() < end:
        time.sleep(0.1)
    assert _outage(alice)["failures"] == 2


def test_a_damaged_outage_record_means_no_outage(alice, hub):
    _seeded(alice, hub)
    record = alice.outage
    now = time.time()
    damages = (
        "{not json",
        json.dumps({"bucket": f"hf://buckets/{BUCKET}", "since": now, "until": now + 1e6, "failures": 1}),
        json.dumps(
            {"bucket": f"hf://buckets/{BUCKET}", "since": "x", "until": now + 20, "failures": 1, "reason": "offline"}
        ),
    )
    for damage in damages:
        record.write_text(damage)
        found = alice.run("search", "pool", "--json")
        assert found.json["freshness"]["status"] == "fresh", (damage, found.out)


def test_a_call_left_less_time_than_it_takes_to_hear_the_hub_records_no_outage(alice, hub):
    # a loaded machine spends most of a Stop hook's budget starting up and on the calls before the upload: the upload
    # is left less time than the Hub is given to answer anything (`hearing_seconds`), so its time running out says
    # nothing of the Hub; recorded as an outage, it would have sent the next commands offline from a healthy Hub
    offline = alice.save("Kept while this machine was offline.", env={"HF_HUB_OFFLINE": "1"})
    tools.exited(offline, 75)
    assert not alice.outage.exists()  # no network at all is no outage either
    hub.hang()
    env = {"AGENT_MEMORY_HOOK_BUDGET": "1"}  # under the hearing window, whatever the load (at least 2 s)
    assert budget.hearing_seconds() >= 2 * float(env["AGENT_MEMORY_HOOK_BUDGET"])
    stopped = alice.run("hook", "stop", "--agent", "claude", "--json", input="{}", env=env)
    tools.exited(stopped)
    assert [r["status"] for r in stopped.json["results"]] == ["pending"], stopped.out
    assert "too little to hear the Hub" in stopped.json["results"][0]["message"], stopped.out
    assert alice.backoff.exists()  # the hooks wait before their next retry, as after any failed one
    assert not alice.outage.exists()

    hub.clear_faults()
    found = alice.run("search", "offline", "--json")  # asks the Hub, which answers
    assert found.json["freshness"]["status"] == "fresh", found.out
    retried = alice.run("pending", "retry", "--json")
    tools.exited(retried)
    assert [r["status"] for r in retried.json["results"]] == ["saved"], retried.out


def test_after_a_500_the_outage_says_what_the_hub_answered(alice, hub):
    _seeded(alice, hub)
    for endpoint in ENDPOINTS:  # every request answered with a 500
        hub.fault(endpoint, "fail", status=500, times=0)
    first = alice.run("search", "pool", "--json", process=True)
    tools.exited(first)
    assert _outage(alice)["reason"] == "error", _outage(alice)
    later = alice.run("search", "pool", "--json", process=True)
    detail = later.json["freshness"]["detail"]
    assert "has failed since" in detail and "500" in detail, detail  # what it answered
    assert "has not answered" not in detail, detail
