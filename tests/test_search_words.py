"""Search as agents write queries: every word in any order, quoted phrases, the ranking, partial matches, what is
current (corrections), and what is never matched (frontmatter, setup verification notes); through the command
line on a folder store."""

from __future__ import annotations

import math
import time

import pytest

import tools


def _save(machine, body: str, *args: str) -> str:
    saved = machine.save(body, *args)
    tools.exited(saved)
    # `created` has whole seconds: each note newer than the one before, so the next save starts in the next second
    now = time.time()
    time.sleep(math.floor(now) + 1.01 - now)
    return saved.json["id"]


def _search(machine, *args: str) -> dict:
    found = machine.run("search", "--json", *args)
    tools.exited(found)
    return found.json


def _ids(machine, *args: str) -> list[str]:
    return [r["id"] for r in _search(machine, *args)["results"]]


@pytest.fixture
def notes(ready):
    """Four notes about the same topics, oldest first."""
    ids = {
        "budget": _save(ready, "# Flaky retry budget\n\nThe CI retries a flaky test twice at most.\n"),
        "wal": _save(ready, "# Cache storage\n\nWe keep SQLite in WAL mode for concurrent readers.\n"),
        "body": _save(ready, "# Notes on CI\n\nA flaky retry budget of two was agreed with the team.\n"),
        "words": _save(ready, "# Budget for retries\n\nEach flaky job gets a retry; the budget is per run.\n"),
    }
    return ready, ids


def test_words_in_any_order_and_any_case(notes):
    machine, ids = notes
    every = {ids["budget"], ids["body"], ids["words"]}
    assert set(_ids(machine, "flaky retry budget")) == every
    assert set(_ids(machine, "budget retry flaky")) == every
    assert set(_ids(machine, "BUDGET Retry fLaKy")) == every
    assert _ids(machine, "sqlite wal") == [ids["wal"]]
    assert _ids(machine, "Wal SQLITE") == [ids["wal"]]


def test_ranking_phrase_in_title_then_body_then_words_in_title_then_anywhere(notes):
    machine, ids = notes
    # the whole query: in the title of "budget", the body of "body"; "words" has every word, no phrase
    assert _ids(machine, "flaky retry budget") == [ids["budget"], ids["body"], ids["words"]]
    # every word in the title ("budget", "retries"), before every word anywhere, whatever the dates
    saved = _save(machine, "# Misc\n\nretries come out of the budget, as noted.\n")
    assert _ids(machine, "retries budget") == [ids["words"], saved, ids["budget"]]
    # one word: a title that holds it first, then newest first
    assert _ids(machine, "budget") == [ids["words"], ids["budget"], saved, ids["body"]]


def test_quoted_phrases_match_exactly(notes):
    machine, ids = notes
    assert _ids(machine, '"wal mode" sqlite') == [ids["wal"]]
    assert _ids(machine, '"mode wal" sqlite')[:0] == []  # no note holds that phrase: partial at best
    assert all(r["partial"] for r in _search(machine, '"mode wal" sqlite')["results"])
    assert set(_ids(machine, '"retry budget"')) == {ids["budget"], ids["body"]}
    assert _ids(machine, '"RETRY BUDGET" team') == [ids["body"]]
    # a quote mark left open is a space
    assert set(_ids(machine, '"retry budget')) == {ids["budget"], ids["body"], ids["words"]}


def test_no_note_with_every_word_shows_the_closest_marked_partial(notes):
    machine, ids = notes
    found = _search(machine, "flaky budget kubernetes")
    assert [r["id"] for r in found["results"]] == [ids["words"], ids["body"], ids["budget"]]
    for result in found["results"]:
        assert result["partial"] is True and result["missing"] == ["kubernetes"]
    text = machine.run("search", "flaky budget kubernetes")
    tools.exited(text)
    assert text.out.startswith("No note holds every term of the query; the notes holding the most of them")
    assert "[partial: without 'kubernetes']" in text.out
    # only the notes with the most words: one word of three is fewer than two
    assert _ids(machine, "sqlite budget kubernetes zookeeper")  # 1 word each: all that hold one
    assert set(_ids(machine, "sqlite wal zookeeper")) == {ids["wal"]}
    whole = _search(machine, "flaky retry")["results"]
    assert all(r["partial"] is False and r["missing"] == [] for r in whole)
    assert machine.run("search", "zookeeper kubernetes").out.strip() == "No matching notes."


