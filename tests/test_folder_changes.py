"""The folder store knows what changed without listing: each save appends its object to the store's record of
changes (`.changes`), and a search follows it from the cache's cursor, as the Hub's change feed; the record
missing, damaged, cut, replaced or a link, or the last listing a day old, make the search list, which finds
everything, a note written without a record line included. A full record is replaced by a new one: its readers
list once, and no note is lost to them, whatever the writers were doing meanwhile.

Through the command line, two machines on one folder store; writers in parallel processes.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from binascii import crc32
from pathlib import Path

import pytest

import tools
from agent_memory.store import local_record

RECORD = ".changes"


def _note(note_id: str, word: str) -> bytes:
    return f"---\nid: {note_id}\ntitle: {word}\n---\n\n{word} folder note\n".encode()


def _search(machine, query: str = "folder note") -> dict:
    result = machine.run("search", query, "--limit", "1000", "--json")
    tools.exited(result)
    return result.json


def _stored_notes(root: Path) -> set[str]:
    return {p.stem for p in (root / "projects" / "demo" / "notes").glob("*.md")}


def _record_lines(root: Path) -> list[bytes]:
    data = (root / RECORD).read_bytes()
    head, _, rest = data.partition(b"\n")
    assert head.startswith(b"agent-memory changes 1 ")
    return rest.split(b"\n")


@pytest.fixture
def pair(machine, machine_b, folder_store):
    """`(writer, reader, store root)`: the reader's cache filled by a listing, its cursor in the record."""
    root = Path(folder_store.removeprefix("file://"))
    machine.setup(folder_store)
    machine_b.setup(folder_store)
    for i in range(3):
        tools.exited(machine.save(f"# Seed {i}\n\nseed {i} folder note\n"))
    first = _search(machine_b)
    assert first["freshness"]["kind"] == "listing" and len(first["results"]) == 3
    assert _search(machine_b)["freshness"]["kind"] == "changes"
    return machine, machine_b, root


def _ids(found: dict) -> set[str]:
    return {r["id"] for r in found["results"]}


def test_new_notes_come_from_the_record_without_a_listing(pair):
    writer, reader, root = pair
    saved = {writer.save(f"# New {i}\n\nnew {i} folder note\n").json["id"] for i in range(3)}
    found = _search(reader)
    assert found["freshness"]["kind"] == "changes" and _ids(found) == _stored_notes(root) and saved <= _ids(found)
    # the reader's own save comes back through the record too, already cached
    own = reader.save("# Own\n\nown folder note\n").json["id"]
    found = _search(reader)
    assert found["freshness"]["kind"] == "changes" and own in _ids(found)


def test_concurrent_writers_each_add_one_whole_line_per_object(pair):
    writer, reader, root = pair
    procs = [
        (writer if i % 2 else reader).popen(
            "save", "--json", "--title", f"parallel {i}", input=f"p{i} folder note".encode()
        )
        for i in range(12)
    ]
    for proc in procs:
        tools.exited(tools.finished(proc, timeout=300))
    lines = _record_lines(root)
    assert lines[-1] == b""  # every line whole
    paths = []
    for line in lines[:-1]:
        crc, path, size = line.split(b"\t")
        assert int(crc, 16) == crc32(path + b"\t" + size)
        assert int(size) == (root / path.decode()).stat().st_size
        paths.append(path.decode())
    assert len(paths) == len(set(paths)) == 15
    assert {Path(p).stem for p in paths} == _stored_notes(root)
    found = _search(reader)
    assert found["freshness"]["kind"] == "changes" and _ids(found) == _stored_notes(root)


def _plant(root: Path, note_id: str, word: str) -> bytes:
    """A note written by a process that died before its record line (or by a foreign one that writes none)."""
    data = _note(note_id, word)
    (root / "projects" / "demo" / "notes" / f"{note_id}.md").write_bytes(data)
    return data


def test_a_half_written_last_line_waits_and_a_torn_line_makes_the_search_list(pair):
    writer, reader, root = pair
    planted = "20260101-000000-000001-00000000aa"
    data = _plant(root, planted, "torn")
    path = f"projects/demo/notes/{planted}.md"
    line = b"%08x\t%s\t%d\n" % (crc32(f"{path}\t{len(data)}".encode()), path.encode(), len(data))
    with open(root / RECORD, "ab") as record:
        record.write(line[:20])  # the writer was killed in the middle of its line
    found = _search(reader)  # the half line is left for later: nothing else is new
    assert found["freshness"]["kind"] == "changes" and planted not in _ids(found)
    later = writer.save("# Later\n\nlater folder note\n").json["id"]  # its line follows the torn one
    found = _search(reader)
    assert found["freshness"]["kind"] == "listing" and {planted, later} <= _ids(found)
    assert _ids(found) == _stored_notes(root)
    assert _search(reader)["freshness"]["kind"] == "changes"  # the listing moved the cursor past the damage


