"""The SessionStart reminder: what a model that remembers nothing is told (the project, its notes, when to search,
what is pending, whose checkpoint a compaction points at), within 2 KB whatever the cache holds, and once per
session in a runtime that keeps it when a session is resumed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from binascii import crc32
from pathlib import Path

import pytest
from test_runtime_hook_command import context, hook

import tools
from conftest import Machine

HELPER = str(Path(sys.executable).parent / "agent-memory")
DESK = {"AGENT_MEMORY_MACHINE": "desk"}
NOTHING_PENDING = hashlib.sha256(b"").hexdigest()[:16]  # what a session with nothing pending was told


def start(machine: Machine, *, source="startup", session=None, agent="codex", env=None):
    payload = {"cwd": str(machine.work), "source": source}
    if session is not None:
        payload["session_id"] = session
    return hook(machine, "session-start", payload, agent=agent, env=env)


def record(machine: Machine) -> Path:
    return machine.state / "state" / "reminded-sessions"


def checksums(machine: Machine, bucket: str, project: str = "demo") -> Path:
    from agent_memory.paths import bucket_key

    return machine.state / "cache" / bucket_key(bucket) / "projects" / project / "checksums"


def test_the_reminder_counts_the_cached_notes_and_says_how_recent_the_newest_is(ready, folder_store):
    for title in ("First", "Second", "Third"):
        tools.exited(ready.save(f"# {title}\n\nbody", "--title", title))
    ready.run("search", "body")  # the cache holds them
    first = context(start(ready)).splitlines()[0]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert first == (
        "agent-memory: this session's memory project is demo (3 notes in this machine's cache, the newest saved "
        f"within the last hour ({today}))."
    )

    # a note from 3 days ago, as another machine would have saved it, and the same note counted once
    file = checksums(ready, folder_store)
    older = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() - 3 * 86400 - 60)) + "-000001-aaaaaaaaaa"
    lines = file.read_text().splitlines(keepends=True)
    file.write_text(f"{older}\t4\t{crc32(b'body'):08x}\t-\n" + "".join(lines) + lines[0])
    assert "(4 notes in this machine's cache, the newest saved within the last hour" in context(start(ready))


def test_a_huge_hostile_cache_keeps_the_reminder_small_fast_and_believes_no_future_date(ready, folder_store):
    tools.exited(ready.save("a real note", "--title", "Real"))
    ready.run("search", "real")
    file = checksums(ready, folder_store)
    week_ago = time.gmtime(time.time() - 7 * 86400)
    stamp = time.strftime("%Y%m%d-%H%M%S", week_ago)
    hostile = [
        "99991231-235959-000000-ffffffffff",  # from the far future: not the newest
        "20261399-999999-000000-ffffffffff",  # no real moment
        "zzzz-not-an-id",
        "\u202eevil".encode().decode(),
    ]
    real = file.read_text()
    many = "".join(f"{stamp}-{n:06d}-{n:010x}\t10\t0000000a\t-\n" for n in range(50_000))
    torn = "".join(f"{h}\t1\t00000001\t-\n" for h in hostile) + "garbage without tabs\n" + "a\tb\n"
    file.write_bytes(("".join([many, torn]) + real).encode())
    os.chmod(file, 0o600)

    started = time.monotonic()
    text = context(start(ready))
    elapsed = time.monotonic() - started
    assert len(text.encode()) < 2048
    first = text.splitlines()[0]
    assert "(50005 notes in this machine's cache" in first
    assert "the newest saved within the last hour" in first and "9999" not in first  # the real note, not the future
    assert "\u202e" not in text
    assert elapsed < tools.scaled(5), elapsed  # one read of the record, no parse of each note (a hang detector)

    # only ids of other shapes, none newer: the newest is the one a real id dates
    file.write_bytes((many[: many.index("\n") + 1] + torn).encode())
    first = context(start(ready)).splitlines()[0]
    assert f"the newest saved 7 days ago ({time.strftime('%Y-%m-%d', week_ago)})" in first


def test_hostile_checkpoints_keep_the_compaction_pointer_within_2_kb(ready, folder_store):
    """A note written straight into the store by anyone who can write there, with the longest fields it may have."""
    saved = ready.save("body", "--kind", "checkpoint", "--title", "Plain").json
    store = Path(folder_store.removeprefix("file://"))
    original = (store / saved["path"]).read_text()
    for n in range(30):
        note_id = f"{saved['id']}-{n:02d}"  # after the plain one: the newest
        text = original.replace(saved["id"], note_id)
        # YAML's own escapes: the parsed fields hold a bidi override, bells and a terminal escape
        text = text.replace("title: Plain", 'title: "\\u202e' + "T\\a" * 119 + '"')
        text = text.replace("machine: ", 'machine: "\\e[31m' + "m" * 50 + '" #')
        (store / saved["path"]).with_name(f"{note_id}.md").write_text(text)
    ready.run("search", "body")
    text = context(start(ready, source="compact"))
    assert len(text.encode()) <= 2000 and f"newest checkpoint is {saved['id']}-29" in text
    assert "\u202e" not in text and "\x1b" not in text and "\x07" not in text
    assert "\\u202e" in text  # shown escaped, never raw


SESSION_A = "01a236f6-317c-7900-81ea-145b83a92f31"
SESSION_B = "01a236f6-317c-7900-81ea-145b83a92f32"


def checkpoint(machine: Machine, body: str, title: str, session: str | None = None, **env: str) -> dict:
    """A checkpoint saved from a Codex session (Codex exports its thread id to the commands it runs)."""
    own = {**DESK, "AGENT_MEMORY_AGENT": "codex", **env} if session is None else {**DESK, "CODEX_THREAD_ID": session}
    saved = machine.save(body, "--kind", "checkpoint", "--title", title, env={**own, **env})
    tools.exited(saved)
    return saved.json


def compacted(machine: Machine, session: str | None, agent: str = "codex") -> str:
    return context(start(machine, source="compact", session=session, agent=agent, env=DESK)).splitlines()[-1]


def test_after_a_compaction_the_pointer_names_only_this_sessions_checkpoint_as_its_own(ready):
    """Two sessions of the same agent on the same machine (two worktrees of one project) and a compaction."""
    mine = checkpoint(ready, "# Mine\n\nstep 1", "Mine", SESSION_A)
    theirs = checkpoint(ready, "# Theirs\n\nother work", "Theirs", SESSION_B)  # newer, of another session
    ready.run("search", "step")
    own = compacted(ready, SESSION_A)
    created = ready.run("read", mine["id"]).out.split("created: ")[1].split("\n")[0].strip("'\"")
    assert own == (
        f'The context was just compacted. This session saved the checkpoint {mine["id"]} "Mine" ({created}) '
        f"before it; to pick up from it, read it with: {HELPER} read {mine['id']}"
    )
    assert theirs["id"] not in own

    other = compacted(ready, "01a236f6-317c-7900-81ea-145b83a92f33")  # a session that saved none
    assert f'newest checkpoint is {theirs["id"]} "Theirs"' in other and mine["id"] not in other
    assert "), another session's: saved by codex on this machine, not in this session. It may be other work" in other
    assert other.endswith(f"only if this task continues it, read it with: {HELPER} read {theirs['id']}")
    assert "as this session is" not in other and "pick up" not in other

    unknown = compacted(ready, None)  # no session id in the event: nothing to match
    assert "this session's id is unknown, so whether it saved it cannot be told" in unknown
    assert "This session saved" not in unknown


def test_a_checkpoint_of_another_agent_or_machine_is_another_sessions(ready, machine_b, folder_store):
    mine = checkpoint(ready, "# Mine\n\nstep 1", "Mine", SESSION_A)
    ready.run("search", "step")
    other_agent = compacted(ready, "c4e54124-7be5-4d71-b6a2-b5f614377271", agent="claude")
    assert f"{mine['id']}" in other_agent
    assert "another session's: saved by another agent on this machine, not in this session." in other_agent

    laptop = machine_b.setup(folder_store)
    theirs = laptop.save("step 2", "--kind", "checkpoint", "--title", "Theirs", env={"AGENT_MEMORY_MACHINE": "laptop"})
    tools.exited(theirs)
    ready.run("search", "step")
    other = compacted(ready, SESSION_B)
    assert f'{theirs.json["id"]} "Theirs"' in other
    assert "another session's: saved by another agent elsewhere, not in this session." in other
    assert "laptop" not in other  # a note's fields are anyone's text: only whether they match is said

    same_agent = laptop.save("step 3", "--kind", "checkpoint", env={"AGENT_MEMORY_AGENT": "codex"})
    tools.exited(same_agent)
    ready.run("search", "step")
    other = compacted(ready, SESSION_B)
    assert f"{same_agent.json['id']}" in other and "another session's: saved on another machine, not in " in other
    own = compacted(ready, SESSION_A)  # its own, older than the others, is still the one it is pointed at
    assert own.startswith(f"The context was just compacted. This session saved the checkpoint {mine['id']} ")


@pytest.mark.parametrize(
    ("agent", "runtime_env"),
    [("codex", {"CODEX_THREAD_ID": SESSION_A}), ("claude", {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": SESSION_A})],
)
def test_a_checkpoint_saved_under_a_named_agent_is_still_this_sessions(ready, agent, runtime_env):
    """AGENT_MEMORY_AGENT (say, in the user's profile) names the agent; the session is still the runtime's."""
    mine = checkpoint(ready, "# Mine\n\nstep 1", "Mine", AGENT_MEMORY_AGENT="parser-bot", **runtime_env)
    assert f"session: {SESSION_A}\n" in ready.run("read", mine["id"]).out
    own = compacted(ready, SESSION_A, agent=agent)
    assert own.startswith(f"The context was just compacted. This session saved the checkpoint {mine['id']} "), own


def test_a_checkpoint_pending_here_is_this_sessions_too(alice, hub):
    hub.fault("batch", "fail", times=0)
    saved = alice.save("body", "--kind", "checkpoint", "--title", "Offline", env={"CODEX_THREAD_ID": SESSION_A})
    tools.exited(saved, 75)
    own = context(start(alice, source="compact", session=SESSION_A)).splitlines()[-1]
    assert own.startswith(f"The context was just compacted. This session saved the checkpoint {saved.json['id']} ")


@pytest.mark.parametrize("agent", ["codex", "claude"])
def test_a_resumed_session_gets_no_second_reminder(ready, agent):
    """Both runtimes keep a resumed session's earlier reminders (Claude Code drops only identical ones)."""
    session = SESSION_A
    first = start(ready, session=session, agent=agent)
    assert "memory project is demo" in context(first)
    ready.save("# Another note\n\nthe count in a new reminder would differ")
    resumed = start(ready, source="resume", session=session, agent=agent)
    tools.exited(resumed)
    assert (resumed.out, resumed.err) == ("", "")  # nothing at all: its first one is still there
    assert start(ready, source="resume", session=session, agent=agent).out == ""
    as_json = hook(ready, "session-start", {"source": "resume", "session_id": session}, agent=agent, extra=("--json",))
    assert as_json.json == {"event": "session-start", "agent": agent, "context": ""}

    assert "memory project is demo" in context(start(ready, source="resume", session=SESSION_B, agent=agent))
    assert "memory project is demo" in context(start(ready, source="compact", session=session, agent=agent))
    assert "memory project is demo" in context(start(ready, source="clear", session=session, agent=agent))
    assert "memory project is demo" in context(start(ready, source="resume", agent=agent))  # no id: nothing to go by


def test_a_resumed_session_is_told_once_that_its_pending_uploads_were_shared(alice, hub):
    hub.fault("batch", "fail", times=0)
    tools.exited(alice.save("Saved while the Hub failed."), 75)
    first = context(start(alice, session=SESSION_A, agent="claude"))
    assert "1 upload saved on this machine is not shared yet (1 note); the Stop hook retries it" in first
    hub.clear_faults()
    tools.exited(alice.run("pending", "retry"))
    told = context(start(alice, source="resume", session=SESSION_A, agent="claude"))
    assert told == (
        "agent-memory: update to this session's earlier reminder: the uploads it named as not shared yet have been "
        "shared since, and nothing is pending on this machine now."
    )
    assert start(alice, source="resume", session=SESSION_A, agent="claude").out == ""  # told once, not again

    hub.fault("batch", "fail", times=0)
    tools.exited(alice.save("Another one while the Hub failed."), 75)
    again = context(start(alice, source="resume", session=SESSION_A, agent="claude"))
    assert again.startswith("agent-memory: update to this session's earlier reminder (this replaces its line about ")
    assert again.endswith(f"after each turn on its own; to retry it now: {HELPER} pending retry")
    assert start(alice, source="resume", session=SESSION_A, agent="claude").out == ""


def test_a_damaged_or_planted_record_means_the_reminder_again(ready, tmp_path):
    session = "01a236f6-317c-7900-81ea-145b83a92f31"
    assert start(ready, session=session).out
    assert record(ready).read_text() == f"{session} {NOTHING_PENDING}\n"
    for damaged in (f"{session}\n\x00\x01\n", f"{session}", "x" * 100_000 + "\n"):
        record(ready).write_text(damaged)
        assert "memory project is demo" in context(start(ready, source="resume", session=session))
        assert record(ready).read_text() == f"{session} {NOTHING_PENDING}\n"  # written whole again, with this session

    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(f"{session}\n")
    record(ready).unlink()
    record(ready).symlink_to(elsewhere)  # a link planted in our folder is never read through
    result = start(ready, source="resume", session=session)
    assert "memory project is demo" in context(result)
    assert elsewhere.read_text() == f"{session}\n"


def test_the_record_is_bounded_and_keeps_the_newest_sessions(ready):
    from agent_memory.hooks.reminded import KEEP

    ids = [f"session-{n:04d}" for n in range(KEEP + 20)]
    record(ready).parent.mkdir(parents=True, exist_ok=True)
    record(ready).write_text("".join(f"{i}\n" for i in ids[:-1]))
    assert start(ready, session=ids[-1]).out
    kept = record(ready).read_text().splitlines()
    assert kept == ids[-KEEP:-1] + [f"{ids[-1]} {NOTHING_PENDING}"]  # ids recorded before digests were kept too
    assert start(ready, source="resume", session=ids[-1]).out == ""
    assert "demo" in context(start(ready, source="resume", session=ids[0]))  # forgotten: reminded again


def test_sessions_starting_at_once_are_all_recorded(ready):
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agent_memory", "hook", "session-start", "--agent", "codex"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ready.work,
            env=ready.env,
        )
        for _ in range(8)
    ]
    for n, proc in enumerate(procs):
        ended = tools.exited(
            tools.finished(proc, input=json.dumps({"session_id": f"s-{n}", "source": "startup"}).encode(), timeout=60)
        )
        out, err = ended.stdout, ended.stderr
        assert err == b"" and b"demo" in out
    assert sorted(record(ready).read_text().splitlines()) == sorted(f"s-{n} {NOTHING_PENDING}" for n in range(8))


