"""15. The view's page: how long `agent-memory view` takes to write the site of 1,000 / 10,000 / 50,000 notes (its
peak memory too), and how soon its first page is usable in headless Chromium, opened from its `file://` address in a
new browser context (navigation to the timeline drawn, `data-state=ready`); and a search of every note typed in the
page's box (all the data files loaded, then searched).

The notes are bench/data.py's, in a folder store; one `agent-memory search` fills the cache first (setup, not
measured). Standalone: `python bench/view_page.py [--sizes 1000,50000] [--runs 3]`.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import data
from corpus import Context
from env import Machine, write_folder
from local import peak_memory
from report import Table, ms
from timing import median

WRITE_TARGET_S = 5.0
FIRST_PAGE_TARGET_S = 1.0
SEARCH = '"stale lockfile"'


def view(ctx: Context) -> list[Table]:
    """15. The view's site: write time, peak memory, first page and a whole search in Chromium."""
    from space_browser import launch  # tests/ is on sys.path (env)

    runs = 1 if ctx.quick else ctx.runs
    rows = []
    met = True
    with launch() as browser:
        for size in ctx.sizes:
            machine = _filled(ctx.root / f"view-{size}", size)
            out = machine.root / "site"
            argv = machine.argv("view", "--project", data.PROJECT, "--out", str(out))
            writes, cpu = [], []
            for _ in range(ctx.warmup(1) + runs):
                before = _children_cpu()
                started = time.perf_counter()
                machine.run(argv)
                writes.append(time.perf_counter() - started)
                cpu.append(_children_cpu() - before)
            writes, cpu = writes[-runs:], cpu[-runs:]
            peak = peak_memory(argv, machine)
            size_mb = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
            url = (out / "index.html").as_uri()
            firsts, searches = [], []
            for _ in range(runs):
                first, searched = _page(browser, url)
                firsts.append(first)
                searches.append(searched)
            write_s, first_s = median(writes), median(firsts)
            met = met and write_s <= WRITE_TARGET_S and first_s <= FIRST_PAGE_TARGET_S
            rows.append(
                [
                    f"{size:,}",
                    ms(write_s),
                    ms(median(cpu)),
                    f"{peak / 2**20:,.0f} MiB",
                    f"{size_mb:,.0f} MB",
                    ms(first_s),
                    ms(median(searches)),
                ]
            )
    return [
        Table(
            title="15. The view's page (`agent-memory view`)",
            columns=[
                "notes",
                "site written",
                "its CPU time",
                "peak memory",
                "site size",
                "first page usable",
                "search of all notes",
            ],
            rows=rows,
            target=f"site written ≤ {WRITE_TARGET_S:g} s, first page usable ≤ {FIRST_PAGE_TARGET_S:g} s (50,000 notes)",
            verdict="met" if met else "not met",
            notes=[
                "Median of the runs; the machine is shared, absolute times are context (CPU time is the steadier "
                "figure on a loaded machine).",
                "Markdown is rendered newest first (the first 500 notes always) until 3.5 s into the write; the "
                "rest is shown as text until `--render-all`.",
                f"The search is {SEARCH} typed in the page's box: every data file loaded, then every note searched.",
            ],
            headline=f"{rows[-1][1]} to write, {rows[-1][5]} to the first page at {rows[-1][0]} notes",
        )
    ]


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes: what a write cost, whatever the load."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _filled(root: Path, size: int) -> Machine:
    store = root / "store"
    store.mkdir(parents=True, mode=0o700)
    write_folder(store, data.notes(size))
    machine = Machine(root).setup(f"file://{store}", data.PROJECT)
    machine.agent_memory("search", "--json", "anything")  # fills the cache
    return machine


def _page(browser: object, url: str) -> tuple[float, float]:
    """Seconds to the first page usable in a new context, then to the results of SEARCH typed in the box."""
    context = browser.new_context()  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        started = time.perf_counter()
        page.goto(url)
        page.wait_for_selector("body[data-state=ready]", timeout=60_000)
        first = time.perf_counter() - started
        started = time.perf_counter()
        page.get_by_role("searchbox", name="Search the notes").fill(SEARCH)
        page.get_by_role("status").filter(has_text="matching notes").wait_for(timeout=300_000)
        return first, time.perf_counter() - started
    finally:
        context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="view-bench-") as scratch:
        ctx = Context(Path(scratch), None, [int(s) for s in options.sizes.split(",")], options.runs)
        for table in view(ctx):
            print(table.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
