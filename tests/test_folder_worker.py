"""A folder store's calls are made by a child process (`store/worker.py`) that the command can leave behind: a child
killed in the middle of a call, or one whose answer is cut short, fails that call as a lost answer would, and the
outbox stays consistent: a save goes pending with its id and bytes, and its retry publishes exactly those bytes.

The children here are real forked processes that really die (SIGKILL, or an exit halfway through an answer).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import tools
from agent_memory.store import worker
from agent_memory.store.base import Listing, StoreError
from agent_memory.store.bounded import BoundedStore
from agent_memory.store.budget import Budget
from agent_memory.store.local import FolderStore


def _kill_self(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _objects(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }


def test_calls_go_through_the_child_and_its_errors_come_back_as_they_were(tmp_path):
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    store = BoundedStore(FolderStore(root), root, Budget(20))
    store.put("notes/a.md", b"first")
    assert store.read("notes/a.md") == b"first"
    listing = store.list("notes")
    assert isinstance(listing, Listing) and [info.path for info in listing] == ["notes/a.md"]
    assert [(info.path, data) for info, data in store.read_many(list(listing))] == [("notes/a.md", b"first")]
    with pytest.raises(StoreError) as raised:  # raised in the child, rebuilt here with its reason and words
        store.read("../outside.md")
    assert raised.value.reason == "error" and isinstance(raised.value.detail, str), vars(raised.value)
    child = store._workers[0].pid
    assert child and child != os.getpid()  # the calls were made in the child
    store.close()
    assert tools.until(lambda: _ended(child), 10)  # it ends at its pipe's end, never waited for by the command


def _ended(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:  # reaped already (by the next worker's start, which reaps those left)
        return True


def test_a_killed_child_fails_the_call_and_the_next_call_has_a_new_one(tmp_path, monkeypatch):
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    FolderStore(root).put("notes/a.md", b"first")
    store = BoundedStore(FolderStore(root), root, Budget(20))
    monkeypatch.setattr(FolderStore, "read", _kill_self)  # the child (forked now) dies in the middle of the call
    with pytest.raises(worker.Ended, match="its process ended"):
        store.read("notes/a.md")
    assert store.down is None  # not an outage: a child that died says nothing of the folder
    monkeypatch.undo()
    assert store.read("notes/a.md") == b"first"  # a new child, forked without the patch
    store.close()


def test_an_answer_cut_short_fails_the_call(tmp_path, monkeypatch):
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    FolderStore(root).put("notes/a.md", b"x" * 100_000)
    store = BoundedStore(FolderStore(root), root, Budget(20))
    command = os.getpid()
    write_all = worker._write_all

    def half(fd: int, data: bytes) -> None:  # the child writes half its answer, then dies
        if os.getpid() == command:
            write_all(fd, data)
            return
        os.write(fd, data[: len(data) // 4])
        os._exit(1)

    monkeypatch.setattr(worker, "_write_all", half)
    with pytest.raises(worker.Ended, match="cut short"):
        store.read("notes/a.md")
    monkeypatch.undo()
    assert store.read("notes/a.md") == b"x" * 100_000
    store.close()


@pytest.mark.parametrize("when", ["before-writing", "after-the-object"])
def test_a_save_whose_child_is_killed_is_pending_or_saved_with_its_bytes_never_half(
    ready, folder_store, monkeypatch, when
):
    root = Path(folder_store[len("file://") :])
    body = "The pool holds eight sockets.\n" * 50
    if when == "before-writing":
        monkeypatch.setattr(FolderStore, "put_many", _kill_self)
    else:  # the object is in place, its line in the store's record and the answer are not
        monkeypatch.setattr(FolderStore, "_record", _kill_self)
    result = ready.save(body, "--title", "Pool size")
    monkeypatch.undo()
    note = result.json
    if when == "before-writing":
        tools.exited(result, 75)
        assert note["status"] == "pending", note
        assert _objects(root) == {}
        retried = ready.run("pending", "retry", note["id"], "--json")
        tools.exited(retried)
    else:  # read back after the lost answer: it is there, whole (`landed_anyway`)
        assert note["status"] in ("saved", "pending"), note
        if note["status"] == "pending":
            tools.exited(ready.run("pending", "retry", note["id"], "--json"))
    assert ready.run("status", "--json").json["pending"] == []
    stored = _objects(root)
    assert list(stored) == [note["path"]], stored
    assert stored[note["path"]].endswith(body.encode())  # the bytes that were saved, once, whole
    read = ready.run("read", note["id"], "--json")
    tools.exited(read)
    assert read.json["id"] == note["id"]


def test_the_child_holds_none_of_the_commands_descriptors(tmp_path):
    """The agent reads a hook's output to its end: a child left blocked must not hold it open (nor a lock)."""
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    kept = os.open(tmp_path / "lock", os.O_CREAT | os.O_RDWR, 0o600)  # as a lock or an output pipe of the command
    store = BoundedStore(FolderStore(root), root, Budget(20))
    try:
        store.put("notes/a.md", b"first")
        child = store._workers[0].pid
        held = {os.readlink(f"/proc/{child}/fd/{fd}") for fd in os.listdir(f"/proc/{child}/fd")}
        assert str(tmp_path / "lock") not in held, held
        assert all(path.startswith("pipe:") or path == os.devnull for path in held), held
    finally:
        store.close()
        os.close(kept)


def test_a_call_made_while_notes_are_read_gets_a_child_of_its_own(tmp_path):
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    FolderStore(root).put_many([(f"notes/{i}.md", f"note {i}".encode()) for i in range(3)])
    store = BoundedStore(FolderStore(root), root, Budget(20))
    listing = store.list("notes")
    read = []
    for info, data in store.read_many(list(listing)):
        read.append(data)
        assert store.read(info.path) == data  # answered by another child: the first still hands notes over
    assert sorted(read) == [b"note 0", b"note 1", b"note 2"]
    assert len(store._workers) == 2
    store.close()