def test_the_setup_verification_note_is_not_counted(machine, folder_store):
    boot = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json")
    tools.exited(boot)
    assert boot.json["verification"]["status"] == "verified", boot.err
    assert checksums(machine, folder_store).read_text().count("setup-") == 1  # the cache holds it
    first = context(start(machine)).splitlines()[0]
    assert "(no notes in this machine's cache yet;" in first
    machine.save("# A real note\n\nworth keeping")
    machine.run("search", "worth")
    assert "(1 note in this machine's cache, the newest saved within the last hour" in context(start(machine))


def test_an_unmapped_folder_is_told_once_a_day(ready, tmp_path):
    elsewhere, other = tmp_path / "unmapped", tmp_path / "another"
    elsewhere.mkdir()
    other.mkdir()
    payload = {"cwd": str(elsewhere), "source": "startup"}
    assert "is not mapped to a project" in context(hook(ready, "session-start", payload))
    again = hook(ready, "session-start", {**payload, "session_id": SESSION_B})
    tools.exited(again)
    assert (again.out, again.err) == ("", "")  # told today already: nothing at all
    assert "is not mapped to a project" in context(hook(ready, "session-start", {"cwd": str(other)}))
    told = ready.state / "state" / "unmapped-told"
    yesterday = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    told.write_text("".join(f"{yesterday} {line.split()[1]}\n" for line in told.read_text().splitlines()))
    assert "is not mapped to a project" in context(hook(ready, "session-start", payload))  # a new day
    for damaged in ("\x00garbage", "x" * 100_000):
        told.write_text(damaged)
        assert "is not mapped to a project" in context(hook(ready, "session-start", payload))


