"""The cache is only a cache: damage to it (files cut short or altered, a torn append to the search pack, lost
bookkeeping) never hides or alters a note after an online refresh, and `read` never returns damaged bytes.

Against the folder store and the Hub emulator (real huggingface_hub and hf_xet), through the command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tools
from conftest import BUCKET

WORDS = ("amber", "birch", "cedar", "dune", "elm")


@pytest.fixture(params=["folder", "hub"])
def shared(request, machine, machine_b, tmp_path):
    """Machine A saves five notes to a bucket; machine B caches them with one search: `(a, b, store files)`."""
    if request.param == "hub":
        hub = request.getfixturevalue("hub")
        bucket = BUCKET

        def stored() -> dict[str, bytes]:
            return {p: hub.read_file(BUCKET, p) for p in hub.list_paths(BUCKET) if p.startswith("projects/")}
    else:
        store = tmp_path / "store"
        store.mkdir(mode=0o700)
        bucket = f"file://{store}"

        def stored() -> dict[str, bytes]:
            return {f.relative_to(store).as_posix(): f.read_bytes() for f in store.rglob("*.md")}

    a, b = machine.setup(bucket), machine_b.setup(bucket)
    for word in WORDS:
        tools.exited(a.save(f"# About {word}\n\nThe {word} note, shared by every machine.\n"))
    found = b.run("search", "shared by every", "--json")
    tools.exited(found)
    assert len(found.json["results"]) == 5, found.err
    return a, b, stored


def _project_cache(machine) -> Path:
    [folder] = (machine.state / "cache").glob("*/projects/demo")
    return folder


def _cached(machine) -> dict[str, bytes]:
    return {f"projects/demo/notes/{f.name}": f.read_bytes() for f in (_project_cache(machine) / "notes").glob("*.md")}


def _search_all(machine, *args: str) -> dict:
    result = machine.run("search", "shared by every", "--limit", "1000", "--json", *args)
    tools.exited(result)
    return result.json


def _assert_whole(machine, stored) -> None:
    """Every note found with its own line, and every cached copy byte for byte the bucket's."""
    found = _search_all(machine)
    assert found["freshness"]["status"] == "fresh"
    assert sorted(r["title"] for r in found["results"]) == sorted(f"About {w}" for w in WORDS)
    for result in found["results"]:
        word = result["title"].split()[-1]
        assert result["matches"] == [{"line": 3, "text": f"The {word} note, shared by every machine."}]
    assert _cached(machine) == stored()


@pytest.mark.parametrize("pack", ["kept", "lost"])
def test_a_cache_cut_short_is_healed_by_the_next_online_search(shared, pack):
    _a, b, stored = shared
    for file in (_project_cache(b) / "notes").glob("*.md"):
        os.truncate(file, 10)
    if pack == "lost":  # rebuilt from the cut files, it would find nothing
        (_project_cache(b) / "search.pack").unlink()
    _assert_whole(b, stored)


def test_a_copy_altered_in_place_is_never_shown_and_is_fetched_again(shared):
    _a, b, stored = shared
    [first, *_] = sorted((_project_cache(b) / "notes").glob("*.md"))
    data = first.read_bytes()
    first.write_bytes(data.replace(b"shared by every", b"SHARED BY EVERY").replace(b"The ", b"Thy "))  # same size
    offline = _search_all(b, "--offline")
    altered = [r for r in offline["results"] if r["id"] == first.stem]
    assert altered and altered[0]["matches"] == []  # listed, but its damaged lines are not shown
    _assert_whole(b, stored)
    read = b.run("read", first.stem, "--json").json
    assert read["source"] == "cache" and read["content"].encode() == data


def test_lost_bookkeeping_is_rebuilt_from_the_bucket(shared):
    _a, b, stored = shared
    (_project_cache(b) / "checksums").unlink()
    (_project_cache(b) / "search.pack").write_bytes(b"not a pack")
    _assert_whole(b, stored)


