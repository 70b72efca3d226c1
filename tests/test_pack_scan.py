"""The pack's scan finds exactly the records whose text holds a needle, as Python's own `in` says, whatever the
text, the needle and where the blocks of the read cut the records (StringZilla's search and Python's)."""

from __future__ import annotations

import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.memory import finding, pack

# a small alphabet, so that needles occur often, partly, across lines and next to the bytes that frame records
ALPHABET = st.sampled_from(list("ab \nAB\t-#:é"))
TEXTS = st.text(ALPHABET, max_size=300)
NEEDLES = st.text(st.sampled_from(list("ab \nAé")), min_size=1, max_size=6).map(lambda text: text.lower().encode())


def _note(index: int, body: str) -> bytes:
    return f"---\nid: n{index}\nkind: note\ncreated: 2026-12-01T00:00:00Z\n---\n\n# T{index}\n\n{body}\n".encode()


def _texts(records: list[bytes]) -> dict[str, bytes]:
    """Each record's searchable text (its title line and body), by note id: what the scan must look in."""
    found = {}
    for record in records:
        header_end = record.index(b"\n", pack.PREFIX)
        found[pack.record_id(record[pack.PREFIX : header_end])] = record[header_end + 1 :]
    return found


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TEXTS, max_size=12), st.lists(NEEDLES, min_size=1, max_size=3), st.integers(64, 700), st.booleans())
def test_the_scan_finds_what_python_finds(tmp_path_factory, monkeypatch, bodies, needles, block, simd):
    monkeypatch.setattr(pack, "BLOCK", block)  # many blocks, each cutting records at another place
    monkeypatch.setattr(finding, "SIMD_BYTES", 0 if simd else 1 << 60)  # StringZilla's search, or Python's
    monkeypatch.setattr(pack, "SAMPLE", block // 2)
    records = [pack.record(f"n{index}", _note(index, body)) for index, body in enumerate(bodies)]
    path = tmp_path_factory.mktemp("pack") / "search.pack"
    path.write_bytes(b"".join(records))
    texts = _texts(records)
    found = [pack.record_id(hit.header) for hit in pack.hits(path, tuple(needles))]
    assert len(found) == len(set(found))  # each record once, in file order
    assert found == [note_id for note_id in texts if note_id in found]
    holding_all = {note_id for note_id, text in texts.items() if all(needle in text for needle in needles)}
    holding_any = {note_id for note_id, text in texts.items() if any(needle in text for needle in needles)}
    # one needle is searched for (the rarest in the block); the caller checks the others in the records found
    assert holding_all <= set(found) <= holding_any
    if len(needles) == 1:
        assert set(found) == holding_all


def test_simd_search_is_loaded_for_a_large_file_only():
    small, large = finding.finders(finding.SIMD_BYTES - 1), finding.finders(finding.SIMD_BYTES)
    assert [f.__module__ for f in small] == ["agent_memory.memory.finding"] * 3
    assert [f.__module__ for f in large] == ["stringzilla"] * 3
    text = bytearray(b"one two one two")
    for count, find, rfind in (small, large):
        assert (count(text, b"one", 0, 15), find(text, b"two", 5, 15), rfind(text, b"one", 0, 11)) == (2, 12, 8)


def test_without_stringzilla_a_large_search_uses_pythons_own(monkeypatch):
    monkeypatch.setitem(sys.modules, "stringzilla", None)  # its import fails, as where it was never installed
    assert finding.finders(finding.SIMD_BYTES) == finding.finders(0)
