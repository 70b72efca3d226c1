"""`agent-memory hook EVENT --agent codex|claude`: the reminder, the compaction pointer and the retry."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tools
from conftest import BUCKET

HF_BUCKET = f"hf://buckets/{BUCKET}"
HELPER = str(Path(sys.executable).parent / "agent-memory")
SECRET_BODY = "the body of this checkpoint must never reach a reminder: PLUM-42"


def hook(machine, event, payload=None, *, agent="codex", cwd=None, env=None, extra=()):
    stdin = payload if isinstance(payload, str) else json.dumps(payload or {"cwd": str(cwd or machine.work)})
    return machine.run("hook", event, "--agent", agent, *extra, input=stdin, cwd=cwd, env=env)


def context(result) -> str:
    """The additionalContext of a SessionStart hook's output, checking the envelope both runtimes accept (X4)."""
    tools.exited(result)
    assert result.err == "", result.err
    out = json.loads(result.out)
    assert list(out) == ["hookSpecificOutput"]
    assert list(out["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return out["hookSpecificOutput"]["additionalContext"]


def shown(result) -> str:
    """The user's message of a Stop hook: `{"systemMessage": ...}` on stdout, the only key (X5)."""
    tools.exited(result)
    assert result.err == "", result.err
    out = json.loads(result.out)
    assert list(out) == ["systemMessage"]
    return out["systemMessage"]


def test_reminder_names_the_project_and_says_when_to_search(ready):
    text = context(hook(ready, "session-start", {"cwd": str(ready.work), "source": "startup"}))
    first, trigger = text.splitlines()
    assert first == (
        "agent-memory: this session's memory project is demo (no notes in this machine's cache yet; a search also "
        "fetches what other machines saved)."
    )
    # absolute: the runtime's PATH may not have the helper
    assert trigger.startswith(
        f"If this task continues earlier work or depends on past decisions, first run: {HELPER} search 'KEYWORDS' "
    )
    assert len(text.encode()) < 2048  # nothing pending, no compaction


def test_reminder_uses_the_event_cwd_and_reads_stdin_defensively(ready, tmp_path):
    elsewhere = tmp_path / "unmapped"
    elsewhere.mkdir()
    # the event's cwd wins over the process's own
    text = context(hook(ready, "session-start", {"cwd": str(elsewhere)}, cwd=ready.work))
    assert "is not mapped to a project" in text and "Do not save memory from here" in text
    assert f"{HELPER} project map NAME {elsewhere}" in text
    for garbage in ("", "not json", "[1, 2]", '{"cwd": 42}'):
        result = hook(ready, "session-start", garbage)
        tools.exited(result)
        assert "memory project is demo" in json.loads(result.out)["hookSpecificOutput"]["additionalContext"]


def test_reminder_on_a_machine_that_is_not_set_up(machine):
    text = context(hook(machine, "session-start"))
    assert text == (
        "agent-memory is not set up on this machine, so this session has no memory. "
        f"The user can set it up with: {HELPER} bootstrap --project NAME"
    )


def test_compaction_points_at_the_newest_checkpoint_never_at_its_content(ready):
    older = ready.save("# Older\n\nold work", "--kind", "checkpoint", "--title", "Older checkpoint").json
    ready.save("# A plain note\n\nnot a checkpoint", "--title", "Plain note")
    newest = ready.save(SECRET_BODY, "--kind", "checkpoint", "--title", "Parser refactor, step 2 of 3").json
    assert older["status"] == newest["status"] == "saved"
    ready.run("search", "anything")  # the cache holds the notes

    fresh = context(hook(ready, "session-start", {"cwd": str(ready.work), "source": "startup"}))
    assert newest["id"] not in fresh and "checkpoint" not in fresh  # a fresh session gets no pointer

    compacted = context(hook(ready, "session-start", {"cwd": str(ready.work), "source": "compact"}, agent="claude"))
    lines = compacted.splitlines()
    assert "memory project is demo" in lines[0]
    created = ready.run("read", newest["id"]).out.split("created: ")[1].split("\n")[0].strip("'\"")
    assert lines[-1].startswith(
        f"The context was just compacted. This project's newest checkpoint is {newest['id']} "
        f'"Parser refactor, step 2 of 3" ({created}), saved by '
    )
    assert lines[-1].endswith(f", read it with: {HELPER} read {newest['id']}")
    assert "PLUM-42" not in compacted and older["id"] not in compacted


def test_a_damaged_pending_upload_is_named_in_the_right_number(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("A note whose plan gets damaged.")
    tools.exited(saved, 75)
    plan = alice.state / "state" / "outbox" / f"note-{saved.json['id']}" / "plan.json"
    plan.write_bytes(plan.read_bytes()[:40])
    text = context(hook(alice, "session-start"))
    assert f"1 pending upload is damaged and needs the user: {HELPER} pending" in text.splitlines()


def test_a_checkpoint_pending_on_this_machine_is_pointed_at_too(alice, hub):
    hub.fault("batch", "fail", times=0)
    pending = alice.save("body", "--kind", "checkpoint", "--title", "Saved while offline")
    tools.exited(pending, 75)
    compacted = context(hook(alice, "session-start", {"cwd": str(alice.work), "source": "compact"}))
    assert f'{pending.json["id"]} "Saved while offline"' in compacted
    assert (
        "1 upload saved on this machine is not shared yet (1 note); the Stop hook retries it after each turn on its own"
    ) in compacted.splitlines()  # Codex's sandbox without the consent: no command the model could not run
    tools.exited(alice.save("second body", "--title", "Also offline"), 75)
    claude = context(hook(alice, "session-start", {"cwd": str(alice.work), "source": "compact"}, agent="claude"))
    assert (
        "2 uploads saved on this machine are not shared yet (2 notes); the Stop hook retries them after each turn on "
        f"its own; to retry them now: {HELPER} pending retry"
    ) in claude.splitlines()


def test_a_long_title_keeps_the_reminder_under_2_kb(ready):
    title = "T" * 190
    saved = ready.save("body", "--kind", "checkpoint", "--title", title)
    tools.exited(saved)
    text = context(hook(ready, "session-start", {"cwd": str(ready.work), "source": "compact"}))
    assert len(text.encode()) <= 2000 and saved.json["id"] in text and "T" * 119 + "…" in text


def test_stop_with_nothing_pending_prints_nothing_and_loads_no_heavy_library(ready):
    result = hook(ready, "stop", {"cwd": str(ready.work), "hook_event_name": "Stop", "stop_hook_active": False})
    tools.exited(result)
    assert (result.out, result.err) == ("", "")
    for event in ("session-start", "stop"):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "agent_memory", "hook", event, "--agent", "claude"],
            input=json.dumps({"cwd": str(ready.work)}).encode(),
            capture_output=True,
            env=ready.env,
            cwd=ready.work,
            check=True,
        )
        imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
        assert "agent_memory.start" in imported  # the import log is really there
        heavy = {"huggingface_hub", "hf_xet", "yaml", "threading", "agent_memory.outbox.delivery"}
        assert not imported & heavy, event


def test_internal_errors_never_fail_the_session(ready):
    (ready.state / "state").mkdir(parents=True, exist_ok=True)
    (ready.state / "state" / "outbox").write_text("a file where the outbox folder should be")
    for event in ("session-start", "stop", "session-end"):
        result = hook(ready, event)
        tools.exited(result)
        assert result.out == ""
        assert len(result.err.splitlines()) == 1 and result.err.startswith(f"agent-memory hook: {event} failed: ")


@pytest.mark.parametrize(
    "argv",
    [["hook"], ["hook", "pre-tool-use", "--agent", "codex"], ["hook", "stop"], ["hook", "stop", "--agent", "cursor"]],
)
def test_a_wrong_hook_command_still_exits_0(ready, argv):
    result = ready.run(*argv, input="{}")
    tools.exited(result)
    assert result.out == ""
    assert result.err.startswith("agent-memory hook: ") and "usage: agent-memory hook" in result.err


def test_json_shows_what_the_hook_did(ready):
    result = hook(ready, "session-start", extra=("--json",))
    out = json.loads(result.out)
    assert set(out) == {"event", "agent", "context"} and out["agent"] == "codex" and "demo" in out["context"]
    stop = json.loads(hook(ready, "stop", extra=("--json",), agent="claude").out)
    assert stop == {"event": "stop", "agent": "claude", "results": [], "damaged": [], "waiting": 0}


def test_stop_retries_pending_uploads_once_the_bucket_is_back(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("# Finding\n\nThe parser needs a lookahead of 2.", "--title", "Parser lookahead")
    tools.exited(saved, 75)
    still = hook(alice, "stop", agent="claude")
    tools.exited(still)
    assert still.err == ""
    assert (
        shown(still) == "agent-memory: retried 1 pending upload: 0 shared, 1 still pending (see: agent-memory pending)"
    )
    waiting = hook(alice, "stop", agent="claude")  # the hooks wait after a failed retry, and say until when
    assert shown(waiting) == (
        "agent-memory: 1 upload not shared yet; the next retry is in about 1 minute (to retry now: agent-memory "
        "pending retry)"
    )

    hub.clear_faults()
    alice.wait_over()  # the failed retry made the hooks wait (see the backoff tests below)
    result = hook(alice, "stop")
    tools.exited(result)
    assert result.err == ""
    assert shown(result) == "agent-memory: retried 1 pending upload: 1 shared, 0 still pending"
    assert hook(alice, "stop").out == ""  # nothing waits any more: nothing to say
    assert [p for p in hub.list_paths(BUCKET) if "/notes/" in p] == [saved.json["path"]]
    assert alice.run("pending", "--json").json["notes"] == []


@pytest.mark.slow
def test_a_hanging_hub_costs_one_budget_per_interval_not_one_per_turn(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("body", "--title", "Saved while the Hub hangs")
    tools.exited(saved, 75)
    hub.clear_faults()
    hub.fault("batch", "hang", times=0, seconds=30)
    env = {"AGENT_MEMORY_HOOK_BUDGET": "2"}

    started = time.monotonic()
    first = hook(alice, "stop", agent="claude", env=env, extra=("--json",))
    assert first.json["results"][0]["status"] == "pending" and first.json["waiting"] == 0
    assert time.monotonic() - started >= 1.5  # the first stop spent its budget on the hanging Hub
    record = json.loads(alice.backoff.read_text())
    assert record["failures"] == 1 and 55 <= record["until"] - time.time() <= 60

    hub.reset_requests()
    for _ in range(5):
        turn = hook(alice, "stop", agent="claude", env=env, extra=("--json",))
        assert turn.json["results"] == [] and 50 <= turn.json["waiting"] <= 60, turn.json
        assert turn.err == ""  # nothing tried, nothing to say
    assert hub.requests == []  # five more turns cost no request, and no budget

    alice.wait_over()  # the wait is over: one more try, and a longer wait after it fails again
    again = hook(alice, "stop", agent="claude", env=env, extra=("--json",))
    assert again.json["results"][0]["status"] == "pending"
    record = json.loads(alice.backoff.read_text())
    assert record["failures"] == 2 and 115 <= record["until"] - time.time() <= 120

    hub.clear_faults()
    retried = alice.run("pending", "retry", "--json")  # the user's own retry always tries, and ends the wait
    tools.exited(retried)
    assert retried.json["results"][0]["status"] == "saved", retried.out
    assert not alice.backoff.exists()


def test_a_successful_save_ends_the_wait_and_a_damaged_record_means_no_wait(alice, hub):
    hub.fault("batch", "fail", times=0)
    tools.exited(alice.save("first", "--title", "First"), 75)
    tools.exited(hook(alice, "stop", agent="claude"))
    assert alice.backoff.exists()
    assert hook(alice, "stop", agent="claude", extra=("--json",)).json["waiting"] > 0

    hub.clear_faults()
    tools.exited(alice.save("second", "--title", "Second"))  # the bucket answers again
    assert not alice.backoff.exists()
    result = hook(alice, "stop", agent="claude", extra=("--json",))
    assert result.json["waiting"] == 0 and [r["status"] for r in result.json["results"]] == ["saved"]

    damages = ("{not json", json.dumps({"failures": "x", "until": 1e12}), json.dumps({"failures": 3, "until": 1e12}))
    for damage in damages:
        hub.fault("batch", "fail", times=1)
        tools.exited(alice.save("third", "--title", "Third"), 75)
        alice.backoff.write_text(damage)  # cut short, wrong types, or a wait longer than the longest
        result = hook(alice, "stop", agent="claude", extra=("--json",))
        assert result.json["waiting"] == 0 and [r["status"] for r in result.json["results"]] == ["saved"], damage


@pytest.mark.slow
def test_retry_stops_at_its_budget_and_leaves_the_rest_pending(alice, hub):
    hub.fault("batch", "fail", times=0)
    ids = [alice.save(f"note {n}", "--title", f"Note {n}").json["id"] for n in range(2)]
    hub.clear_faults()
    hub.fault("batch", "hang", times=0, seconds=60)
    started = time.monotonic()
    result = hook(alice, "stop", env={"AGENT_MEMORY_HOOK_BUDGET": "2", "AGENT_MEMORY_TIMEOUT": "60"})
    elapsed = time.monotonic() - started
    assert shown(result).endswith(" 2 still pending (see: agent-memory pending)")
    assert elapsed < 15, elapsed  # the budget, not the 60 s network timeout, bounds the hook
    assert sorted(n["id"] for n in alice.run("pending", "--json").json["notes"]) == sorted(ids)

    # Claude Code ends SessionEnd hooks after about 1.5 s: that hook keeps to about a second
    hub.fault("batch", "hang", times=0, seconds=60)
    started = time.monotonic()
    tools.exited(hook(alice, "session-end", agent="claude", env={"AGENT_MEMORY_HOOK_BUDGET": "30"}))
    assert time.monotonic() - started < 10

    hub.clear_faults()
    alice.wait_over()  # the hanging Hub made the hooks wait
    tools.exited(hook(alice, "stop", agent="claude"))
    assert alice.run("pending", "--json").json["notes"] == []
    assert len([p for p in hub.list_paths(BUCKET) if "/notes/" in p]) == 2


@pytest.mark.slow
def test_concurrent_stop_hooks_upload_one_copy_and_a_killed_one_loses_nothing(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("shared once", "--title", "Once").json
    hub.clear_faults()
    hub.fault("batch", "hang", times=1, seconds=60)
    victim = alice.popen("hook", "stop", "--agent", "codex", input=b"{}")
    time.sleep(3)  # it is now blocked in the hanging upload
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    assert alice.run("pending", "--json").json["notes"][0]["id"] == saved["id"]

    procs = [alice.popen("hook", "stop", "--agent", agent, input=b"{}") for agent in ("codex", "claude") * 2]
    for proc in procs:
        ended = tools.exited(tools.finished(proc, timeout=120))
        out, err = ended.stdout, ended.stderr
        assert err == b"", err.decode()
        assert out == b"" or list(json.loads(out)) == ["systemMessage"]  # the user's message, or nothing at all
    assert alice.run("pending", "--json").json["notes"] == []
    notes = [p for p in hub.list_paths(BUCKET) if "/notes/" in p]
    assert notes == [saved["path"]]
    assert hub.read_file(BUCKET, saved["path"]).endswith(b"shared once\n")


def test_stop_also_finishes_a_pending_skill_publication(alice, hub, tmp_path):
    skill = tmp_path / "src" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes.\n---\n\n# Notes\n")
    hub.fault("batch", "fail", times=0)
    pending = alice.run("publish-skill", str(skill), "--json")
    tools.exited(pending, 75)
    text = context(hook(alice, "session-start"))
    assert "1 upload saved on this machine is not shared yet (1 skill publication); the Stop hook retries it" in text

    hub.clear_faults()
    result = hook(alice, "stop", agent="claude")
    assert shown(result) == "agent-memory: retried 1 pending upload: 1 shared, 0 still pending"
    revision = pending.json["revision"]
    assert f"skills/release-notes/{revision}/SKILL.md" in hub.list_paths(BUCKET)
    assert alice.run("pending", "--json").json["skills"] == []


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_a_hook_that_fails_prints_no_secret(machine, tmp_path, event):
    """A token in a path the hook cannot use, placed where the hook's one line is cut (300 characters)."""
    token = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    line = f"agent-memory hook: {event} failed: NotADirectoryError: [Errno 20] Not a directory: '{tmp_path}/"
    base = tmp_path / ("d" * (300 - len(line) - 11))  # the token starts 10 characters before the cut
    base.mkdir()
    (base / token).write_text("a file where a folder should be")
    env = {"AGENT_MEMORY_HOME": str(base / token / "home")}
    result = hook(machine, event, env=env)
    tools.exited(result)
    assert token[:12] not in result.out + result.err and "[redacted]" in result.out + result.err