def test_the_retry_command_is_offered_in_codex_only_with_the_sandbox_consent(alice, hub):
    hub.fault("batch", "fail", times=0)
    tools.exited(alice.save("Saved while the Hub failed."), 75)
    waiting = "1 upload saved on this machine is not shared yet (1 note); the Stop hook retries it after each turn"
    offered = f"{waiting} on its own; to retry it now: {HELPER} pending retry"
    assert f"{waiting} on its own" in context(start(alice)).splitlines()  # no command: it would fail in the sandbox
    assert offered in context(start(alice, agent="claude")).splitlines()
    tools.exited(alice.run("codex-sandbox", "allow"))
    assert offered in context(start(alice)).splitlines()


def test_sessions_starting_at_once_in_an_unmapped_folder_are_told_once(ready, tmp_path):
    elsewhere = tmp_path / "unmapped"
    elsewhere.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "agent_memory", "hook", "session-start", "--agent", "claude"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ready.work,
            env=ready.env,
        )
        for _ in range(6)
    ]
    told = 0
    for n, proc in enumerate(procs):
        event = {"session_id": f"s-{n}", "source": "startup", "cwd": str(elsewhere)}
        ended = tools.exited(tools.finished(proc, input=json.dumps(event).encode(), timeout=120))
        out, err = ended.stdout, ended.stderr
        assert err == b"", err.decode()
        told += b"is not mapped to a project" in out
    assert told == 1


