"""Search refreshes from the bucket's change feed: one request when nothing is new, the replay and the downloads
of the new notes otherwise; the whole listing when there is no cursor yet, on `reset`, without the feed, when
the cursor is a day old, and after damage; every note is found under each of them.

Through the command line against the Hub emulator (real huggingface_hub and hf_xet), counting its requests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from huggingface_hub import HfApi

import tools
from conftest import BUCKET

NOTE = "projects/demo/notes/{}.md"


def _note(index: int, word: str = "plain", stamp: str = "20260101-000000") -> tuple[str, bytes]:
    note_id = f"{stamp}-{index:06d}-00000000ee"
    return NOTE.format(note_id), f"---\nid: {note_id}\ntitle: Note {index}\n---\n\n{word} note {index}\n".encode()


def _seed(hub, count: int, word: str = "plain", start: int = 0, **kwargs) -> dict[str, bytes]:
    files = dict(_note(i, word, **kwargs) for i in range(start, start + count))
    hub.put_files(BUCKET, files)
    return files


def _search(machine, query: str = "note", *args: str) -> dict:
    result = machine.run("search", query, "--limit", "1000", "--json", *args)
    tools.exited(result)
    return result.json


def _requests(hub) -> list[str]:
    return [endpoint for _method, endpoint, _path in hub.requests]


def _stands(machine) -> Path:
    [file] = (machine.state / "cache").glob("*/projects/demo/stands.json")
    return file


@pytest.fixture
def reader(machine, hub):
    """A machine whose cache of 1,200 notes was filled by one listing (12 pages of 100)."""
    hub.page_size = 100
    _seed(hub, 1200)
    machine.setup(BUCKET)
    first = _search(machine)
    assert first["freshness"]["kind"] == "listing" and len(first["results"]) == 1000
    assert _requests(hub).count("tree") == 12
    hub.reset_requests()
    return machine


def test_nothing_new_costs_one_request_and_no_listing(reader, hub):
    for _ in range(2):
        found = _search(reader)
        assert found["freshness"] == {
            "status": "fresh",
            "reason": None,
            "detail": None,
            "kind": "changes",
            "skipped": [],
            "gone": [],
        }
        assert len(found["results"]) == 1000
        assert _requests(hub) == ["events"]
        hub.reset_requests()
    deadline = time.monotonic() + 2  # the stream was closed at `ready` (the feed keeps it open for a minute)
    while hub.open_streams and time.monotonic() < deadline:
        time.sleep(0.02)
    assert hub.open_streams == 0


def test_a_few_new_notes_cost_the_replay_and_their_downloads(reader, hub):
    new = _seed(hub, 3, word="fresh", stamp="20260102-000000")
    found = _search(reader, "fresh note")
    assert found["freshness"]["kind"] == "changes"
    assert sorted(r["path"] for r in found["results"]) == sorted(new)
    assert "tree" not in _requests(hub) and "paths-info" not in _requests(hub)
    assert _requests(hub)[0] == "events" and _requests(hub).count("events") == 1
    assert _requests(hub).count("xet-read-token") == 1  # one download group for the three
    [cache] = (reader.state / "cache").glob("*/projects/demo/notes")
    assert {NOTE.format(p.stem): p.read_bytes() for p in cache.glob("2026010[2]*.md")} == new


def test_other_projects_and_skills_are_passed_over_without_downloads(reader, hub):
    hub.put_files(
        BUCKET,
        {
            "projects/other/notes/20260103-000000-000001-00000000ff.md": b"---\ntitle: Other\n---\n\nnote\n",
            "projects/demo/notes2/20260103-000000-000002-00000000ff.md": b"not in the notes folder\n",
            "projects/demo/notes/not-a-note.txt": b"not a note\n",
            "skills/tidy/20260103-000000/SKILL.md": b"---\nname: tidy\n---\n\nnote\n",
        },
    )
    found = _search(reader)
    assert found["freshness"]["kind"] == "changes" and len(found["results"]) == 1000
    assert _requests(hub) == ["events"]


def test_a_note_overwritten_or_deleted_in_the_bucket_is_followed(reader, hub):
    path, data = _note(7)
    newer = data.replace(b"plain note 7", b"other note 7")  # same size, other bytes
    hub.put_file(BUCKET, path, newer)
    found = _search(reader, "other note 7")
    assert found["freshness"]["kind"] == "changes" and [r["path"] for r in found["results"]] == [path]
    assert reader.run("read", path.split("/")[-1][:-3]).out.encode() == newer

    gone, _data = _note(8)
    HfApi(endpoint=hub.url, token=reader.env["HF_TOKEN"]).batch_bucket_files(BUCKET, delete=[gone])  # its owner
    found = _search(reader, '"plain note 8"', "--limit", "1000")  # also notes 80 to 89 and 800 to 899
    assert (
        found["freshness"]["kind"] == "listing" and len(found["results"]) == 110
    )  # a delete is confirmed by a listing
    assert gone not in [r["path"] for r in found["results"]] and found["freshness"]["gone"] == [gone]  # and told
    assert not list((reader.state / "cache").glob(f"*/{gone}"))
    assert [g["path"] for g in reader.run("status", "--json").json["gone"]] == [gone]


def test_own_saves_come_back_in_the_feed_without_a_download(reader, hub):
    saved = reader.save("# Saved here\n\nsaved on this machine\n").json
    hub.reset_requests()
    found = _search(reader, "saved on this machine")
    assert [r["id"] for r in found["results"]] == [saved["id"]] and found["freshness"]["kind"] == "changes"
    assert _requests(hub) == ["events"]


def test_reset_falls_back_to_the_listing_and_finds_every_note(reader, hub):
    _seed(hub, 5, word="late", stamp="20260104-000000")
    hub.feed_buffer(0)  # the feed's replay buffer no longer reaches back to the reader's cursor
    found = _search(reader, "late note")
    assert found["freshness"]["kind"] == "listing" and len(found["results"]) == 5
    assert _requests(hub).count("tree") == 13
    hub.reset_requests()
    assert _search(reader, "late note")["freshness"]["kind"] == "changes"  # the listing recorded a new cursor
    assert _requests(hub) == ["events"]


@pytest.mark.parametrize("status", [401, 403, 404, 500, 501])
def test_an_unavailable_feed_falls_back_to_the_listing(reader, hub, status):
    hub.feed_off(status)
    _seed(hub, 2, word="unfollowed", stamp="20260105-000000")
    found = _search(reader, "unfollowed note")
    assert (
        found["freshness"]["status"] == "fresh"
        and found["freshness"]["kind"] == "listing"
        and len(found["results"]) == 2
    )
    assert _requests(hub).count("tree") == 13
    hub.reset_requests()
    # the bucket's updatedAt stands in for the cursor: unchanged, one small request tells that nothing is new
    assert _search(reader, "unfollowed")["freshness"]["kind"] == "changes" and _requests(hub) == ["info"]
    HfApi(endpoint=hub.url, token=reader.env["HF_TOKEN"]).batch_bucket_files(BUCKET, add=[(b"x", "skills/a/1/x")])
    hub.reset_requests()
    assert _search(reader, "unfollowed")["freshness"]["kind"] == "listing"  # any write to the bucket changes it
    assert _requests(hub).count("tree") == 13
    hub.feed_on()
    stands = _stands(reader)  # the next daily listing follows the feed again
    stands.write_text(json.dumps({**json.loads(stands.read_text()), "listed": "2020-01-01T00:00:00Z"}))
    assert _search(reader, "unfollowed")["freshness"]["kind"] == "listing"
    hub.reset_requests()
    assert _search(reader, "unfollowed")["freshness"]["kind"] == "changes" and _requests(hub) == ["events"]


def test_a_note_written_while_the_feed_was_off_is_found_by_the_next_search(reader, hub):
    hub.feed_off()
    _seed(hub, 1, word="unseen", stamp="20260106-000000")
    hub.feed_on()
    found = _search(reader, "unseen note")
    assert found["freshness"]["kind"] == "changes" and len(found["results"]) == 1


def test_a_note_from_a_machine_with_a_wrong_clock_is_found(reader, hub):
    """The cursor is the feed's own position, not a time: a note stamped years back still comes after it."""
    _seed(hub, 1, word="backdated", stamp="19990101-000000")
    found = _search(reader, "backdated note")
    assert found["freshness"]["kind"] == "changes" and len(found["results"]) == 1


