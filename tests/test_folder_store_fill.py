"""Filling an empty cache from a folder store: each note is copied once and indexed from the bytes copied (never
read back), and a note that changes between the listing and its copy is never cached with other bytes than its
copy holds, nor indexed from them."""

from __future__ import annotations

import os
import stat
from binascii import crc32
from pathlib import Path

import pytest

from agent_memory.memory import cache as cache_module
from agent_memory.memory import notes, pack, refresh
from agent_memory.memory.cache import ProjectCache
from agent_memory.store import local
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
    assert cache.pack.read_bytes() == b"".join(pack.record(i, expected[i]) for i in sorted(expected))
    assert not list(cache.dir.glob(".download-*"))  # every staging folder is gone


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


def test_a_fill_larger_than_the_copies_handed_back_reads_the_rest_back(filled_store, monkeypatch):
    """A fetch hands back the bytes of its copies up to a bound (a catalog of skills fetches a hundred thousand
    files at once); the fill reads the others back, and caches and indexes them all the same."""
    store, written = filled_store
    monkeypatch.setattr(local, "COPIES_HANDED_BACK", 3 * max(len(data) for data in written.values()))
    handed = store.fetch(list(store.list("projects/demo/notes")), store.root.parent / "fetched")
    assert 3 <= len(handed) < COUNT
    cache = _cache(store)
    assert refresh.refresh(store, cache).error is None
    _assert_cached_exactly(cache, written)


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
    kept = {note_id: written[note_id] for note_id in sorted(written)[:10]}
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
    else:  # not the size listed: that batch is not cached, the next refresh takes it
        assert "incomplete download" in str(freshness.error)
        assert changed not in cache.verified_checksums()
        _assert_cached_exactly(cache, {note_id: written[note_id] for note_id in sorted(written)[:10]})