def test_frontmatter_is_never_matched(ready):
    tagged = _save(ready, "# Deploys\n\nThe deploy runs at night.\n", "--tag", "imported", "--source", "ops/x.md")
    assert _ids(ready, "imported") == []
    assert _ids(ready, "kind: note") == []
    assert _ids(ready, "kind") == []
    assert _ids(ready, "ops/x.md") == []
    assert _ids(ready, "sources") == []
    assert _ids(ready, "deploys") == [tagged]  # the title is matched


def test_matches_are_numbered_as_the_body(ready):
    _save(ready, "# Pool sizes\n\nFirst line.\nThe pool holds eight connections.\n\nAnother pool note.\n")
    found = _search(ready, "pool")["results"][0]
    assert found["matches"] == [
        {"line": 1, "text": "# Pool sizes"},
        {"line": 4, "text": "The pool holds eight connections."},
        {"line": 6, "text": "Another pool note."},
    ]
    body = ready.run("read", found["id"], "--body")
    tools.exited(body)
    lines = body.out.splitlines()
    assert lines[0] == "# Pool sizes" and lines[3] == "The pool holds eight connections."
    assert {"line": 4, "text": "The pool holds eight connections."} in _search(ready, "eight pool")["results"][0][
        "matches"
    ]
    one = _save(ready, "Single line about a zebra.\n")
    assert _search(ready, "zebra")["results"][0]["matches"] == [{"line": 1, "text": "Single line about a zebra."}]
    assert ready.run("read", one, "--body").out == "Single line about a zebra.\n"


def test_a_chain_of_three_corrections(ready):
    first = _save(ready, "# Database\n\nWe use Postgres 14.\n")
    other = _save(ready, "# Unrelated\n\nPostgres backups run nightly.\n")
    second = _save(ready, "# Database\n\nCorrection: we use Postgres 15.\n", "--corrects", first)
    third = _save(ready, "# Database\n\nCorrection: we use Postgres 16.\n", "--corrects", second)
    newest = _save(ready, "# Unrelated again\n\nPostgres extensions are listed in ext.md.\n")
    found = _search(ready, "postgres")["results"]
    # the chain together, where its best note ranks (newest first here), the latest correction first
    assert [r["id"] for r in found] == [newest, third, second, first, other]
    by_id = {r["id"]: r for r in found}
    assert (by_id[third]["corrects"], by_id[third]["corrected_by"]) == (second, None)
    assert (by_id[second]["corrects"], by_id[second]["corrected_by"]) == (first, third)
    assert (by_id[first]["corrects"], by_id[first]["corrected_by"]) == (None, second)
    assert by_id[other]["corrects"] is None and by_id[other]["corrected_by"] is None

    text = ready.run("search", "postgres").out.splitlines()
    titles = [line for line in text if not line.startswith(" ")][1:]
    assert titles[0].startswith(third) and titles[0].endswith(f"[corrects {second}]")
    assert titles[1].startswith(second) and titles[1].endswith(f"[corrects {first}]  [corrected by {third}]")
    assert titles[2].startswith(first) and titles[2].endswith(f"[corrected by {second}]")

    assert _ids(ready, "postgres", "--current") == [newest, third, other]
    assert _ids(ready, "postgres", "--current", "--limit", "2") == [newest, third]
    assert _ids(ready, "postgres 1", "--current", "--limit", "1") == [third]  # refilled past corrected notes
    # a corrected note that alone matches is still marked
    old = _search(ready, "postgres 14")["results"]
    assert [(r["id"], r["corrected_by"]) for r in old] == [(first, second)]
    assert _ids(ready, "postgres 14", "--current") == []


def test_a_pending_correction_marks_the_note_it_corrects(ready, folder_store):
    first = _save(ready, "# Port\n\nThe service listens on 8080.\n")
    root = folder_store[len("file://") :]
    import os

    os.rename(root, root + ".away")  # the note is saved pending
    try:
        pending = ready.save("# Port\n\nCorrection: the service listens on 9090.\n", "--corrects", first)
        tools.exited(pending, 75)
        found = _search(ready, "service listens", "--offline")["results"]
        assert [(r["id"], r["pending"], r["corrects"]) for r in found] == [
            (pending.json["id"], True, first),
            (first, False, None),
        ]
        assert found[1]["corrected_by"] == pending.json["id"]
        assert _ids(ready, "service listens", "--offline", "--current") == [pending.json["id"]]
    finally:
        os.rename(root + ".away", root)


