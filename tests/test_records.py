"""The sync's records skip what costs a hook most on a busy disk: a record written again unchanged is not written,
and one whose times alone changed is written without an fsync (a crash then brings back older times, which every
reader takes as "longer ago"); any other change is durable. Also through a real pull: a session start with nothing
changed makes no fsync of its records."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

import in_process
import tools
from agent_memory import fsutil


def _synced(monkeypatch) -> list[str]:
    """The files fsynced from now on (by the path their descriptor names)."""
    calls: list[str] = []
    real = os.fsync

    def counted(fd: int) -> None:
        calls.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return calls


def _record(core: object, when: object, session: object) -> dict[str, object]:
    return {"files": {"MEMORY.md": core}, "note": core, "last_sync": when, "session_at": session}


@given(core=st.text(st.sampled_from(list('ab"\n\\ {}:'))), other=st.text(st.sampled_from(list('ab"\n\\ {}:'))))
def test_only_a_change_of_times_is_written_without_an_fsync(tmp_path_factory, core, other):
    with pytest.MonkeyPatch.context() as monkeypatch:  # (a function-scoped fixture would outlive one example)
        calls = _synced(monkeypatch)
        path = tmp_path_factory.mktemp("records") / "record.json"
        known = fsutil.write_json_atomic(path, _record(core, "2026-12-01", 1.0), known=None, volatile="last_sync")
        assert len(calls) == 1 and path.read_bytes() == known  # a first record is durable
        same = fsutil.write_json_atomic(path, _record(core, "2026-12-01", 1.0), known=known, volatile="last_sync")
        assert same == known and len(calls) == 1 and path.read_bytes() == known  # unchanged: not written at all
        later = fsutil.write_json_atomic(path, _record(core, "2026-12-02", 2.0), known=known, volatile="last_sync")
        assert len(calls) == 1 and json.loads(path.read_bytes())["session_at"] == 2.0  # times alone: no fsync
        changed = fsutil.write_json_atomic(path, _record(other, "2026-12-02", 2.0), known=later, volatile="last_sync")
        assert len(calls) == (1 if other == core else 2)  # anything else: durable
        assert json.loads(changed) == _record(other, "2026-12-02", 2.0) == json.loads(path.read_bytes())
        # a string holding the volatile key's own spelling cannot pass for the record's times
        sly = f'x\n  "last_sync": {core}'
        fsutil.write_json_atomic(path, _record(sly, "2026-12-02", 2.0), known=changed, volatile="last_sync")
        assert len(calls) == (1 if other == core else 2) + 1


def test_a_session_start_with_nothing_changed_makes_no_fsync_of_the_sync_records(machine, folder_store, monkeypatch):
    """The folder store's SessionStart pull writes its history (`checked_at`) and the folder's record (`last_sync`,
    `session_at`) each session: with nothing changed, those times alone, without an fsync."""
    machine.setup(folder_store)
    tools.exited(machine.run("sync", "enable", "--agent", "claude"))
    event = json.dumps({"cwd": str(machine.work), "hook_event_name": "SessionStart"})
    calls = _synced(monkeypatch)
    assert _hook_here(machine, event) == 0
    assert [path for path in calls if "/sync/" in path], calls  # new records are durable (and fsync is counted)
    calls.clear()
    records = sorted((machine.state / "state" / "sync").rglob("*.json"))
    assert any(path.name == "versions.json" for path in records) and len(records) >= 2, records
    before = {path: path.read_bytes() for path in records}
    assert _hook_here(machine, event) == 0
    assert {path: path.read_bytes() for path in records} != before  # the times moved
    assert not [path for path in calls if "/sync/" in path], calls


def _hook_here(machine, event: str) -> int:
    """The SessionStart hook run in this process, where fsync is counted (`machine.run` gives hooks a process)."""
    code, _out, err = in_process.run(
        ("hook", "session-start", "--agent", "claude"), event.encode(), machine.work, machine.env
    )
    assert not err, err
    return code