# -- forks, older checkpoints, the runtimes' own sessions ---------------------------------------------------------

FORK = "01a236f6-317c-7900-81ea-145b83a92f3f"


def fork_transcript(machine: Machine, parent: str, session: str = FORK) -> Path:
    """A transcript as Claude Code 2.1.328 writes one for `claude --resume PARENT --fork-session`: the copied
    conversation under the new id, each copied reply marked with the session whose request made it."""
    path = machine.home / ".claude" / "projects" / "work" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "mode", "mode": "normal", "sessionId": session},
        {"type": "user", "message": {"content": 'say "requestSessionId":"planted"'}, "sessionId": session},
        {"type": "assistant", "message": {"content": "ok"}, "sessionId": session, "requestSessionId": parent},
    ]
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def test_a_forked_session_is_told_as_a_resumed_one_and_its_inherited_checkpoint_is_its_own(ready):
    first = start(ready, session=SESSION_A, agent="claude")
    assert "memory project is demo" in context(first)
    ready.save("# Another note\n\nthe count in a new reminder would differ")
    folder = ready.home / ".claude" / "projects" / "work"
    folder.mkdir(parents=True)
    (folder / f"{SESSION_B}.jsonl").write_text("{}\n")  # another session of the folder, never told
    os.utime(folder / f"{SESSION_B}.jsonl", (1, 1))
    (folder / f"{SESSION_A}.jsonl").write_text("{}\n")  # the one forked from, told: it just answered
    # Claude Code runs SessionStart (`source: fork`) before the fork's transcript exists
    transcript = folder / f"{FORK}.jsonl"
    payload = {"cwd": str(ready.work), "source": "fork", "session_id": FORK, "transcript_path": str(transcript)}
    forked = hook(ready, "session-start", payload, agent="claude")
    tools.exited(forked)
    assert (forked.out, forked.err) == ("", "")  # the copy of the conversation holds its one reminder
    assert FORK in record(ready).read_text()
    assert start(ready, source="resume", session=FORK, agent="claude").out == ""  # and its own resume too
    # a fork in a folder where no session was told: a reminder of its own
    elsewhere = {**payload, "session_id": FORK[:-1] + "e", "transcript_path": str(ready.root / "x" / "t.jsonl")}
    assert "memory project is demo" in context(hook(ready, "session-start", elsewhere, agent="claude"))

    # compacted, the fork is pointed at the checkpoint saved before it was forked, as this conversation's
    mine = checkpoint(ready, "# Before the fork\n\nstep 1", "Before the fork", SESSION_A)
    theirs = checkpoint(ready, "# Elsewhere\n\nother work", "Elsewhere", SESSION_B)
    ready.run("search", "step")
    fork_transcript(ready, SESSION_A)
    shown = context(hook(ready, "session-start", {**payload, "source": "compact"}, agent="claude", env=DESK))
    pointer = shown.splitlines()[-1]
    assert f"This conversation (in the session it was forked from) saved the checkpoint {mine['id']}" in pointer
    assert theirs["id"] not in pointer and "another session's" not in pointer


