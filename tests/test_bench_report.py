"""docs/benchmarks.md: its tables are numbered once each, in the order they stand, and a full run writes them so."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import report  # noqa: E402

NUMBER = re.compile(r"(\d+)([a-z]?)\. ")


def _number(title: str) -> tuple[int, str]:
    found = NUMBER.match(title)
    assert found, f"table without a number: {title!r}"
    return int(found.group(1)), found.group(2)


def _headings(text: str) -> list[str]:
    return [line.removeprefix("### ") for line in text.split("\n") if line.startswith("### ")]


def _summary(text: str) -> list[str]:
    lines = text.split("\n")
    rows = lines[lines.index("## Summary") : lines.index("## Results")]
    return [row.split(" | ")[0].removeprefix("| ") for row in rows if row.startswith("| ") and "---" not in row][1:]


def test_the_documents_tables_are_numbered_once_each_in_order():
    text = (REPO / "docs" / "benchmarks.md").read_text()
    headings = _headings(text)
    numbers = [_number(title) for title in headings]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), headings
    summary = _summary(text)
    assert summary and all(title in headings for title in summary), summary
    assert [_number(title) for title in summary] == sorted(_number(title) for title in summary)


def _table(title: str) -> report.Table:
    return report.Table(title, ["case", "time"], [["a", "1.0 ms"]], target="t", verdict="met", headline="fast")


def test_a_full_run_writes_the_sections_in_the_order_of_the_numbers(tmp_path):
    doc = tmp_path / "benchmarks.md"
    titles = ["1. Search", "7. A hung Hub", "8. Folder store", "9a. Space page", "10b. Recall (now)", "11. Hooks"]
    info = {"CPU": "test", "Chromium": "none", "Node": "none"}
    report.write_doc(doc, [_table(t) for t in titles], info, intro="Intro.", plot="plot.png", elapsed=60)
    text = doc.read_text()
    assert _headings(text) == titles and _summary(text) == titles
    sections = [line for line in text.split("\n") if line.startswith("## ")]
    assert sections[-3:] == [report.SPACE_SECTION, report.RECALL_SECTION, report.SYNC_SECTION]
    assert text.index(report.SYNC_SECTION) < text.index("### 11. Hooks")


def test_a_table_measured_alone_for_the_first_time_stands_in_its_order(tmp_path):
    """`--only CASE` of a new table (11b): at the end of its own section, before the next section's tables, and its
    summary row after the rows of the tables numbered before it."""
    doc = tmp_path / "benchmarks.md"
    titles = ["1. Search", "11. Hooks", "12. The whole CI run"]
    info = {"CPU": "test", "Chromium": "none", "Node": "none"}
    report.write_doc(doc, [_table(t) for t in titles], info, intro="Intro.", plot="plot.png", elapsed=60)
    report.replace_tables(doc, [_table("11b. A long history"), _table("13. Status")])
    text = doc.read_text()
    wanted = ["1. Search", "11. Hooks", "11b. A long history", "12. The whole CI run", "13. Status"]
    assert _headings(text) == wanted and _summary(text) == wanted
    assert text.index(report.SYNC_SECTION) < text.index("### 11b.") < text.index(report.CI_SECTION)
