"""Filling an empty cache from a folder store: each note is read once, written in place into the cache and indexed
from the bytes read (never read back); a note that changes between the listing and its copy is never cached with
other bytes than its copy holds, nor indexed from them; and a fill killed at any point, or two at once, leave the
cache exactly right once one of them finishes: a note is shown only when its line vouches for its whole file."""

from __future__ import annotations

import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from binascii import crc32
from pathlib import Path

import pytest

from agent_memory.memory import cache as cache_module
from agent_memory.memory import notes, pack, refresh
from agent_memory.memory.cache import ProjectCache
from agent_memory.store.local import FolderStore

COUNT = 25


@pytest.fixture
def filled_store(tmp_path, monkeypatch) -> tuple[FolderStore, dict[str, bytes]]:
    """A folder store holding COUNT notes of project demo, as the helper writes them; a cache home of its own."""
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(refresh, "BATCH", 10)  # three batches: the first one makes the pack, the others append
    root = tmp_path / "store"
    folder = root / "projects" / "demo" / "notes"
    folder.mkdir(parents=True)
    root.chmod(0o700)
    written = {}
    for index in range(COUNT):
        note_id = f"20260102-0304{index:02d}-000000-0123456789"
        meta = {"id": note_id, "title": f"Finding {index}", "kind": "note", "project": "demo"}
        meta |= {"created": "2026-01-02T03:04:05Z", "agent": "codex", "sources": [], "tags": ["widgets"]}
        written[note_id] = notes.render(meta, f"Widgets need grease ({index}).\n" * (index + 1))
        (folder / f"{note_id}.md").write_bytes(written[note_id])
    return FolderStore(root), written


def _cache(store: FolderStore) -> ProjectCache:
    return ProjectCache(store.uri, "demo")


def _note(store: FolderStore, note_id: str) -> Path:
    return store.root / "projects" / "demo" / "notes" / f"{note_id}.md"


def _listed_then(store: FolderStore, monkeypatch, change) -> None:
    """Make the next refresh use the listing taken now, then `change()` the store before anything is copied."""
    listing = store.list("projects/demo/notes")
    monkeypatch.setattr(store, "list", lambda prefix: listing)
    change()


def _assert_cached_exactly(cache: ProjectCache, expected: dict[str, bytes]) -> None:
    """The cache holds exactly `expected`: the files, their checksums, and a pack of their records in order."""
    assert {f.name[:-3] for f in cache.notes.iterdir()} == set(expected)
    for note_id, data in expected.items():
        assert cache.note_file(note_id).read_bytes() == data
        assert stat.S_IMODE(os.stat(cache.note_file(note_id)).st_mode) == 0o600
    assert cache.verified_checksums() == {i: (len(d), crc32(d), None) for i, d in expected.items()}
    assert _records(cache) == sorted(pack.record(i, expected[i]) for i in expected)
    assert not list(cache.dir.glob(".download-*"))  # every staging folder is gone


def _records(cache: ProjectCache) -> list[bytes]:
    """The pack's records, sorted (each starts with the only NUL it holds)."""
    return sorted(b"\x00" + record for record in cache.pack.read_bytes().split(b"\x00")[1:])


def test_a_first_fill_indexes_each_note_from_its_copy_without_reading_it_back(filled_store, monkeypatch):
    store, written = filled_store
    read_back = []
    real_read_own = cache_module.read_own

    def counting(path, limit):
        read_back.append(path)
        return real_read_own(path, limit)

    monkeypatch.setattr(cache_module, "read_own", counting)
    cache = _cache(store)
    freshness = refresh.refresh(store, cache)
    assert freshness.error is None and not freshness.skipped
    assert read_back == []  # neither the downloads nor the pack, made by appends from the copies
    monkeypatch.setattr(cache_module, "read_own", real_read_own)
    _assert_cached_exactly(cache, written)
    cache.check_pack()  # what a later refresh checks: intact, and exactly the verified notes
    assert cache.pack.read_bytes() == b"".join(pack.record(i, written[i]) for i in sorted(written))


def test_a_fill_writes_each_note_in_place_with_one_read_of_it(filled_store, monkeypatch):
    """No download folder, no rename: each note is read once from the store (one read of its listed size, plus one
    byte) and written once, where the cache keeps it."""
    store, written = filled_store
    reads, renames = [], []
    real_read, real_replace = os.read, os.replace
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    monkeypatch.setattr(os, "replace", lambda *a, **k: renames.append(a) or real_replace(*a, **k))
    cache = _cache(store)
    assert refresh.refresh(store, cache).error is None
    monkeypatch.undo()
    note_reads = sorted(n for n in reads if n - 1 in {len(data) for data in written.values()})
    assert note_reads == sorted(len(data) + 1 for data in written.values())
    assert not [a for a in renames if "notes" in str(a[-1])]  # only the bookkeeping files are replaced whole
    _assert_cached_exactly(cache, written)