def test_a_torn_append_to_the_pack_is_found_and_the_pack_rebuilt(shared):
    _a, b, stored = shared
    pack = _project_cache(b) / "search.pack"
    whole = pack.read_bytes()
    last = whole.rfind(b"\x00")
    pack.write_bytes(whole[: last + (len(whole) - last) // 2])  # a crash in the middle of the last append
    offline = _search_all(b, "--offline")
    assert len(offline["results"]) == 5  # found and rebuilt by the offline search itself
    assert pack.read_bytes() == whole

    # a torn record followed by whole ones (a later append): the next online refresh rebuilds the pack
    first = whole.find(b"\x00", 1)
    pack.write_bytes(whole[: first // 2] + whole[first:])
    _assert_whole(b, stored)
    assert pack.read_bytes() == whole


def test_read_of_a_damaged_copy_fetches_the_bucket_copy_or_fails_clearly(shared, tmp_path):
    _a, b, stored = shared
    notes = sorted((_project_cache(b) / "notes").glob("*.md"))
    original = notes[0].read_bytes()
    notes[0].write_bytes(original[:-5] + b"XXXXX")
    read = b.run("read", notes[0].stem, "--json")
    tools.exited(read)
    assert read.json["source"] == "bucket" and read.json["content"].encode() == original
    assert notes[0].read_bytes() == original  # healed
    assert b.run("read", notes[0].stem, "--json").json["source"] == "cache"

    notes[1].write_bytes(b"damaged")
    offline = {
        "HF_ENDPOINT": "http://127.0.0.1:9",  # nothing listens there
        "HF_HUB_OFFLINE": "1",
    }
    store = b.run("config", "show", "--json").json["bucket"]
    if store.startswith("file://"):
        os.rename(store[len("file://") :], tmp_path / "away")  # the drive is unmounted
    damaged = b.run("read", notes[1].stem, env=offline)
    tools.exited(damaged, 1)
    assert damaged.out == ""
    assert "The cached copy of projects/demo/notes/" in damaged.err and "is damaged (not shown)" in damaged.err
    assert "\nNext: " in damaged.err


def test_a_note_changed_in_the_bucket_is_fetched_again(machine, hub):
    """The Hub cannot refuse an overwrite: the listing's hash shows that a cached note is no longer the bucket's."""
    a = machine.setup(BUCKET)
    note = a.save("# Version\n\nThe first version of this note.\n").json
    assert a.run("search", "version", "--json").json["freshness"]["status"] == "fresh"
    newer = hub.read_file(BUCKET, note["path"]).replace(b"first", b"other")  # same size, other bytes
    hub.put_file(BUCKET, note["path"], newer)
    found = a.run("search", "of this note", "--json").json
    assert found["results"][0]["matches"] == [{"line": 3, "text": "The other version of this note."}]
    assert a.run("read", note["id"]).out.encode() == newer


@pytest.mark.slow
def test_concurrent_searches_and_saves_on_a_damaged_cache_lose_nothing(shared):
    a, b, stored = shared
    for file in (_project_cache(b) / "notes").glob("*.md"):
        os.truncate(file, 3)
    pack = _project_cache(b) / "search.pack"
    pack.write_bytes(pack.read_bytes()[:-9])
    workers = [b.popen("search", "shared by every", "--json") for _ in range(4)]
    workers += [b.popen("save", "--json", input=f"shared by every machine, saved {i}".encode()) for i in range(4)]
    for worker in workers:
        tools.exited(tools.finished(worker, timeout=120))
    found = _search_all(b)
    assert len(found["results"]) == 9, found["freshness"]
    assert _cached(b) == stored()
    assert len(_search_all(b, "--offline")["results"]) == 9


@pytest.mark.slow
def test_a_refresh_killed_at_any_point_leaves_a_cache_that_the_next_one_heals(machine, machine_b, folder_store):
    store = Path(folder_store[len("file://") :])
    count = 1000
    for index in range(count):
        note = store / "projects" / "demo" / "notes" / f"20260101-000000-{index:06d}-00000000aa.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_bytes(f"---\nid: {note.stem}\ntitle: Note {index}\n---\n\nkilled refresh {index}\n".encode())
    b = machine_b.setup(folder_store)
    partial, delay, step, killed = 0, 0.1, 1.3, 0.1
    while True:  # kill refreshes later and later, until one finishes first: each kill lands at a new stage
        worker = b.popen("search", "killed refresh")
        try:
            worker.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.communicate()
            cached = len(list((b.state / "cache").glob("*/projects/demo/notes/*.md")))
            downloading = list((b.state / "cache").glob("*/projects/demo/.download-*"))
            partial, killed, delay = partial + bool(downloading or 0 < cached < count), delay, delay * step
            continue
        tools.exited(tools.finished(worker, timeout=120))
        if partial or step < 1.01:
            break
        # it finished before any kill landed halfway through its download (a loaded machine's start-up can take
        # longer than the download, and one step may jump over it): empty the cache, and step finer from the
        # last kill
        for cache in (b.state / "cache").glob("*/projects/demo"):
            shutil.rmtree(cache)
        step = 1 + (step - 1) / 2
        delay = killed * step
    assert partial  # at least one refresh was killed halfway through a download
    found = b.run("search", "killed refresh", "--limit", "1000", "--json")
    tools.exited(found)
    assert len(found.json["results"]) == count
    assert all(len(r["matches"]) == 1 for r in found.json["results"])
    cached = {f.name: f.read_bytes() for f in (_project_cache(b) / "notes").glob("*.md")}
    assert cached == {f.name: f.read_bytes() for f in store.rglob("*.md")}
    assert not list(_project_cache(b).glob(".download-*"))


@pytest.mark.slow
def test_a_large_download_cut_short_keeps_its_finished_batches(machine, hub):
    files = {
        f"projects/demo/notes/20260101-000000-{i:06d}-00000000bb.md": f"---\ntitle: N{i}\n---\n\nbatch {i}\n".encode()
        for i in range(1500)
    }
    hub.put_files(BUCKET, files)
    a = machine.setup(BUCKET)
    hub.fault("xet-read-token", "fail", status=500, after=1, times=0)  # the second batch cannot download
    # real processes, as a user's: a transfer given up on ends with its process, and hf_xet starts with its own
    # settings; inside the test process (`in_process`) both would carry over from the worker's earlier tests
    cut = a.run("search", "batch", "--json", process=True)
    tools.exited(cut)
    assert cut.json["freshness"]["status"] == "stale", cut.out
    assert len(_cached(a)) == 1000, cut.out  # the first batch is kept
    assert len(a.run("search", "batch", "--offline", "--limit", "1000", "--json").json["results"]) == 1000
    hub.clear_faults()
    whole = a.run("search", "batch", "--limit", "1000", "--json", process=True)
    assert whole.json["freshness"]["status"] == "fresh" and len(whole.json["results"]) == 1000, whole.json["freshness"]
    assert _cached(a) == files


def test_search_reads_the_pack_in_blocks_and_finds_every_record(machine, folder_store):
    """The pack is read a block (1 MiB) at a time: records cut by a block, or longer than one, are found whole."""
    store = Path(folder_store[len("file://") :]) / "projects" / "demo" / "notes"
    store.mkdir(parents=True)
    for index in range(25):  # about 2.5 MiB of pack: records straddle the block boundaries
        filler = f"filler line {index}\n" * 6000
        body = f"---\ntitle: Long {index}\n---\n\nneedle-start {index}\n{filler}needle-end {index}\n"
        (store / f"20260101-000000-{index:06d}-00000000cc.md").write_text(body)
    ready = machine.setup(folder_store)
    longest = "x" * (1024 * 1024 - 20) + "\nneedle-end big\n"  # a 1 MiB note: its record outgrows a block
    tools.exited(ready.save(longest))
    for args in ((), ("--offline",)):
        found = ready.run("search", "needle-end", "--limit", "1000", "--json", *args).json["results"]
        assert len(found) == 26
        assert all(len(r["matches"]) == 1 and r["matches"][0]["text"].startswith("needle-end") for r in found)
        assert len(ready.run("search", "needle-start", "--json", "--limit", "1000", *args).json["results"]) == 25
        assert len(ready.run("search", "--json", "--limit", "1000", *args).json["results"]) == 26
