"""Receipts of use: sessions, searches, reads and saves counted per session of each runtime (their session variables
and the SessionStart hook), shown by `usage` and `status`; never a query's text or a note's content; bounded,
pruned after 90 days, safe under concurrent processes and damage."""

from __future__ import annotations

import json
import time

import tools

CODEX = {"CODEX_THREAD_ID": "019a-codex-thread-1"}
CLAUDE = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "5f1e-claude-session-1"}
SECRET_QUERY = "zanzibar quokka"  # a query whose words no note holds, and that must never be kept
BODY_WORD = "marmalade"  # a word of a note's body, that must never be kept either


def _usage(machine, *args: str) -> dict:
    shown = machine.run("usage", "--json", *args)
    tools.exited(shown)
    return shown.json


def _hook(machine, agent: str, session: str, env: dict[str, str] | None = None) -> None:
    event = json.dumps({"session_id": session, "cwd": str(machine.work), "source": "startup"})
    started = machine.run("hook", "session-start", "--agent", agent, input=event, env=env)
    tools.exited(started)


def _agents(report: dict, project: str = "demo") -> dict[str, dict]:
    (found,) = [p for p in report["projects"] if p["project"] == project]
    return {use["agent"]: use for use in found["agents"]}


def _record(machine):
    return machine.state / "state" / "usage"


def test_sessions_of_both_runtimes_are_counted_and_no_text_is_kept(ready):
    saved = ready.save(f"# Jam\n\nThe {BODY_WORD} recipe needs oranges.\n", env=CLAUDE)
    tools.exited(saved)
    other = ready.save("# Unread\n\nNobody searches this one.\n")
    tools.exited(other)
    _hook(ready, "codex", "019a-codex-thread-1")  # the hook and the commands name the same session
    _hook(ready, "codex", "019a-codex-thread-2")  # a session that never searched
    _hook(ready, "claude", "5f1e-claude-session-1")
    tools.exited(ready.run("search", "oranges recipe", env=CODEX))
    tools.exited(ready.run("search", SECRET_QUERY, env=CODEX))
    tools.exited(ready.run("read", saved.json["id"], env=CODEX))
    tools.exited(ready.run("search", "--offline", "jam", env=CLAUDE))

    report = _usage(ready)
    assert report["days"] == 30
    used = _agents(report)
    assert used["codex"] == {
        "agent": "codex",
        "sessions": 2,
        "sessions_searched": 1,
        "searched_share": 0.5,
        "searches": 2,
        "searches_found": 1,
        "saved": 0,
        "read": 1,
    }
    assert used["claude"] == {
        "agent": "claude",
        "sessions": 1,
        "sessions_searched": 1,
        "searched_share": 1.0,
        "searches": 1,
        "searches_found": 1,
        "saved": 1,
        "read": 0,
    }
    # the save without a session is the agent's that ran it (unknown here), counted with no session
    assert used["unknown"]["saved"] == 1 and used["unknown"]["sessions"] == 0
    assert used["unknown"]["searched_share"] is None
    (project,) = report["projects"]
    assert (project["notes"], project["never_returned"]) == (2, 1)

    text = ready.run("usage").out
    assert "project demo: 2 notes here, 1 never returned by a search in the period" in text
    assert "  codex: 2 sessions, 1 searched memory (50%); 2 searches, 1 found something; 0 saved, 1 read" in text
    status = ready.run("status", "--json").json["usage"]
    assert status == {
        "days": 30,
        "sessions": 3,
        "sessions_searched": 2,
        "searches": 3,
        "searches_found": 2,
        "saved": 2,
        "read": 1,
    }
    assert "usage (last 30 days, this machine): 3 sessions, 2 searched memory; 3 searches, 2 found something" in (
        ready.run("status").out
    )

    # nothing typed or written is kept: not the query, not a word of a note, in any file of the state folder
    files = [path for path in ready.state.rglob("*") if path.is_file()]
    assert _record(ready) in files
    for path in files:
        data = path.read_bytes().lower()
        assert b"zanzibar" not in data and b"quokka" not in data, path
    assert BODY_WORD.encode() not in _record(ready).read_bytes() and b"oranges" not in _record(ready).read_bytes()