def test_a_file_left_without_its_line_is_replaced_never_written_through(filled_store, tmp_path):
    """What a killed fill leaves (a file that no line verifies) is removed and written again; a link planted there
    is removed as a name, and the file it leads to keeps every byte."""
    store, written = filled_store
    cache = _cache(store)
    ids = sorted(written)
    cache.notes.mkdir(parents=True)
    (cache.notes / f"{ids[3]}.md").write_bytes(written[ids[3]][:7])  # cut short
    (cache.notes / f"{ids[4]}.md").write_bytes(written[ids[4]])  # whole, but with no line
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"the user's own file\n")
    (cache.notes / f"{ids[5]}.md").symlink_to(outside)
    linked = tmp_path / "linked.txt"
    linked.write_bytes(b"hard-linked\n")
    os.link(linked, cache.notes / f"{ids[6]}.md")
    assert refresh.refresh(store, cache).error is None
    _assert_cached_exactly(cache, written)
    assert outside.read_bytes() == b"the user's own file\n" and linked.read_bytes() == b"hard-linked\n"


@pytest.mark.parametrize("extra", [b"appended after the listing\n", b"x" * (5 << 20)])
def test_a_note_that_grows_after_the_listing_is_not_cached_until_listed_again(filled_store, monkeypatch, extra):
    store, written = filled_store
    grown = sorted(written)[15]  # in the second batch: the first one is kept
    _listed_then(store, monkeypatch, lambda: _note(store, grown).write_bytes(written[grown] + extra))
    cache = _cache(store)
    freshness = refresh.refresh(store, cache)
    assert freshness.error is not None and f"incomplete download of projects/demo/notes/{grown}.md" in str(
        freshness.error
    )
    assert grown not in cache.verified_checksums()
    kept = {note_id: written[note_id] for note_id in sorted(written)[:15]}  # the notes read before it are kept
    _assert_cached_exactly(cache, kept)

    monkeypatch.undo()  # the next refresh lists again, and fills the rest (the grown note as it is now)
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(store.root.parent / "home"))
    if len(extra) > cache_module.NOTE_FILE_MAX:  # now listed as too large: never fetched (see test_object_bounds)
        _note(store, grown).write_bytes(written[grown] + b"appended after the listing\n")
    assert refresh.refresh(store, cache).error is None
    _assert_cached_exactly(cache, {**written, grown: _note(store, grown).read_bytes()})


@pytest.mark.parametrize("how", ["rewritten", "cut short"])
def test_a_note_changed_after_the_listing_is_indexed_from_what_was_copied_or_not_at_all(filled_store, monkeypatch, how):
    store, written = filled_store
    changed = sorted(written)[13]  # in the second batch: the first one is kept
    data = written[changed]
    new = data.replace(b"Finding 13", b"Changed 13") if how == "rewritten" else data[:-5]
    assert len(new) == len(data) or how == "cut short"
    _listed_then(store, monkeypatch, lambda: _note(store, changed).write_bytes(new))
    cache = _cache(store)
    freshness = refresh.refresh(store, cache)
    if how == "rewritten":  # the size listed, other bytes: cached and indexed as copied, all of it agreeing
        assert freshness.error is None
        _assert_cached_exactly(cache, {**written, changed: new})
        assert b"changed 13" in pack.record(changed, new)
        assert cache.verified([changed]) == {changed: new}
    else:  # not the size listed: neither it nor what follows it is cached, the next refresh takes them
        assert "incomplete download" in str(freshness.error)
        assert changed not in cache.verified_checksums()
        _assert_cached_exactly(cache, {note_id: written[note_id] for note_id in sorted(written)[:13]})


# -- killed and concurrent fills, in processes of their own --------------------------------------------------------

KILLED_COUNT = 400