@pytest.mark.parametrize("listed", ["2020-01-01T00:00:00Z", "2999-01-01T00:00:00Z", "garbage"])
def test_a_cursor_a_day_old_or_from_a_clock_set_back_lists_again(reader, hub, listed):
    stands = _stands(reader)
    stands.write_text(json.dumps({**json.loads(stands.read_text()), "listed": listed}))
    _seed(hub, 1, word="daily", stamp="20260107-000000")
    found = _search(reader, "daily note")
    assert found["freshness"]["kind"] == "listing" and len(found["results"]) == 1
    assert json.loads(stands.read_text())["listed"] != listed
    hub.reset_requests()
    assert _search(reader, "daily")["freshness"]["kind"] == "changes"


def test_a_note_damaged_on_disk_is_healed_by_the_next_listing(reader, hub):
    """Damage no search has met yet (a note the queries do not match) is mended by the daily listing."""
    [cache] = (reader.state / "cache").glob("*/projects/demo/notes")
    path, data = _note(1199)
    os.truncate(cache / path.split("/")[-1], 5)
    assert _search(reader, "plain note 0")["freshness"]["kind"] == "changes"
    stands = _stands(reader)
    stands.write_text(json.dumps({**json.loads(stands.read_text()), "listed": "2020-01-01T00:00:00Z"}))
    assert _search(reader, "plain note 1")["freshness"]["kind"] == "listing"
    assert (cache / path.split("/")[-1]).read_bytes() == data


