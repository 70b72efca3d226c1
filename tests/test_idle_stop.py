"""The Stop hook after a quiet turn (every turn of every session) is answered by the first module of the process with
os-level calls (`idle`); anything it is not sure of goes to the whole hook (`cli/hook_stop`), which says what it
finds. What each path loads: tests/test_import_paths.py."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest

import tools
from agent_memory import idle
from agent_memory.config import settings

STOP = ["hook", "stop", "--agent", "claude"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent-memory home with an empty outbox and a configuration without sync; stdin holds an event."""
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "am"))
    (tmp_path / "am" / "state" / "outbox" / "done").mkdir(parents=True)
    (tmp_path / "am" / "config").mkdir()
    (tmp_path / "am" / "config" / "config.json").write_text(json.dumps({"bucket": "file:///tmp/store"}))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"hook_event_name": "Stop"}')))
    return tmp_path / "am"


def test_a_quiet_turn_has_nothing_to_do(home: Path) -> None:
    (home / "state" / "outbox" / ".note-x.tmp").mkdir()  # hidden: a plan being written, as outbox.plans skips it
    assert idle.stop_has_nothing_to_do(STOP) is True
    assert sys.stdin.read() == ""  # the event was read, as the whole hook reads it


def test_an_upload_waiting_goes_to_the_whole_hook(home: Path) -> None:
    (home / "state" / "outbox" / "note-20260101-000000-000001-aaaaaaaaaa").mkdir()
    assert idle.stop_has_nothing_to_do(STOP) is False
    assert sys.stdin.read() == '{"hook_event_name": "Stop"}'  # left for the whole hook


def test_sync_named_in_the_configuration_goes_to_the_whole_hook(home: Path) -> None:
    (home / "config" / "config.json").write_text(json.dumps({"sync": {"claude": True}}))
    assert idle.stop_has_nothing_to_do(STOP) is False


def test_claude_codes_session_end_is_the_same_quiet_turn(home: Path) -> None:
    assert idle.stop_has_nothing_to_do(["hook", "session-end", "--agent", "claude"]) is True


def test_another_command_line_goes_to_the_whole_command(home: Path) -> None:
    for argv in (["hook", "stop", "--agent", "claude", "--json"], ["hook", "session-start", "--agent", "claude"]):
        assert idle.stop_has_nothing_to_do(argv) is False
    assert idle.stop_has_nothing_to_do(["hook", "stop", "--agent", "cursor"]) is False
    assert sys.stdin.read() == '{"hook_event_name": "Stop"}'


def test_an_event_that_is_not_json_is_handed_on(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for event in (b"not json {", b"[1, 2]", b'"a string"'):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(event)))
        assert idle.stop_has_nothing_to_do(STOP) is False
        assert sys.stdin.buffer.read(idle.MAX_EVENT) == event  # the same bytes, for the whole hook to say so


@pytest.mark.parametrize("damage", ["fifo", "link to /dev/zero", "too large", "folder"])
def test_a_configuration_that_is_not_what_the_helper_writes_is_never_waited_on(home: Path, damage: str) -> None:
    config = home / "config" / "config.json"
    config.unlink()
    if damage == "fifo":
        os.mkfifo(config)  # nobody writes to it: a blocking open would wait for ever
    elif damage == "link to /dev/zero":
        config.symlink_to("/dev/zero")
    elif damage == "too large":
        config.write_bytes(b" " * (idle.MAX_CONFIG + 1))
    else:
        config.mkdir()
    started = time.monotonic()
    assert idle.stop_has_nothing_to_do(STOP) is False  # the whole hook reports it
    assert time.monotonic() - started < tools.scaled(5)


@pytest.mark.parametrize("damage", ["file", "link"])
def test_an_outbox_that_is_not_a_folder_goes_to_the_whole_hook(home: Path, tmp_path: Path, damage: str) -> None:
    outbox = home / "state" / "outbox"
    (outbox / "done").rmdir()
    outbox.rmdir()
    if damage == "file":
        outbox.write_text("a file where the outbox folder should be")
    else:
        (tmp_path / "elsewhere").mkdir()  # empty, but not ours: the whole hook says what it is
        outbox.symlink_to(tmp_path / "elsewhere")
    assert idle.stop_has_nothing_to_do(STOP) is False


def test_no_state_at_all_is_a_quiet_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "never-used"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert idle.stop_has_nothing_to_do(STOP) is True


def test_the_bound_on_the_configuration_is_the_configurations(home: Path) -> None:
    assert idle.MAX_CONFIG == settings.MAX_BYTES


def test_an_event_that_is_not_json_is_said_by_the_whole_hook(ready) -> None:
    result = ready.run("hook", "stop", "--agent", "codex", input="not json {")
    tools.exited(result)
    assert result.out == ""
    assert result.err == "agent-memory hook: the event on stdin is not JSON; carrying on without it\n"


def test_a_quiet_record_never_follows_a_link_and_has_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, outside = tmp_path / "memory", tmp_path / "outside"
    (memory / "topics").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("not ours")
    (memory / "MEMORY.md").write_text("- one\n")
    (memory / "topics" / "parser.md").write_text("# Parser\n")
    (memory / "elsewhere").symlink_to(outside)
    entries = idle.quiet_entries([str(tmp_path / "config.json")], [str(memory)])
    assert entries is not None
    paths = [entry[0] for entry in entries]
    assert paths == [
        str(tmp_path / "config.json"),
        str(memory),
        str(memory / "MEMORY.md"),
        str(memory / "elsewhere"),
        str(memory / "topics"),
        str(memory / "topics" / "parser.md"),
    ]
    assert entries[0] == [str(tmp_path / "config.json")]  # not there: no stat
    assert os.path.islink(paths[3]) and len(entries[3]) > 1  # the link itself, never what it points to
    monkeypatch.setattr(idle, "MAX_QUIET_ENTRIES", 3)
    assert idle.quiet_entries([], [str(memory)]) is None  # too many to look at each turn: the whole hook looks