FILL = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from agent_memory.memory import refresh
    from agent_memory.memory.cache import ProjectCache
    from agent_memory.store.local import FolderStore

    refresh.BATCH = 40  # ten batches: kills land between them as well as inside them
    store = FolderStore(Path(sys.argv[1]))
    print("filling", flush=True)
    freshness = refresh.refresh(store, ProjectCache(store.uri, "demo"))
    sys.exit(0 if freshness.error is None else 3)
    """
)


@pytest.fixture
def large_store(tmp_path, monkeypatch) -> tuple[FolderStore, dict[str, bytes], dict[str, str]]:
    """A folder store of KILLED_COUNT notes of various sizes; the environment of the processes that fill a cache."""
    home = tmp_path / "home"
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(home))
    root = tmp_path / "store"
    folder = root / "projects" / "demo" / "notes"
    folder.mkdir(parents=True)
    root.chmod(0o700)
    rng, written = random.Random(7), {}
    for index in range(KILLED_COUNT):
        note_id = f"20260102-0304{index // 100:02d}-{index:06d}-0123456789"
        meta = {"id": note_id, "title": f"Finding {index}", "kind": "note", "project": "demo"}
        meta |= {"created": "2026-01-02T03:04:05Z", "agent": "codex", "sources": [], "tags": ["widgets"]}
        written[note_id] = notes.render(meta, f"Widgets need grease ({index}).\n" * rng.randint(1, 400))
        (folder / f"{note_id}.md").write_bytes(written[note_id])
    env = {**os.environ, "AGENT_MEMORY_HOME": str(home)}
    return FolderStore(root), written, env


def _filler(store: FolderStore, env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", FILL, str(store.root)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline() == b"filling\n"
    return proc


def _assert_sound(cache: ProjectCache, expected: dict[str, bytes]) -> None:
    """What any moment of a fill leaves: every line vouches for a whole file of the store's bytes, and every whole
    record of the pack is the record of a note that has its line (a torn last one aside)."""
    lines = cache.verified_checksums()
    for note_id, (size, crc, _remote) in lines.items():
        assert (size, crc) == (len(expected[note_id]), crc32(expected[note_id]))
        assert cache.note_file(note_id).read_bytes() == expected[note_id]
    records = cache.pack.read_bytes().split(b"\x00")[1:] if cache.pack.exists() else []
    for record in records:
        whole = b"\x00" + record
        if pack.ends_whole(whole):
            note_id = pack.record_id(whole[19 : whole.index(b"\n")])
            assert note_id in lines and whole == pack.record(note_id, expected[note_id])
        else:
            assert record is records[-1]  # only an append cut by the kill


@pytest.mark.slow
def test_fills_killed_at_random_points_leave_a_cache_the_next_fill_makes_exactly_right(large_store):
    store, written, env = large_store
    cache = _cache(store)
    proc = _filler(store, env)  # how long a whole fill takes here, from its start (imports done), then again
    started = time.monotonic()
    assert proc.wait(timeout=300) == 0
    whole = time.monotonic() - started
    rng, mid_fill = random.Random(11), 0
    for _attempt in range(12):
        shutil.rmtree(cache.dir)  # a new machine each time
        for _kill in range(rng.randint(1, 3)):  # killed once or more, each fill going on from the last one
            proc = _filler(store, env)
            time.sleep(rng.uniform(0, whole))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            _assert_sound(cache, written)
            # counted after each kill: a fill that goes on from a killed one has less left to do, so a later kill of
            # the same attempt often lands after it ended (a whole-suite run on 2026-12-03 counted, after each
            # attempt's last kill only, 1 of 12)
            mid_fill += 0 < len(list(cache.notes.glob("*.md"))) < len(written)
        assert _filler(store, env).wait(timeout=300) == 0
        _assert_cached_exactly(cache, written)
    assert mid_fill >= 3  # kills landed in the middle of fills, not only before or after them


@pytest.mark.slow
def test_two_fills_at_once_share_the_work_and_leave_the_cache_exactly_right(large_store):
    store, written, env = large_store
    cache = _cache(store)
    for _round in range(3):
        shutil.rmtree(cache.dir, ignore_errors=True)
        first, second = _filler(store, env), _filler(store, env)
        assert first.wait(timeout=300) == 0 and second.wait(timeout=300) == 0
        _assert_cached_exactly(cache, written)
    first, second = _filler(store, env), _filler(store, env)  # one of two killed midway: the other finishes it
    time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    assert second.wait(timeout=300) == 0
    _assert_sound(cache, written)
    assert _filler(store, env).wait(timeout=300) == 0
    _assert_cached_exactly(cache, written)


def test_a_fill_does_not_read_back_the_pack_it_appended_whole(filled_store, monkeypatch):
    """The final check of a fill that appended every record itself, from the bytes it read, reads nothing: the pack
    and `checksums` are as its last batch left them."""
    store, written = filled_store
    scans = []
    real_scan = pack.scan
    monkeypatch.setattr(pack, "scan", lambda *a: scans.append(a) or real_scan(*a))
    cache = _cache(store)
    assert refresh.refresh(store, cache).error is None
    assert scans == []
    _assert_cached_exactly(cache, written)
    with cache.pack.open("ab") as handle:  # changed since by anyone: read, and rebuilt
        handle.write(b"\x00torn")
    cache.check_pack()
    assert len(scans) == 1
    _assert_cached_exactly(cache, written)


@pytest.mark.parametrize("between", ["a record dropped", "a line appended"])
def test_a_fill_whose_pack_changed_between_its_batches_checks_it_whole(filled_store, monkeypatch, between):
    """A change made between two batches of a fill (another process, damage) is not taken for the fill's own: the
    pack is checked whole at its end, and rebuilt to match the notes."""
    store, written = filled_store
    cache = _cache(store)
    real_adding, batches = cache.adding, []

    def adding(infos):
        if len(batches) == 1:
            if between == "a record dropped":  # whole records, one of them missing: appends go on after it
                cache.pack.write_bytes(b"".join(sorted(_records(cache))[1:]))
            else:  # a line without its record: what a process killed between the two leaves
                first = sorted(written)[-1]
                data = written[first]
                cache.notes.joinpath(f"{first}.md").write_bytes(data)
                cache.notes.joinpath(f"{first}.md").chmod(0o600)
                with cache.checksum_file.open("ab") as handle:
                    handle.write(f"{first}\t{len(data)}\t{crc32(data):08x}\t-\n".encode())
        batches.append(infos)
        return real_adding(infos)

    monkeypatch.setattr(cache, "adding", adding)
    assert refresh.refresh(store, cache).error is None
    assert len(batches) == 3
    _assert_cached_exactly(cache, written)