def test_damage_found_by_a_search_makes_the_next_refresh_list(reader, hub):
    [cache] = (reader.state / "cache").glob("*/projects/demo/notes")
    path, data = _note(3)
    (cache / path.split("/")[-1]).write_bytes(data.replace(b"plain", b"PLAIN"))  # same size, other bytes
    offline = _search(reader, "plain note 3", "--offline", "--limit", "1000")  # every note whose number has a 3
    damaged = {r["path"]: r["matches"] for r in offline["results"]}
    assert damaged.pop(path) == [] and all(damaged.values())  # shown without its damaged lines, then discarded
    assert not list((reader.state / "cache").glob("*/projects/demo/stands.json"))
    found = _search(reader, "plain note 3", "--limit", "1000")
    assert found["freshness"]["kind"] == "listing" and path in [r["path"] for r in found["results"]]
    assert (cache / path.split("/")[-1]).read_bytes() == data


def test_a_hung_feed_falls_back_to_the_listing_within_the_budget(reader, hub):
    hub.fault("events", "hang", seconds=60)
    _seed(hub, 1, word="patient", stamp="20260108-000000")
    started = time.monotonic()
    result = reader.run("search", "patient note", "--json", env={"AGENT_MEMORY_TIMEOUT": "6"})
    tools.exited(result)
    assert time.monotonic() - started < tools.scaled(6)  # the feed hangs for 60 s
    assert result.json["freshness"]["kind"] == "listing" and len(result.json["results"]) == 1


@pytest.mark.slow
def test_concurrent_searches_while_notes_arrive_lose_none(reader, hub):
    workers = []
    for round_ in range(3):
        _seed(hub, 4, word="racing", start=round_ * 4, stamp="20260109-000000")
        workers += [reader.popen("search", "racing note", "--json") for _ in range(2)]
    workers.append(reader.popen("save", "--json", input=b"racing note saved here meanwhile"))
    for worker in workers:
        tools.exited(tools.finished(worker, timeout=120))
    found = _search(reader, "racing note")
    assert found["freshness"]["status"] == "fresh" and len(found["results"]) == 13
    _seed(hub, 1, word="racing", start=99, stamp="20260109-000000")
    hub.feed_buffer(0)  # reset: a listing now, which must agree that the feed left nothing out
    listed = _search(reader, "racing note")
    assert listed["freshness"]["kind"] == "listing" and len(listed["results"]) == 14


@pytest.mark.parametrize("missing", ["build_hf_headers", "get_session"])
def test_an_sdk_without_the_helpers_the_feed_uses_falls_back_to_the_listing(reader, hub, missing):
    """The feed is read with the SDK's public HTTP session and headers only; should a release drop either, every
    search lists, as before the feed was used: a process whose SDK lacks one searches."""
    sdk_without_it = (
        "import huggingface_hub.hf_api\n"  # the SDK's own modules hold what they import: only the public name goes
        "import huggingface_hub.utils as utils\n"
        f"utils._ATTR_TO_MODULE.pop({missing!r})\n"  # its utils are loaded lazily, by this table
        f"vars(utils).pop({missing!r}, None)\n"
        "try:\n"
        f"    from huggingface_hub.utils import {missing}\n"
        "except ImportError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('the SDK still has it')\n"
        "from agent_memory.entry import main\n"
        "raise SystemExit(main())\n"
    )
    _seed(hub, 1, word="listed", stamp="20260110-000000")
    proc = subprocess.run(
        [sys.executable, "-c", sdk_without_it, "search", "listed note", "--limit", "1000", "--json"],
        capture_output=True,
        cwd=reader.work,
        env=reader.env,
        timeout=120,
    )
    tools.exited(proc)
    found = json.loads(proc.stdout)
    assert (
        found["freshness"]["status"] == "fresh"
        and found["freshness"]["kind"] == "listing"
        and len(found["results"]) == 1
    )
    assert "events" not in _requests(hub)
