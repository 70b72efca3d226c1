"""The recall benchmark's yardstick (bench/recall*.py): its corpus is consistent and the same on every run, its
scores mean what docs/benchmarks.md says, and a later stage's table is added beside an earlier one, never over it.

The benchmark itself runs in `bench/run.py --quick` (CI); these checks need no process and no ripgrep.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import recall  # noqa: E402
import recall_corpus  # noqa: E402
import recall_notes  # noqa: E402
import report  # noqa: E402


@pytest.fixture(scope="module")
def corpus() -> recall_corpus.Corpus:
    return recall_corpus.build()


def test_the_corpus_is_consistent_and_the_same_on_every_run(corpus):
    recall_corpus.check(corpus)
    again = recall_corpus.build()
    assert again.files == corpus.files and again.queries == corpus.queries
    assert len(corpus.files) == len(recall_notes.TARGETS) + recall_corpus.DISTRACTORS == 340
    counts = recall_corpus.styles_of(corpus.queries)
    assert list(counts) == list(recall_notes.STYLES) and min(counts.values()) >= 10
    assert sum(counts.values()) == len(corpus.queries) == 192
    # a correction comes after the note it corrects, and says so in its frontmatter
    for target in recall_notes.TARGETS:
        if target.corrects:
            assert corpus.ids[target.corrects] < corpus.ids[target.key]
            path = f"projects/{recall_corpus.PROJECT}/notes/{corpus.ids[target.key]}.md"
            assert f"corrects: {corpus.ids[target.corrects]}\n".encode() in corpus.files[path]


@pytest.mark.parametrize(
    ("style", "query", "problem"),
    [
        ("words", "sqlite memcached", "['memcached'] not in sqlite-wal"),
        ("words", "cache sqlite", "is not in the note's order"),
        ("reordered", "sqlite wal", "is in the note's order"),
        ("words", "wal mode", "stands in the note as a phrase"),
        ("case", "SQLite", "has the note's own letter case"),
        ("title+body", "sqlite cache", "needs a word of the title and one found only in the body"),
        ("quoted", "sqlite wal", "needs a quoted phrase and another word"),
        ("phrase", "mode wal", "is not in the note as written"),
    ],
)
def test_check_refuses_a_query_that_its_note_cannot_answer_or_that_has_another_style(corpus, style, query, problem):
    bad = recall_corpus.Query(style, query, (corpus.ids["sqlite-wal"],))
    with pytest.raises(RuntimeError, match="inconsistent") as caught:
        recall_corpus.check(dataclasses.replace(corpus, queries=[bad]))
    assert problem in str(caught.value)


def test_terms_are_quoted_phrases_then_words():
    assert recall_corpus.terms('"wal mode" sqlite') == ["wal mode", "sqlite"]
    assert recall_corpus.terms('budget "retry budget" flaky') == ["retry budget", "budget", "flaky"]
    assert recall_corpus.terms("Flaky  Retry") == ["Flaky", "Retry"]


def test_recall_counts_the_meant_notes_within_the_depth():
    assert recall.recall_at(["a", "b"], ("a",), 1) == 1.0
    assert recall.recall_at(["b", "a"], ("a",), 1) == 0.0
    assert recall.recall_at(["b", "a"], ("a",), 5) == 1.0
    assert recall.recall_at(["x", "b", "y", "z", "w", "a"], ("a", "b"), 5) == 0.5  # one of two within 5
    assert recall.recall_at(["b", "x"], ("a", "b"), 1) == 1.0  # one result fits in 1: either meant note fills it
    assert recall.recall_at([], ("a",), 5) == 0.0
    queries = [recall_corpus.Query("words", "q1", ("a",)), recall_corpus.Query("quoted", "q2", ("b",))]
    scored = recall.scores(queries, [["a"], ["x", "b"]])
    assert scored == {"words": (1, 1.0, 1.0), "quoted": (1, 0.0, 1.0), "all": (2, 0.5, 1.0)}


def _table(stage: str, r5: str) -> report.Table:
    return report.Table(
        f"{'10a' if stage == 'before' else '10b'}. Recall ({stage})",
        ["queries", "count", "agent-memory R@5"],
        [["**all**", "192", r5]],
        target="Recall@5 of at least 0.9.",
        verdict="met" if float(r5) >= 0.9 else "not met",
        headline=f"Recall@5 {r5}",
    )


def _summary_rows(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith(("| 10a. Recall", "| 10b. Recall"))]


def test_a_later_stage_is_written_beside_the_earlier_one_which_stays_as_it_was(tmp_path):
    doc = tmp_path / "benchmarks.md"
    info = {"CPU": "test", "Chromium": "none", "Node": "none"}
    report.write_doc(doc, [_table("before", "0.12")], info, intro="Intro.", plot="plot.png", elapsed=60)
    before = doc.read_text()
    assert before.count("### 10a. Recall (before)") == 1 and "## Recall\n" in before
    assert _summary_rows(before) == ["| 10a. Recall (before) | Recall@5 0.12 | not met |"]

    report.write_recall(doc, [_table("after", "0.95")])
    both = doc.read_text()
    assert both.index("### 10a. Recall (before)") < both.index("### 10b. Recall (after)")
    assert _summary_rows(both) == [
        "| 10a. Recall (before) | Recall@5 0.12 | not met |",
        "| 10b. Recall (after) | Recall@5 0.95 | met |",
    ]
    assert before[before.index("### 10a. Recall (before)") :].rstrip() in both  # the record is kept as it was

    report.write_recall(doc, [_table("after", "0.97")])  # the same stage measured again replaces its own table
    again = doc.read_text()
    assert again.count("### 10b. Recall (after)") == 1 and "| **all** | 192 | 0.97 |" in again
    assert "| **all** | 192 | 0.95 |" not in again and "| **all** | 192 | 0.12 |" in again

    # a full run keeps the earlier stage too, in the section and in the summary
    report.write_doc(doc, [_table("after", "0.96")], info, intro="Intro.", plot="plot.png", elapsed=60)
    full = doc.read_text()
    assert full.count("### 10a. Recall (before)") == 1 and full.count("### 10b. Recall (after)") == 1
    assert _summary_rows(full) == [
        "| 10a. Recall (before) | Recall@5 0.12 | not met |",
        "| 10b. Recall (after) | Recall@5 0.96 | met |",
    ]
