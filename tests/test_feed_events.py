"""The change feed can only make the cache fresher: an event that cannot be applied as told (a missing object, a
size or hash that the download does not have, a huge size, a delete) sends the refresh to the listing, which
finds every note as it is in the bucket; a delete never drops a note that the bucket still holds.

Through the command line against the Hub emulator (real huggingface_hub and hf_xet), whose feed is made to tell
what did not happen (`HubEmulator.feed_event`).
"""

from __future__ import annotations

import pytest

import tools
from conftest import BUCKET

NOTE = "projects/demo/notes/{}.md"
COUNT = 30


def _note(index: int, word: str = "plain") -> tuple[str, bytes]:
    note_id = f"20260101-000000-{index:06d}-00000000ee"
    return NOTE.format(note_id), f"---\nid: {note_id}\ntitle: Note {index}\n---\n\n{word} note {index}\n".encode()


def _search(machine, query: str = "note") -> dict:
    result = machine.run("search", query, "--limit", "1000", "--json")
    tools.exited(result)
    return result.json


def _requests(hub) -> list[str]:
    return [endpoint for _method, endpoint, _path in hub.requests]


@pytest.fixture
def reader(machine, hub):
    """A machine whose cache holds the bucket's COUNT notes, and stands at the feed's head."""
    hub.put_files(BUCKET, dict(_note(i) for i in range(COUNT)))
    machine.setup(BUCKET)
    assert _search(machine)["freshness"]["kind"] == "listing"
    assert _search(machine)["freshness"]["kind"] == "changes"
    hub.reset_requests()
    return machine


def _fresh_and_complete(reader, hub, *, extra: dict[str, bytes] | None = None, count: int = COUNT) -> dict:
    """The search after a hostile event: fresh, by the listing, with every note of the bucket as it is there; the
    one after it follows the feed again (the listing moved the cursor past the event)."""
    found = _search(reader)
    assert found["freshness"]["status"] == "fresh" and found["freshness"]["kind"] == "listing", found["freshness"]
    assert found["freshness"]["gone"] == [] and found["freshness"]["skipped"] == []
    expected = {path for path in hub.list_paths(BUCKET) if path.startswith("projects/demo/notes/")}
    assert {r["path"] for r in found["results"]} == expected and len(expected) == count
    for path, data in (extra or {}).items():
        read = reader.run("read", path.split("/")[-1][:-3])
        tools.exited(read)
        assert read.out.encode() == data
    hub.reset_requests()
    again = _search(reader)
    assert again["freshness"]["kind"] == "changes" and _requests(hub) == ["events"]
    return found


def test_an_add_of_an_object_that_is_not_there(reader, hub):
    path, _data = _note(900)
    hub.feed_event(BUCKET, {"path": path, "op": "add", "size": 50, "xetHash": "ab" * 32})
    _fresh_and_complete(reader, hub)
    assert not list((reader.state / "cache").glob(f"*/{path}"))


def test_a_size_that_the_download_does_not_have(reader, hub):
    path, data = _note(901, word="resized")
    hub.put_file(BUCKET, path, data)
    hub.feed_event(BUCKET, {"path": path, "op": "update", "size": len(data) - 5})  # the last word: 5 bytes short
    _fresh_and_complete(reader, hub, extra={path: data}, count=COUNT + 1)


def test_a_huge_size_is_never_downloaded_on_the_feeds_word(reader, hub):
    path, data = _note(902, word="huge")
    hub.put_file(BUCKET, path, data)
    hub.feed_event(BUCKET, {"path": path, "op": "update", "size": 1 << 40})
    _fresh_and_complete(reader, hub, extra={path: data}, count=COUNT + 1)


def test_a_hash_that_no_object_has(reader, hub):
    path, data = _note(903, word="rehashed")
    hub.put_file(BUCKET, path, data)
    hub.feed_event(BUCKET, {"path": path, "op": "update", "xetHash": "cd" * 32})  # the size as it is
    _fresh_and_complete(reader, hub, extra={path: data}, count=COUNT + 1)


def test_a_delete_of_a_note_the_bucket_still_holds_drops_nothing(reader, hub):
    path, data = _note(7)
    hub.feed_event(BUCKET, {"path": path, "op": "delete"})
    found = _fresh_and_complete(reader, hub, extra={path: data})
    assert path in {r["path"] for r in found["results"]}
    assert reader.run("status", "--json").json["gone"] == []
