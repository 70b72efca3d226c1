"""6. The Space's page: bytes and time of a cold load in headless Chromium, and the generator under Pyodide.

The site is built by build.py and served by `build.py --serve` on 127.0.0.1 (no compression, like a plain
static host); every load is cold (a new browser context: empty HTTP and code caches).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import space_generator_cases
import space_site
from corpus import Context
from env import REPO  # also puts tests/ on sys.path: the suite's server, browser and Pyodide helpers
from report import Table, ms, ratio
from space_browser import launch, open_page, wait_until_settled
from timing import median, quartiles

from space.generator import RUNTIME_FILES, from_form

READY_TARGET_S = 3.0
EXTRA_BYTES_TARGET = 500_000  # 0.5 MB beyond the Pyodide core
PYODIDE = REPO / "node_modules" / "pyodide"
CORE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
GENERATOR_CALLS = 200

# What a cold load transferred (navigation and every resource, headers included) and when it got ready
_LOAD = """() => {
  const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
  const mark = (name) => performance.getEntriesByName(name)[0].startTime;
  return {
    bytes: entries.reduce((sum, e) => sum + e.transferSize, 0),
    requests: entries.length,
    python: mark("python-ready"), generator: mark("generator-ready"), ready: mark("ready"),
  };
}"""


# The reference: the same Pyodide from the same site, and nothing else (no form, no generator)
_PYODIDE_ONLY = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Pyodide alone</title></head>
<body data-state="loading"><script type="module">
const { loadPyodide } = await import("./pyodide/pyodide.mjs");
await loadPyodide({ indexURL: new URL("pyodide/", document.baseURI).href });
for (const name of ["python-ready", "generator-ready", "ready"]) performance.mark(name);
document.body.dataset.state = "ready";
</script></body></html>
"""
REFERENCE = "bench-pyodide-only.html"


def page(ctx: Context) -> list[Table]:
    """6a. Cold loads of the page, alternating with Pyodide alone; 6b. the generator's own run time."""
    load_before = os.getloadavg()[0]
    loads = _cold_loads(ctx.root / "space", ctx.runs)
    load_after = os.getloadavg()[0]
    core = sum((PYODIDE / name).stat().st_size for name in CORE_FILES)
    ready = {name: [load["ready"] / 1000 for load in runs] for name, runs in loads.items()}
    transferred = statistics.median(load["bytes"] for load in loads["page"])
    extra = transferred - core
    met = median(ready["page"]) <= READY_TARGET_S and extra <= EXTRA_BYTES_TARGET
    cold = Table(
        "6a. Space page: cold load",
        [
            "page",
            "ready (median)",
            "ready (quartiles)",
            "Python ready",
            "generator loaded",
            "transferred",
            "beyond the Pyodide core",
            "requests",
            "ready / Pyodide alone",
        ],  # fmt: skip
        target=f'`data-state="ready"` within {READY_TARGET_S:.0f} s; no more than the Pyodide core plus 0.5 MB '
        "transferred.",
        verdict="met" if met else "not met",
        headline=f"ready in {ms(median(ready['page']))} ({ratio(median(ready['page']), median(ready['reference']))} "
        f"of Pyodide alone), {extra / 1000:,.0f} kB beyond the Pyodide core",
        notes=[
            "Times from navigation start, read from the page's own marks (`python-ready` when `loadPyodide` "
            "returns, `generator-ready` once the generator's files are checked and imported, `ready` when the "
            "form works); bytes are the browser's `transferSize` of every request, headers included.",
            "`Pyodide alone` is the reference: a page that loads the same Pyodide from the same site and does "
            "nothing else, measured in the same rounds. What the Space adds is the difference; the rest is "
            "Pyodide starting CPython (it imports about 190 modules of its own, asyncio and ssl among them), "
            "after downloads that end within about 0.3 s.",
            f"The Pyodide core is the npm package's runtime the page must load (`pyodide.mjs`, `pyodide.asm.mjs`, "
            f"`pyodide.asm.wasm`, `python_stdlib.zip`: {core / 1e6:.2f} MB, uncompressed here: the local server "
            "does not compress, and Hugging Face's file storage serves the binary files as they are).",
            f"Medians of {ctx.runs} cold loads of each page, alternating, each in a new browser context (empty "
            f"caches), after one warm-up round. The machine is shared: its 1-minute load average was "
            f"{load_before:.1f} before these loads and {load_after:.1f} after ({os.cpu_count()} cores); on a loaded "
            "machine every time here grows, the ratio much less.",
        ],
        rows=[_row("the Space's page", loads["page"], loads["reference"], core)]
        + [_row("Pyodide alone", loads["reference"], loads["reference"], core)],
    )
    return [cold, _generator(ctx.root / "space")]


