"""With sync on, a Stop or SessionEnd hook that finds the session's memory as a hook of the same session last found it
in step is answered by the first module of the process (`idle`, with the record `hooks.quiet` writes): one `lstat` per
file and folder, none of the command table, the Context or the sync. Anything else, a changed file above all, goes to
the whole hook, which pushes it."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest
from test_import_paths import FIRST, loaded, own
from test_sync import claude_folder, codex_folder, store_objects

import tools
from agent_memory import idle
from agent_memory.hooks import quiet
from conftest import Machine

pytestmark = pytest.mark.outside_tmp  # Claude Code's memory folder of a checkout in no repository (as test_sync)

EVENTS = {"SessionStart": "session-start", "Stop": "stop", "SessionEnd": "session-end"}


def hook(machine: Machine, event: str, session: str, agent: str = "claude") -> set[str]:
    """Run the hook as the hook files do (no --json) in a real process: the helper's modules it loaded."""
    payload = json.dumps({"cwd": str(machine.work), "hook_event_name": event, "session_id": session})
    return own(loaded(machine, machine.root, "hook", EVENTS[event], "--agent", agent, stdin=payload))


def record(machine: Machine) -> Path:
    """The machine's quiet record of Claude Code's hooks (`idle.quiet_file`)."""
    return machine.state / "state" / "quiet-claude.json"


def synced(machine: Machine, store: str, agent: str, files: dict[str, str]) -> Path:
    """`machine` on `store` with `agent`'s memory synced and holding `files`, pushed, and older than the hooks' racy
    window (a file changed within it leaves no quiet record)."""
    machine.setup(store)
    tools.exited(machine.run("sync", "enable", "--agent", agent))
    folder = claude_folder(machine) if agent == "claude" else codex_folder(machine)
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    tools.exited(machine.run("sync", "now", "--json"))
    time.sleep(quiet.RACY_SECONDS + 0.1)
    return folder


def test_a_quiet_turn_with_sync_on_loads_nothing_and_a_change_is_pushed(machine, folder_store):
    folder = synced(machine, folder_store, "claude", {"MEMORY.md": "- one\n", "topics/parser.md": "# Parser\n"})
    store = Path(folder_store.removeprefix("file://"))
    session = str(uuid.uuid4())
    assert "cli.hook_start" in hook(machine, "SessionStart", session)  # the pull, then the record
    assert json.loads(record(machine).read_text())["session"] == session
    for event in ("Stop", "Stop", "SessionEnd"):
        assert hook(machine, event, session) == FIRST, event  # answered by `idle`
    assert "cli.hook_stop" in hook(machine, "Stop", str(uuid.uuid4()))  # another session: the whole hook

    before = store_objects(store)
    text = folder / "MEMORY.md"
    times = os.stat(text)
    text.write_text("- two\n")  # the same size, and the modification time put back: its change time tells `idle`
    os.utime(text, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert "cli.hook_stop" in hook(machine, "Stop", session)
    text.write_text("- two, three\n")
    assert "cli.hook_stop" in hook(machine, "Stop", session)
    after = store_objects(store)
    assert len(after) > len(before) and any(b"- two" in data for data in after.values())  # pushed

    time.sleep(quiet.RACY_SECONDS + 0.1)
    assert "cli.hook_stop" in hook(machine, "Stop", session)  # in step again: this one records it
    assert hook(machine, "Stop", session) == FIRST
    (folder / "topics" / "lexer.md").write_text("# Lexer\n")  # a new file in a subfolder
    assert "cli.hook_stop" in hook(machine, "Stop", session)
    assert any(b"# Lexer" in data for data in store_objects(store).values())


def test_a_file_changed_just_before_the_record_leaves_none(machine, folder_store):
    """A change within the racy window, where a second change could keep every time the same, is never trusted."""
    folder = synced(machine, folder_store, "claude", {"MEMORY.md": "- one\n"})
    session = str(uuid.uuid4())
    (folder / "MEMORY.md").write_text("- one\n- two\n")
    hook(machine, "SessionStart", session)  # pulls nothing; the file is newer than the window
    assert not record(machine).exists()
    assert "cli.hook_stop" in hook(machine, "Stop", session)


def test_the_configuration_changed_goes_to_the_whole_hook(machine, folder_store):
    synced(machine, folder_store, "claude", {"MEMORY.md": "- one\n"})
    session = str(uuid.uuid4())
    hook(machine, "SessionStart", session)
    assert hook(machine, "Stop", session) == FIRST
    tools.exited(machine.run("sync", "disable", "--agent", "claude"))
    assert "cli.hook_stop" in hook(machine, "Stop", session)


def test_codex_quiet_turns_too(machine, folder_store):
    synced(machine, folder_store, "codex", {"MEMORY.md": "- one\n"})
    session = str(uuid.uuid4())
    assert "sync.codex_delivery" in hook(machine, "SessionStart", session, "codex")  # what others' memories bring
    assert hook(machine, "Stop", session, "codex") == FIRST
    (delivered,) = machine.state.glob("state/sync/*/codex-machine-*/delivered.json")
    before = delivered.stat()
    hook(machine, "SessionStart", str(uuid.uuid4()), "codex")  # nothing delivered: the record is not written again
    assert (delivered.stat().st_ino, delivered.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("damage", ["garbage", "fifo", "link", "another folder", "too large"])
def test_a_damaged_record_goes_to_the_whole_hook_at_once(machine, folder_store, damage):
    synced(machine, folder_store, "claude", {"MEMORY.md": "- one\n"})
    session = str(uuid.uuid4())
    hook(machine, "SessionStart", session)
    file = record(machine)
    value = json.loads(file.read_text())
    file.unlink()
    if damage == "garbage":
        file.write_text("{not json")
    elif damage == "fifo":
        os.mkfifo(file)  # nobody writes to it: a blocking open would wait for ever
    elif damage == "link":
        (machine.root / "elsewhere.json").write_text(json.dumps(value))
        file.symlink_to(machine.root / "elsewhere.json")
    elif damage == "another folder":
        file.write_text(json.dumps({**value, "cwd": str(machine.root)}))
    else:
        file.write_bytes(b" " * (idle.MAX_QUIET + 1))
    started = time.monotonic()
    assert "cli.hook_stop" in hook(machine, "Stop", session)
    assert time.monotonic() - started < tools.scaled(30)