def test_a_session_counts_once_under_one_name_with_or_without_agent_memory_agent(ready):
    """AGENT_MEMORY_AGENT names the agent of a runtime's session: its hook (which may not see the variable) and its
    commands (which name it) count one session, under the name the commands give."""
    named = {"AGENT_MEMORY_AGENT": "reviewer"}
    _hook(ready, "claude", "session-hook-unnamed")  # the variable only in the session's commands
    tools.exited(
        ready.run("search", "anything", env={**CLAUDE, "CLAUDE_CODE_SESSION_ID": "session-hook-unnamed", **named})
    )
    tools.exited(
        ready.save("# Review\n\nA note.\n", env={**CLAUDE, "CLAUDE_CODE_SESSION_ID": "session-hook-unnamed", **named})
    )
    _hook(ready, "claude", "session-hook-named", env=named)  # exported before the runtime started: the hook sees it
    _hook(ready, "claude", "session-plain")  # without the variable: the runtime's name throughout
    tools.exited(ready.run("search", "anything", env={**CLAUDE, "CLAUDE_CODE_SESSION_ID": "session-plain"}))

    used = _agents(_usage(ready))
    assert sorted(used) == ["claude", "reviewer"]
    assert (used["reviewer"]["sessions"], used["reviewer"]["sessions_searched"], used["reviewer"]["saved"]) == (2, 1, 1)
    assert (used["claude"]["sessions"], used["claude"]["sessions_searched"], used["claude"]["searches"]) == (1, 1, 1)
    totals = ready.run("status", "--json").json["usage"]
    assert (totals["sessions"], totals["sessions_searched"], totals["searches"]) == (3, 2, 2)
    assert "  reviewer: 2 sessions, 1 searched memory (50%); 1 search, 0 found something; 1 saved, 0 read" in (
        ready.run("usage").out
    )


def test_lines_older_than_90_days_are_pruned(ready):
    now = int(time.time())
    old = f"{now - 91 * 86400}\tsearch\tcodex\told-session\tdemo\t1\t\n"
    recent = f"{now - 40 * 86400}\tsearch\tcodex\trecent-session\tdemo\t0\t\n"
    record = _record(ready)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(old + recent)
    assert _agents(_usage(ready, "--days", "90"))["codex"]["searches"] == 1  # read: the old line is out of range
    assert _usage(ready)["projects"] == []  # 40 days ago is outside the default 30
    _hook(ready, "codex", "new-session")
    kept = record.read_text()
    assert "old-session" not in kept and "recent-session" in kept and "new-session" in kept
    refused = ready.run("usage", "--days", "91")
    tools.exited(refused, 2)
    assert "Next: agent-memory usage --days 30" in refused.err
    tools.exited(ready.run("usage", "--days", "0"), 2)


def test_concurrent_processes_lose_no_count_and_damage_is_skipped(ready):
    tools.exited(ready.save("# Shared\n\nParallel searches find this.\n"))
    record = _record(ready)
    with record.open("ab") as handle:
        handle.write(b"not\ta line of ours\n\xff\xfe\n12\tsearch\tcodex\ts\tdemo\t1")  # garbage, a torn last line
    procs = [ready.popen("search", "--offline", "parallel", env={"CODEX_THREAD_ID": f"thread-{n}"}) for n in range(8)]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=300))
    used = _agents(_usage(ready))["codex"]
    assert (used["sessions"], used["searches"], used["searches_found"]) == (8, 8, 8)


def test_the_record_is_never_followed_through_a_link(ready, tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"the user's own file\n")
    record = _record(ready)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.symlink_to(outside)
    tools.exited(ready.save("# Linked\n\nA note.\n"))
    tools.exited(ready.run("search", "note", env=CODEX))
    assert outside.read_bytes() == b"the user's own file\n"
    assert _usage(ready)["projects"] == []  # a record that is not ours is not read