def _row(name: str, loads: list[dict], reference: list[dict], core: int) -> list[str]:
    ready = [load["ready"] / 1000 for load in loads]
    low, high = quartiles(ready) if len(ready) > 1 else (ready[0], ready[0])
    transferred = statistics.median(load["bytes"] for load in loads)
    return [
        name,
        ms(median(ready)),
        f"{ms(low)} to {ms(high)}",
        ms(median([load["python"] / 1000 for load in loads])),
        ms(median([load["generator"] / 1000 for load in loads])) if loads is not reference else "",
        f"{transferred / 1e6:.2f} MB",
        f"{(transferred - core) / 1000:,.1f} kB",
        str(loads[0]["requests"]),
        ratio(median(ready), median([load["ready"] / 1000 for load in reference])),
    ]


def _cold_loads(root: Path, runs: int) -> dict[str, list[dict]]:
    """Cold loads of the page and of the reference, in alternating order: {"page": [...], "reference": [...]}."""
    loads: dict[str, list[dict]] = {"page": [], "reference": []}
    with space_site.build_server(root / "site") as (url, _report), launch() as browser:
        (root / "site" / REFERENCE).write_text(_PYODIDE_ONLY)
        urls = {"page": url, "reference": url + REFERENCE}
        for round_ in range(-1, runs):  # one warm-up round: the server's and the OS's file caches
            for name in sorted(urls, reverse=round_ % 2 == 1):
                page, traffic = open_page(browser, urls[name])
                if wait_until_settled(page) != "ready":
                    raise RuntimeError(f"{urls[name]} did not become ready: {page.inner_text('body')[:500]}")
                if traffic.blocked:
                    raise RuntimeError(f"requests left 127.0.0.1: {traffic.blocked}")
                load = page.evaluate(_LOAD)
                page.context.close()
                if round_ >= 0:
                    loads[name].append(load)
    return loads


def _generator(root: Path) -> Table:
    request = space_generator_cases.requests()["linux-venv-both"]
    python = (
        "import json, statistics, time\n"
        "from space.generator import from_form\n"
        f"request = {request!r}\n"
        "samples = []\n"
        f"for _ in range({GENERATOR_CALLS}):\n"
        "    start = time.perf_counter(); from_form(request); samples.append(time.perf_counter() - start)\n"
        "json.dumps({'median': statistics.median(samples)})\n"
    )
    root.mkdir(parents=True, exist_ok=True)
    files = {path: str(REPO / source) for path, source in RUNTIME_FILES.items()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=root, delete=False) as file:
        json.dump({"pyodide": str(PYODIDE), "files": files, "python": python}, file)
    proc = subprocess.run(
        ["node", str(REPO / "tests" / "space_pyodide.mjs"), file.name], capture_output=True, text=True, check=True
    )
    pyodide = json.loads(proc.stdout)
    in_pyodide = json.loads(pyodide["result"])["median"]
    samples = []
    for _ in range(GENERATOR_CALLS):
        start = time.perf_counter()
        from_form(request)
        samples.append(time.perf_counter() - start)
    return Table(
        "6b. Setup commands: the generator's own run time",
        ["interpreter", "median per call", "calls"],
        rows=[
            [f"Pyodide {pyodide['python_version'].split()[0]} (Node)", ms(in_pyodide), str(GENERATOR_CALLS)],
            [f"CPython {sys.version.split()[0]}", ms(median(samples)), str(GENERATOR_CALLS)],
        ],
        notes=[
            "One call validates the form and writes the Linux script (venv, both agents), as the page does on "
            f"every keystroke. Starting Pyodide in Node took {pyodide['load_ms'] / 1000:.1f} s in the same run "
            "(context: the page's 'Python ready' above is the same work in the browser).",
        ],
    )
