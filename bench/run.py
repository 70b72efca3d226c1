"""Run the agent-memory benchmarks: `python bench/run.py [--quick]`.

The full run (sizes 1,000 / 10,000 / 50,000 notes) writes docs/benchmarks.md and docs/search-latency.png.
`--quick` (200 notes, one run of each, no warm-up, fewer files and page loads: the page's start-up options combined
into four loads that take every path) only checks that every benchmark still runs and prints its tables; it asserts no
timing and writes nothing under docs/. The exit code is non-zero if any benchmark failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV_PYTHON = REPO / ".venv" / "bin" / "python"

try:
    import agent_memory  # noqa: F401
except ImportError:  # run with the virtualenv's interpreter, which has the helper, hf and hf_xet
    if VENV_PYTHON.exists() and Path(sys.executable) != VENV_PYTHON:
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])
    raise SystemExit("agent_memory is not installed: run with the agent-memory virtualenv's python") from None

import bounds  # noqa: E402
import ci  # noqa: E402
import corpus  # noqa: E402
import env  # noqa: E402
import hooks_cost  # noqa: E402
import hung_folder  # noqa: E402
import importing  # noqa: E402
import local  # noqa: E402
import outage  # noqa: E402
import recall  # noqa: E402
import remote  # noqa: E402
import report  # noqa: E402
import space_page  # noqa: E402
import sync_history  # noqa: E402
import sync_hooks  # noqa: E402
import view_page  # noqa: E402

CASES = (
    local.search,
    local.startup,
    remote.refresh,
    remote.save,
    remote.skills,
    importing.importing,
    outage.outage,
    local.folder_store,
    space_page.page,
    recall.recall,
    sync_hooks.sync,
    sync_history.history,
    ci.ci,
    bounds.status_size,
    bounds.query_bounds,
    view_page.view,
    hung_folder.hung_folder,
    hooks_cost.hooks_cost,
)  # in the order of their tables' numbers (docs/benchmarks.md and its summary list them so)
# cases that prepare their own notes, or none
NO_CORPUS = {
    ci.ci,
    view_page.view,
    space_page.page,
    local.startup,
    recall.recall,
    importing.importing,
    outage.outage,
    sync_hooks.sync,
    sync_history.history,
    local.folder_store,
    bounds.status_size,
    bounds.query_bounds,
    hung_folder.hung_folder,
    hooks_cost.hooks_cost,
}

INTRO = """
How to reproduce: run `python bench/run.py` from the repository root.
Use the virtualenv that has agent-memory installed (`.venv`), with ripgrep installed.
The plot needs matplotlib (`.venv/bin/pip install matplotlib`).
`python bench/run.py --quick` is the smoke test that CI runs: 200 notes, one run of each, no warm-up, writes nothing.

Every figure comes from whole processes: what an agent pays per call.
They run in alternation (A, B, C, then B, C, A...), after warm-up runs.
The notes are synthetic, generated with a fixed seed by `bench/data.py`.
They are Markdown with YAML frontmatter, 300 B to 20 KB, median about 1.5 KB.
About 3 notes in 1,000 contain the query phrase, half of them in title case.
The network side is the Hub emulator of the test suite (`tests/hub_emulator.py`).
It runs with the real `huggingface_hub` and `hf_xet`, in the benchmark process.
The machine is shared and noisy.
Only the ratios measured in the same rounds are meaningful; absolute times are context.
"""


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmarks of agent-memory against rg, grep and hf.")
    parser.add_argument("--quick", action="store_true", help="smoke test: small sizes, one run of each, no docs")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (its path is printed)")
    parser.add_argument(
        "--only", choices=[case.__name__ for case in CASES], help="run one comparison (docs: only its own section)"
    )
    options = parser.parse_args()
    cases = [case for case in CASES if options.only in (None, case.__name__)]
    corpus.check_tools(plot=not options.quick and not options.only)
    # start-up must not measure compilation (PYTHONDONTWRITEBYTECODE may be set): compile once, up front
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "helper" / "agent_memory")], check=False)

    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="agent-memory-bench-"))
    emulator = env.start_emulator(root)
    ctx = corpus.Context(
        root=root,
        emulator=emulator,
        sizes=[200] if options.quick else [1_000, 10_000, 50_000],
        runs=1 if options.quick else 10,
        quick=options.quick,
    )
    tables, failed = [], []
    try:
        for size in ctx.sizes if set(cases) - NO_CORPUS else []:
            _progress(f"preparing {size:,} notes")
            corpus.prepare(ctx, size)
        for case in cases:
            _progress(f"running {case.__name__}")
            case_started = time.monotonic()
            try:
                found = case(ctx)
            except Exception:
                failed.append(case.__name__)
                traceback.print_exc()
                continue
            tables += found
            print(report.console(found), flush=True)
            _progress(f"{case.__name__} took {time.monotonic() - case_started:.0f} s")  # where a run's time goes
    finally:
        emulator.stop()
        if options.keep:
            _progress(f"scratch folder kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print("### Summary\n\n" + report.summary(tables), flush=True)
    if failed:
        _progress(f"FAILED: {', '.join(failed)}")
        return 1
    elapsed = time.monotonic() - started
    if not options.quick and options.only == "page":
        report.write_section(REPO / "docs" / "benchmarks.md", report.SPACE_SECTION, tables, report.machine())
        _progress(f"wrote the {report.SPACE_SECTION} section of docs/benchmarks.md")
    elif not options.quick and options.only == "recall":
        report.write_recall(REPO / "docs" / "benchmarks.md", tables)
        _progress(f"wrote the {report.RECALL_SECTION} section of docs/benchmarks.md")
    elif not options.quick and options.only:
        report.replace_tables(REPO / "docs" / "benchmarks.md", tables)
        _progress(f"replaced the {options.only} tables of docs/benchmarks.md (the others keep their earlier run)")
    elif not options.quick:
        report.plot_search(REPO / "docs" / "search-latency.png", ctx.search_latency)
        report.write_doc(
            REPO / "docs" / "benchmarks.md",
            tables,
            report.machine(),
            intro=INTRO,
            plot="search-latency.png",
            elapsed=elapsed,
        )
        _progress("wrote docs/benchmarks.md and docs/search-latency.png")
    _progress(f"done in {elapsed:.0f} s")
    return 0


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
