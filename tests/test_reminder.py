"""The SessionStart reminder: what a model that remembers nothing is told (the project, its notes, when to search,
what is pending, whose checkpoint a compaction points at), within 2 KB whatever the cache holds, and once per
session in a runtime that keeps it when a session is resumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from binascii import crc32
from pathlib import Path

from test_runtime_hook_command import context, hook

import tools
from conftest import Machine

HELPER = str(Path(sys.executable).parent / "agent-memory")
DESK = {"AGENT_MEMORY_MACHINE": "desk"}


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
    assert elapsed < 5, elapsed  # one read of the record, no parse of each note

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


def test_after_a_compaction_the_pointer_says_whose_checkpoint_it_is(ready, machine_b, folder_store):
    mine = ready.save(
        "# Mine\n\nstep 1", "--kind", "checkpoint", "--title", "Mine", env={**DESK, "AGENT_MEMORY_AGENT": "codex"}
    )
    tools.exited(mine)
    ready.run("search", "step")
    own = context(start(ready, source="compact", env=DESK)).splitlines()[-1]
    assert f'{mine.json["id"]} "Mine" (' in own
    assert "saved by codex on this machine, as this session is; to pick up from it, read it with: " in own

    other_agent = context(start(ready, source="compact", agent="claude", env=DESK)).splitlines()[-1]
    assert "saved by another agent on this machine, not by this session (claude on this machine); it may be " in (
        other_agent
    )
    assert other_agent.endswith(f"to see whether it is this one's, read it with: {HELPER} read {mine.json['id']}")

    laptop = machine_b.setup(folder_store)
    theirs = laptop.save("step 2", "--kind", "checkpoint", "--title", "Theirs", env={"AGENT_MEMORY_MACHINE": "laptop"})
    tools.exited(theirs)
    ready.run("search", "step")
    other = context(start(ready, source="compact", env=DESK)).splitlines()[-1]
    assert f'{theirs.json["id"]} "Theirs"' in other
    assert "saved by another agent elsewhere, not by this session (codex on this machine); it may be " in other
    assert "laptop" not in other  # a note's fields are anyone's text: only whether they match is said

    same_agent = laptop.save("step 3", "--kind", "checkpoint", env={"AGENT_MEMORY_AGENT": "codex"})
    tools.exited(same_agent)
    ready.run("search", "step")
    other = context(start(ready, source="compact", env=DESK)).splitlines()[-1]
    assert f"{same_agent.json['id']}" in other and "saved on another machine, not by this session (codex " in other


def test_a_resumed_codex_session_gets_no_second_reminder(ready):
    session = "01a236f6-317c-7900-81ea-145b83a92f31"
    first = start(ready, session=session)
    assert "memory project is demo" in context(first)
    resumed = start(ready, source="resume", session=session)
    tools.exited(resumed)
    assert (resumed.out, resumed.err) == ("", "")  # nothing at all: its first one is still there
    assert start(ready, source="resume", session=session).out == ""
    as_json = hook(ready, "session-start", {"source": "resume", "session_id": session}, extra=("--json",))
    assert as_json.json == {"event": "session-start", "agent": "codex", "context": ""}

    assert "memory project is demo" in context(start(ready, source="resume", session="another-session"))  # unknown
    assert "memory project is demo" in context(start(ready, source="compact", session=session))  # compacted: again
    assert "memory project is demo" in context(start(ready, source="clear", session=session))
    assert "memory project is demo" in context(start(ready, source="resume"))  # no id: nothing to go by


def test_claude_code_keeps_its_reminder_on_every_resume(ready):
    """Claude Code shows a resumed session only its new SessionStart context: skipping it would leave none."""
    session = "c4e54124-7be5-4d71-b6a2-b5f614377271"
    for source in ("startup", "resume", "resume"):
        assert "memory project is demo" in context(start(ready, source=source, session=session, agent="claude"))
    assert not record(ready).exists()


def test_a_damaged_or_planted_record_means_the_reminder_again(ready, tmp_path):
    session = "01a236f6-317c-7900-81ea-145b83a92f31"
    assert start(ready, session=session).out
    assert record(ready).read_text() == f"{session}\n"
    for damaged in (f"{session}\n\x00\x01\n", f"{session}", "x" * 100_000 + "\n"):
        record(ready).write_text(damaged)
        assert "memory project is demo" in context(start(ready, source="resume", session=session))
        assert record(ready).read_text() == f"{session}\n"  # written whole again, with this session

    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(f"{session}\n")
    record(ready).unlink()
    record(ready).symlink_to(elsewhere)  # a link planted in our folder is never read through
    result = start(ready, source="resume", session=session)
    assert "memory project is demo" in context(result)
    assert elsewhere.read_text() == f"{session}\n"


def test_the_record_is_bounded_and_keeps_the_newest_sessions(ready):
    from agent_memory.machine.reminded import KEEP

    ids = [f"session-{n:04d}" for n in range(KEEP + 20)]
    record(ready).parent.mkdir(parents=True, exist_ok=True)
    record(ready).write_text("".join(f"{i}\n" for i in ids[:-1]))
    assert start(ready, session=ids[-1]).out
    kept = record(ready).read_text().splitlines()
    assert kept == ids[-KEEP:]
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
    assert sorted(record(ready).read_text().splitlines()) == sorted(f"s-{n}" for n in range(8))
