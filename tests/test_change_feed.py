"""The change feed's reader takes the stream as hostile data: bounded lines, events and replays, a deadline, and
nothing half understood (which makes the refresh list instead).

The stream's bytes are given directly here (the emulator cannot send malformed ones); the reader meets the real
feed through the command line in test_incremental_refresh.py.
"""

from __future__ import annotations

import json
import time

import pytest

from agent_memory.store import change_feed
from agent_memory.store.change_feed import Unfollowable, head_or_changes


def _event(name: str, payload: object) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def _read(*sessions: list[bytes], cursor: str | None = "c0", seconds: float = 5.0):
    opened: list[dict[str, str]] = []
    closed: list[int] = []
    streams = iter(sessions)

    def open_stream(params):
        opened.append(params)
        try:
            yield from next(streams)
        finally:
            closed.append(len(opened))

    replay = head_or_changes(open_stream, cursor, "projects/demo/notes", deadline=time.monotonic() + seconds)
    return replay, opened, closed


ADD = {"path": "projects/demo/notes/a.md", "op": "add", "size": 3, "xetHash": "ab" * 32}


def test_changes_are_merged_per_path_and_filtered_by_folder():
    batch = [
        ADD,
        {"path": "projects/demo/notes/a.md", "op": "update", "size": 5},  # only what changed
        {"path": "projects/other/notes/b.md", "op": "add", "size": 1, "xetHash": "cd" * 32},
        {"path": "skills/x/1/SKILL.md", "op": "add", "size": 1, "xetHash": "ef" * 32},
        {"path": "projects/demo/notes/c.md", "op": "delete"},
    ]
    replay, opened, closed = _read(
        [
            _event("changes", {"cursor": "c1", "changes": batch}),
            b": ping\n\n",
            _event("ready", {"cursor": "c2"}),
            b"never read\n",
        ]
    )
    assert replay.cursor == "c2" and opened == [{"cursor": "c0"}] and closed == [1]
    assert sorted(replay.changes) == ["projects/demo/notes/a.md", "projects/demo/notes/c.md"]
    a = replay.changes["projects/demo/notes/a.md"]
    assert (a.added, a.size, a.hash, a.deleted) == (True, 5, "ab" * 32, False)
    assert replay.changes["projects/demo/notes/c.md"].deleted


@pytest.mark.parametrize("split", [1, 2, 7, 100])
@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_lines_split_anywhere_with_any_line_ending(split, ending):
    stream = (_event("changes", {"cursor": "c1", "changes": [ADD]}) + _event("ready", {})).replace(b"\n", ending)
    chunks = [stream[i : i + split] for i in range(0, len(stream), split)]
    replay, _opened, _closed = _read(chunks)
    assert replay.cursor == "c1" and list(replay.changes) == ["projects/demo/notes/a.md"]


def test_no_cursor_asks_for_where_the_feed_stands():
    replay, opened, _closed = _read([_event("ready", {"cursor": "head"})], cursor=None)
    assert (replay.cursor, replay.changes, opened) == ("head", {}, [{}])
    replay, _opened, _closed = _read([_event("ready", {})], cursor=None)  # a bucket that never changed
    assert replay.cursor is None


def test_reconnect_resumes_from_its_cursor_a_few_times_only():
    first = [_event("changes", {"cursor": "c1", "changes": [ADD]}), _event("reconnect", {"cursor": "c1"})]
    replay, opened, closed = _read(first, [_event("ready", {"cursor": "c1"})])
    assert opened == [{"cursor": "c0"}, {"cursor": "c1"}] and closed == [1, 2] and len(replay.changes) == 1
    again = [_event("reconnect", {"cursor": "c0"})]
    with pytest.raises(Unfollowable, match="reconnect 3 times"):
        _read(again, again, again, again)


@pytest.mark.parametrize(
    ("stream", "reason"),
    [
        ([_event("reset", {"reason": "too old"})], "reset"),
        ([b": only keep-alives\n\n"], "ended"),
        ([b"event: changes\ndata: {not json\n\n"], "invalid"),
        ([_event("changes", {"cursor": "c1", "changes": [{"path": "p", "op": "rename"}]})], "invalid"),
        ([_event("changes", {"cursor": "c1", "changes": [{**ADD, "size": -1}]})], "invalid"),
        ([_event("changes", {"cursor": "c1", "changes": [{**ADD, "size": True}]})], "invalid"),
        ([_event("changes", {"cursor": "c1", "changes": [{**ADD, "path": "x" * 2000}]})], "invalid"),
        ([_event("changes", {"cursor": 5, "changes": []})], "invalid"),
        ([_event("ready", {"cursor": ["c"]})], "invalid"),
        ([b"data: " + b"x" * (change_feed.MAX_LINE + 10)], "long"),
        ([b"data: " + b"x" * 1000 + b"\n"] * (change_feed.MAX_EVENT // 1000 + 2), "long"),
    ],
)
def test_what_is_not_understood_in_full_is_unfollowable(stream, reason):
    with pytest.raises(Unfollowable) as refused:
        _read(stream)
    assert refused.value.reason == reason


def test_a_replay_past_its_size_limit_is_cut(monkeypatch):
    monkeypatch.setattr(change_feed, "MAX_REPLAY", 10_000)
    many = [_event("changes", {"cursor": f"c{i}", "changes": [ADD]}) for i in range(200)]
    with pytest.raises(Unfollowable) as refused:
        _read(many)
    assert refused.value.reason == "long"


def test_a_feed_that_does_not_get_ready_in_time_is_given_up():
    def trickle():
        while True:
            time.sleep(0.05)
            yield b": keep-alive\n\n"

    started = time.monotonic()
    with pytest.raises(Unfollowable) as refused:
        _read(trickle(), seconds=0.3)
    assert refused.value.reason == "slow" and time.monotonic() - started < 2