@pytest.mark.parametrize("damage", ["missing", "garbage", "replaced", "cut", "link"])
def test_a_record_that_cannot_be_followed_makes_the_search_list(pair, damage, tmp_path):
    writer, reader, root = pair
    record = root / RECORD
    outside = tmp_path / "outside"
    outside.write_bytes(record.read_bytes())
    if damage == "missing":
        record.unlink()
    elif damage == "garbage":
        with open(record, "ab") as handle:
            handle.write(b"not a line of the record\n")
    elif damage == "replaced":
        record.write_bytes(b"agent-memory changes 1 " + b"0" * 16 + b"\n")
    elif damage == "cut":
        os.truncate(record, len(record.read_bytes().split(b"\n")[0]) + 10)  # within the first line
    else:
        record.unlink()
        record.symlink_to(outside)
    planted = "20260101-000000-000002-00000000aa"
    _plant(root, planted, damage)
    found = _search(reader)
    assert found["freshness"]["kind"] == "listing" and planted in _ids(found)
    assert _ids(found) == _stored_notes(root)
    before = outside.read_bytes()
    tools.exited(writer.save("# After\n\nafter folder note\n"))
    if damage == "link":  # never written through: the note is saved, the record is not followed
        assert outside.read_bytes() == before and record.is_symlink()
        assert _search(reader)["freshness"]["kind"] == "listing"
        record.unlink()
    writer.save("# Then\n\nthen folder note\n")
    found = _search(reader)
    assert _ids(found) == _stored_notes(root)
    assert _search(reader)["freshness"]["kind"] == "changes"


def test_a_note_without_a_record_line_is_found_by_the_daily_listing(pair):
    _writer, reader, root = pair
    planted = "20260101-000000-000003-00000000aa"
    _plant(root, planted, "foreign")
    assert planted not in _ids(_search(reader))  # nothing told of it: the record is all a search reads
    [stands] = (reader.state / "cache").glob("*/projects/demo/stands.json")
    stands.write_text(json.dumps({**json.loads(stands.read_text()), "listed": "2020-01-01T00:00:00Z"}))
    found = _search(reader)
    assert found["freshness"]["kind"] == "listing" and planted in _ids(found)
    assert _search(reader)["freshness"]["kind"] == "changes"


def test_a_filesystem_without_hard_links_still_keeps_the_record(machine, machine_b, folder_store, monkeypatch):
    """Where `link` is refused (some network and FAT drives), objects and the record are renamed into place."""

    def refused(*_args, **_kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refused)  # in this process, where the commands run
    root = Path(folder_store.removeprefix("file://"))
    machine.setup(folder_store)
    machine_b.setup(folder_store)
    first = machine.save("# One\n\none folder note\n").json["id"]
    assert _search(machine_b)["freshness"]["kind"] == "listing"
    second = machine.save("# Two\n\ntwo folder note\n").json["id"]
    found = _search(machine_b)
    assert found["freshness"]["kind"] == "changes" and _ids(found) == {first, second} == _stored_notes(root)
    assert len(_record_lines(root)) == 3 and not [p for p in root.iterdir() if p.name.startswith(".tmp-")]


def _generation(root: Path) -> bytes:
    return (root / RECORD).read_bytes().split(b"\n")[0]


def test_a_full_record_is_replaced_and_its_readers_list_once(pair, monkeypatch):
    writer, reader, root = pair
    monkeypatch.setattr(local_record, "ROTATE_BYTES", 1024)  # about a dozen lines (in this process: the commands')
    before = _generation(root)
    saved = {writer.save(f"# Full {i}\n\nfull {i} folder note\n").json["id"] for i in range(40)}
    longest = max(len(line) + 1 for line in _record_lines(root))
    assert _generation(root) != before and (root / RECORD).stat().st_size <= 1024 + longest
    assert all(line.count(b"\t") == 2 for line in _record_lines(root)[:-1])  # the new record: whole lines only
    found = _search(reader)  # its cursor names a record that is gone
    assert found["freshness"]["kind"] == "listing" and saved <= _ids(found) and _ids(found) == _stored_notes(root)
    monkeypatch.setattr(local_record, "ROTATE_BYTES", 1 << 20)
    later = writer.save("# Later\n\nlater folder note\n").json["id"]
    found = _search(reader)
    assert found["freshness"]["kind"] == "changes" and later in _ids(found)


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from agent_memory.store import local_record
    from agent_memory.store.local import FolderStore

    local_record.ROTATE_BYTES = 2048  # replaced every thirty lines or so, by whichever writer fills it
    store, name = FolderStore(Path(sys.argv[1])), sys.argv[2]
    for index in range(40):
        note_id = f"20260101-000000-{index:06d}-{name}"
        text = f"---\\nid: {note_id}\\ntitle: {name} {index}\\n---\\n\\n{name} {index} folder note\\n"
        store.put(f"projects/demo/notes/{note_id}.md", text.encode())
    """
)


@pytest.mark.slow
def test_writers_replacing_the_record_while_a_reader_follows_it_lose_no_note_to_it(pair):
    """Lines appended to a record that another writer has just replaced are lost to the record; each such note was
    in place before the new record began, so every reader of the new record listed after it: none is missed."""
    _writer, reader, root = pair
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), f"{index:010x}"], env=reader.env)
        for index in range(4)
    ]
    kinds = set()
    while any(proc.poll() is None for proc in writers):  # searches while records are replaced
        kinds.add(_search(reader)["freshness"]["kind"])
    assert all(proc.wait(timeout=300) == 0 for proc in writers)
    assert len(_stored_notes(root)) == 3 + 4 * 40
    for line in _record_lines(root)[:-1]:
        crc, path, size = line.split(b"\t")
        assert int(crc, 16) == crc32(path + b"\t" + size)
    found = _search(reader)
    kinds.add(found["freshness"]["kind"])
    assert "listing" in kinds  # its first search after a replacement listed (the writers replaced it several times)
    assert _ids(found) == _stored_notes(root)
    assert _search(reader)["freshness"]["kind"] == "changes"