def test_setup_verification_notes_are_out_unless_asked(ready, folder_store):
    boot = ready.run("bootstrap", "--bucket", folder_store, "--project", "demo", "--json")
    tools.exited(boot)
    setup = boot.json["verification"]["id"]
    note = _save(ready, "# Memory setup\n\nThe verification of the memory setup is documented in SETUP.md.\n")
    assert _ids(ready, "memory setup verification") == [note]
    assert _ids(ready, "") == [note]
    assert _ids(ready, "memory setup verification", "--all") == [setup, note]
    assert _ids(ready, "", "--kind", "setup") == [setup]
    assert _ids(ready, "verification", "--kind", "setup") == [setup]


def test_a_pack_of_the_earlier_format_is_rebuilt(ready):
    note = _save(ready, "# Lease\n\nThe lease lasts ten seconds.\n", "--tag", "imported")
    packs = list(ready.state.rglob("search.pack"))
    assert len(packs) == 1
    old = packs[0].read_bytes()
    # a record as the earlier version wrote it: 7 header fields, the frontmatter in its text
    from binascii import crc32

    text = b"---\nid: x\ntags:\n- imported\n---\nthe lease lasts ten seconds.\n"
    rest = f"{note}\t2026-01-01T00:00:00Z\tnote\t\tLease\t\t".encode() + b"\n" + text
    packs[0].write_bytes(b"\x00%08x\t%08x\t" % (len(rest), crc32(rest)) + rest)
    assert _ids(ready, "imported") == []
    assert _ids(ready, "lease ten") == [note]
    assert packs[0].read_bytes() == old


def test_a_pack_of_several_blocks_finds_every_note_and_correction(ready):
    """Notes larger than a block of the pack's scan (1 MiB read at a time): in each block another term is the rare
    one, and the correction sits blocks away from the note it corrects."""
    filler = "lorem ipsum dolor sit amet " * 15_000  # about 400 KB
    ids = []
    for index in range(6):
        common, rare = ("alpha", "beta") if index < 3 else ("beta", "alpha")
        body = f"# Big {index}\n\n{(common + ' ') * 2000}\n{filler}\nonce: {rare}\n"
        extra = ("--corrects", ids[0]) if index == 5 else ()
        ids.append(_save(ready, body, *extra))
    packs = list(ready.state.rglob("search.pack"))
    assert len(packs) == 1 and packs[0].stat().st_size > 2 * (1 << 20)
    found = _search(ready, "alpha beta", "--offline", "--limit", "10")["results"]
    assert sorted(r["id"] for r in found) == sorted(ids)
    by_id = {r["id"]: r for r in found}
    assert by_id[ids[0]]["corrected_by"] == ids[5] and by_id[ids[5]]["corrects"] == ids[0]
    order = [r["id"] for r in found]
    assert order.index(ids[5]) + 1 == order.index(ids[0])  # the correction right before the note it corrects
    assert ids[0] not in _ids(ready, "alpha beta", "--offline", "--current")


def test_a_query_past_its_bounds_is_refused_with_the_limit(notes):
    machine, ids = notes
    bounds = ("at most 32", "at most 1,000")
    many = " ".join(f"word{i}" for i in range(33))
    refused = machine.run("search", "--json", many)
    assert refused.code == 2, refused.err
    assert "33 words and phrases" in refused.err and bounds[0] in refused.err
    assert "Next: agent-memory search KEYWORDS" in refused.err and refused.json["exit_code"] == 2
    long = "budget " + "x" * 994
    refused = machine.run("search", "--offline", long)
    assert refused.code == 2 and "1,001 characters" in refused.err and bounds[1] in refused.err
    # a phrase counts once, repeated words once: 32 terms, and the most characters, are accepted
    accepted = " ".join(f"w{i}" for i in range(30)) + ' "flaky retry" flaky "FLAKY RETRY"'
    assert _search(machine, accepted)["results"][0]["partial"]
    assert _ids(machine, "budget" + " " * 989 + "retry")[:1] == [ids["budget"]]


def test_partial_results_are_the_notes_with_the_most_terms_among_many(ready):
    # notes holding 1, 2, 3 and 4 of the five words, in an order that fills the kept places with the worst first
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    held = [1, 2, 1, 3, 2, 4, 1, 3, 4, 2]
    ids = {}
    for index, count in enumerate(held):
        ids[ready.save(f"# Note {index}\n\n{' '.join(words[:count])} filler\n").json["id"]] = count
    found = _search(ready, "--limit", "3", " ".join(reversed(words)))["results"]
    # only the notes with the most terms are shown
    assert [ids[r["id"]] for r in found] == [4, 4] and all(r["missing"] == ["echo"] for r in found)
    assert [ids[r["id"]] for r in _search(ready, "--limit", "1", " ".join(words))["results"]] == [4]
