"""10. Recall: whether a search finds the note an agent means, with queries written as agents write them.

No model: the corpus (`recall_corpus.py`) says which notes each query means. Each query is run as a whole
process against a folder store holding the corpus: `agent-memory search`, and ripgrep's best literal
equivalents over the same note files. The scores are Recall@1 and Recall@5 per query style.

`python bench/recall.py [--quick]` prints the table; `python bench/run.py --only recall` also writes it into
docs/benchmarks.md, keeping the tables of earlier stages (see STAGE).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import recall_corpus
import recall_notes
from corpus import Context
from env import Machine, write_folder
from recall_corpus import Corpus, Query
from report import Table

# What the search being measured is, for the table's title: change it with the search, so that a new run adds a
# table beside the earlier stage's instead of replacing it; the table's number takes the next letter with it
# (10a was "before multi-word search").
STAGE = "every word, any order; quoted phrases"
NUMBER = "10b"
DEPTH = 5  # results asked for, and the deepest recall scored
TARGET = 0.9  # Recall@5 of agent-memory search over all queries (issue 27)
QUICK_EVERY = 4  # `--quick` runs every fourth query

RG = ["rg", "-i", "-l", "-F", "--sortr", "path"]  # ignore case, list files, literal; newest first
COMMANDS = {
    "agent-memory": f"`agent-memory search --json --limit {DEPTH} -- QUERY` (the query as one argument, as typed)",
    "rg, every word": "`rg -i -l -F --sortr path -- TERM NOTES` for each quoted phrase and each other word of the "
    "query, keeping the notes every term found, newest first (an agent's `rg -il W1 | xargs rg -il W2`)",
    "rg, whole query": "`rg -i -l -F --sortr path -- QUERY NOTES`, the query as one literal (quote marks left "
    "out), newest first",
}


def recall_at(ranked: list[str], expected: tuple[str, ...], depth: int) -> float:
    """The share of the expected notes among the first `depth` results, out of as many as fit in `depth`: 1.0
    when a query that means one note has it there, or a query that means two has both within 5."""
    return len(set(ranked[:depth]) & set(expected)) / min(depth, len(expected))


def scores(queries: list[Query], ranked: list[list[str]]) -> dict[str, tuple[int, float, float]]:
    """Per style (and `all`): how many queries, mean Recall@1, mean Recall@5."""
    groups: dict[str, list[tuple[Query, list[str]]]] = {style: [] for style in recall_notes.STYLES}
    for query, found in zip(queries, ranked, strict=True):
        groups[query.style].append((query, found))
    groups["all"] = list(zip(queries, ranked, strict=True))
    return {
        style: (
            len(pairs),
            statistics.fmean(recall_at(found, query.expected, 1) for query, found in pairs),
            statistics.fmean(recall_at(found, query.expected, DEPTH) for query, found in pairs),
        )
        for style, pairs in groups.items()
        if pairs
    }


def _ids(output: bytes) -> list[str]:
    return [Path(line).name.removesuffix(".md") for line in output.decode().splitlines() if line]


def searchers(machine: Machine, notes: Path) -> dict[str, Callable[[str], list[str]]]:
    """Each contender: a query in, note ids out, best first (at most DEPTH)."""

    def agent_memory(query: str) -> list[str]:
        result = json.loads(machine.agent_memory("search", "--json", "--limit", str(DEPTH), "--", query).stdout)
        if result["freshness"]["status"] != "fresh":
            raise RuntimeError(f"search {query!r} did not read the store: {result['sync']}")
        return [found["id"] for found in result["results"]]

    def rg(term: str) -> list[str]:
        return _ids(machine.run([*RG, "--", term, str(notes)], ok=(0, 1)).stdout)

    def every_word(query: str) -> list[str]:
        found = [rg(term) for term in recall_corpus.terms(query)]
        return [note for note in found[0] if all(note in others for others in found[1:])][:DEPTH]

    def whole_query(query: str) -> list[str]:
        return rg(query.replace('"', ""))[:DEPTH]

    return {"agent-memory": agent_memory, "rg, every word": every_word, "rg, whole query": whole_query}


def measure(root: Path, quick: bool) -> tuple[Corpus, list[Query], dict[str, list[list[str]]]]:
    """Build and check the corpus, put it in a folder store, and run every query through every contender."""
    corpus = recall_corpus.build()
    recall_corpus.check(corpus)
    store = root / "recall-store"
    write_folder(store, corpus.files)
    store.chmod(0o700)  # a folder store that other users can open is refused
    machine = Machine(root / "recall").setup(f"file://{store}", recall_corpus.PROJECT)
    queries = corpus.queries[::QUICK_EVERY] if quick else corpus.queries
    notes = store / "projects" / recall_corpus.PROJECT / "notes"
    ranked = {name: [search(query.text) for query in queries] for name, search in searchers(machine, notes).items()}
    return corpus, queries, ranked


def table(corpus: Corpus, queries: list[Query], ranked: dict[str, list[list[str]]], quick: bool) -> Table:
    """The recall table: one row per query style, then all queries."""
    by_tool = {name: scores(queries, found) for name, found in ranked.items()}
    columns = ["queries", "count"] + [f"{name} R@{depth}" for name in ranked for depth in (1, DEPTH)]
    rows = []
    for style in [*recall_notes.STYLES, "all"]:
        if style not in by_tool["agent-memory"]:
            continue
        count = by_tool["agent-memory"][style][0]
        cells = [f"{by_tool[name][style][index]:.2f}" for name in ranked for index in (1, 2)]
        rows.append([f"`{style}`" if style != "all" else "**all**", str(count), *cells])
    overall = by_tool["agent-memory"]["all"][2]
    empty = {name: sum(not found for found in results) for name, results in ranked.items()}
    candidates = [recall_corpus.literal_candidates(corpus, query) for query in queries]
    targets = len(recall_notes.TARGETS)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    counts = recall_corpus.styles_of(queries)
    styles = "; ".join(f"`{style}` ({counts[style]}): {what}" for style, what in recall_notes.STYLES.items())
    scope = (
        f"{len(queries)} of the {len(corpus.queries)} queries (`--quick`: every {QUICK_EVERY}th)"
        if quick
        else (f"all {len(queries)} queries")
    )
    return Table(
        f"{NUMBER}. Recall ({STAGE})",
        columns,
        rows,
        target=f"Recall@{DEPTH} of at least {TARGET} for `agent-memory search` over all queries.",
        verdict="met" if overall >= TARGET else "not met",
        headline=f"Recall@{DEPTH} {overall:.2f} (rg, every word: {by_tool['rg, every word']['all'][2]:.2f}) "
        f"on {len(queries)} queries over {len(corpus.files)} notes",
        notes=[
            f"Measured on {when}, {scope}, over {len(corpus.files)} notes.",
            f"{targets} notes are meant by queries. Two of them are corrections of another, meant together with it "
            f"by {len(recall_notes.PAIRS)} queries.",
            f"{corpus.distractors} distractors are made from the same vocabulary (`bench/recall_corpus.py`, "
            "deterministic).",
            "Each query means one note, or a note and its correction.",
            "Every word and quoted phrase of a query is in each note it means. `recall_corpus.check` proves it "
            "before the run.",
            f"Query styles: {styles}.",
            "Recall@k: the share of the notes a query means found among the first k results, averaged over the "
            "queries. The share is out of as many as fit in k.",
            "Notes holding every term of a query, meant or not (title, body or frontmatter): median "
            f"{statistics.median(candidates):g}, at most {max(candidates)}.",
            "Each command is a whole process per query, on the folder store. rg runs over its notes folder: the same "
            "files.",
            f"agent-memory: {COMMANDS['agent-memory']}.",
            f"rg, every word: {COMMANDS['rg, every word']}.",
            f"rg, whole query: {COMMANDS['rg, whole query']}.",
            "rg's ranks are newest first: note ids start with their time.",
            "agent-memory ranks by its search's own order: the whole query in the title, then in the body. Then every "
            "term in the title, then anywhere; newest first within each.",
            "That order only matters for Recall@1.",
            "Queries with no result: "
            + ", ".join(f"{name} {count} of {len(queries)}" for name, count in empty.items())
            + ".",
            "`python bench/run.py --only recall` measures again.",
            "A search that changes what it matches changes `recall.STAGE` with it. So the earlier stage's table "
            "stays beside the new one.",
        ],
    )


def recall(ctx: Context) -> list[Table]:
    """10. Recall@1 and Recall@5 of agent-memory search and ripgrep on the recall corpus."""
    corpus, queries, ranked = measure(ctx.root, ctx.quick)
    return [table(corpus, queries, ranked, ctx.quick)]


def main() -> int:
    parser = argparse.ArgumentParser(description="The recall benchmark of agent-memory search, alone.")
    parser.add_argument("--quick", action="store_true", help=f"every {QUICK_EVERY}th query only")
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agent-memory-recall-"))
    try:
        corpus, queries, ranked = measure(root, options.quick)
        print(table(corpus, queries, ranked, options.quick).markdown())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