def test_the_pointer_finds_this_sessions_checkpoint_however_many_were_saved_since(ready):
    mine = checkpoint(ready, "# Mine\n\nstep 1", "Mine", SESSION_A)
    for number in range(22):  # more than the newest looked through first
        checkpoint(ready, f"# Theirs {number}\n\nother work", f"Theirs {number}", SESSION_B)
    ready.run("search", "step")
    own = compacted(ready, SESSION_A)
    assert f'This session saved the checkpoint {mine["id"]} "Mine"' in own


def test_a_session_in_a_runtime_s_own_folder_gets_no_reminder_nor_setup_advice(ready, machine_b):
    for home, agent in ((ready.home / ".codex" / "memories_v2", "codex"), (ready.home / ".claude", "claude")):
        home.mkdir(parents=True, exist_ok=True)
        told = hook(
            ready, "session-start", {"cwd": str(home), "source": "startup", "session_id": SESSION_A}, agent=agent
        )
        tools.exited(told)
        assert (told.out, told.err) == ("", ""), agent
    # not set up at all: no setup advice there either
    (machine_b.home / ".codex" / "memories_v2").mkdir(parents=True)
    payload = {"cwd": str(machine_b.home / ".codex" / "memories_v2"), "source": "startup"}
    assert hook(machine_b, "session-start", payload, agent="codex").out == ""
    assert "not set up" in context(hook(machine_b, "session-start", {"cwd": str(machine_b.work)}, agent="codex"))
