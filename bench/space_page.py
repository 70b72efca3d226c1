"""9. The Space's page: time and bytes of cold and warm loads in headless Chromium, what each start-up option
gives, and the generator under Pyodide.

The site is built by build.py and served on 127.0.0.1 (no compression, like a plain static host) by two
servers: `build.py --serve` (every file revalidated: the browser's HTTP cache answers a second visit), and
one that serves it as a Hugging Face static Space appears to (`tests/space_site.py`: binary files by a
`no-store` redirect to another origin, which the HTTP cache can never answer). A cold load is a new browser
context (empty caches); a warm one is a second visit in the same context, 2 s after the first was ready.
"""

from __future__ import annotations

import contextlib
import gzip
import html
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import space_generator_cases
import space_site
from corpus import Context
from env import REPO  # also puts tests/ on sys.path: the suite's server, browser and Pyodide helpers
from report import Table, ms, ratio
from space_browser import launch, wait_until_settled
from timing import median, quartiles

from space.generator import RUNTIME_FILES, from_form

COLD_TARGET_S = 3.0
WARM_TARGET_S = 1.5
EXTRA_BYTES_TARGET = 500_000  # 0.5 MB beyond the Pyodide core
PYODIDE = REPO / "node_modules" / "pyodide"
CORE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
GENERATOR_CALLS = 200
SECOND_VISIT_AFTER_S = 2.0  # what Chromium writes to its caches after a load (compiled code) has time to land

# What a load transferred (navigation and every resource, headers included) and when it got ready
_LOAD = """() => {
  const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
  const mark = (name) => performance.getEntriesByName(name)[0].startTime;
  return {
    bytes: entries.reduce((sum, e) => sum + e.transferSize, 0),
    requests: entries.length,
    runtime: entries.filter((e) => /pyodide\\/.*\\.(wasm|gz|zip)(\\?|$)/.test(e.name) && e.transferSize > 1000).length,
    python: mark("python-ready"), generator: mark("generator-ready"), ready: mark("ready"),
  };
}"""

# The reference: the same Pyodide from the same site, and nothing else (no form, no generator)
_PYODIDE_ONLY = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Pyodide alone</title></head>
<body data-state="loading"><script type="module">
WASM_SHIM
const { loadPyodide } = await import("./pyodide/pyodide.mjs");
await loadPyodide({ indexURL: new URL("pyodide/", document.baseURI).href, lockFileContents: LOCK });
for (const name of ["python-ready", "generator-ready", "ready"]) performance.mark(name);
document.body.dataset.state = "ready";
</script></body></html>
"""
# Pyodide waits forever for a .wasm not sent as application/wasm (the Space-like server's): compiled from
# its bytes instead, as the page itself does
_WASM_SHIM = """const streaming = WebAssembly.instantiateStreaming.bind(WebAssembly);
WebAssembly.instantiateStreaming = async (source, imports) => {
  const response = await source;
  if (response.headers.get("Content-Type") === "application/wasm") return streaming(response, imports);
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
};"""
REFERENCE = "bench-pyodide-only.html"
OPTIONS = "bench-options.html"
_OPTIONS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Start-up options</title>
<script type="application/json" id="options-config">CONFIG</script></head>
<body data-state="loading"><script type="module">WASM_SHIM</script>
<script type="module" src="bench-space-options.js"></script></body></html>
"""
_WORKER = """self.onmessage = async ({ data }) => {
  const { loadPyodide } = await import(data.options.indexURL + "pyodide.mjs");
  await loadPyodide({ ...data.options, stdout: () => {} });
  self.postMessage("ready");
};
"""
# (label, query string of bench/space_page_options.js), each measured cold and warm in the same rounds
_STARTUP_OPTIONS = [
    ("Pyodide as it comes: lock file fetched", "lock=file"),
    ("lock file inlined", ""),
    ("in a Web Worker started at page start", "worker=1"),
    ("trimmed standard library", "stdlib=trimmed"),
    (
        "snapshot of Python alone + generator, files fetched once Python is ready",
        "snapshot=python&generator=after",
    ),
    ("snapshot of Python alone + generator, files fetched at page start", "snapshot=python&generator=start"),
    ("snapshot with the generator imported (the page's)", "snapshot=page"),
    ("the page's snapshot + runtime kept in Cache Storage (the page)", "snapshot=page&cache=1"),
]
# `--quick` checks that every start-up option still works, not what each gives: four loads instead of eight, the
# options combined so that they still take every path of bench/space_page_options.js (the plain start, the
# worker's and the snapshot's; the lock file fetched, the trimmed standard library, both snapshots, Cache Storage,
# the generator's files fetched at page start and once Python is ready); the first is still the baseline
_QUICK_OPTIONS = [
    _STARTUP_OPTIONS[0],
    ("in a Web Worker + trimmed standard library", "worker=1&stdlib=trimmed"),
    (
        "snapshot of Python alone + generator, files fetched at page start + Cache Storage",
        "snapshot=python&generator=start&cache=1",
    ),
    ("snapshot with the generator imported + its files fetched once Python is ready", "snapshot=page&generator=after"),
]
SERVERS: dict[str, Callable[[Path], contextlib.AbstractContextManager[str]]] = {
    "build.py --serve": space_site.serving,
    "Space-like": space_site.space_like_serving,
}


def page(ctx: Context) -> list[Table]:
    """9a. Cold and warm loads of the page and of Pyodide alone; 9b. each start-up option; 9c. the generator."""
    site = ctx.root / "space" / "site"
    space_site.built(site)
    _add_bench_pages(site, ctx.root / "space")
    load_before = os.getloadavg()[0]
    pages = {"page": "", "reference": REFERENCE}
    after = 0.0 if ctx.quick else SECOND_VISIT_AFTER_S  # `--quick` only checks that every visit works
    loads = {server: _visits(serve(site), pages, ctx.runs, ctx.warmup(1), after) for server, serve in SERVERS.items()}
    startup_options = _QUICK_OPTIONS if ctx.quick else _STARTUP_OPTIONS
    options_pages = {label: f"{OPTIONS}?{query}" for label, query in startup_options}
    options = _visits(space_site.space_like_serving(site), options_pages, ctx.runs, ctx.warmup(1), after)
    load_after = os.getloadavg()[0]
    core = sum((PYODIDE / name).stat().st_size for name in CORE_FILES)
    context = (
        f"The machine is shared: its 1-minute load average was {load_before:.1f} before these loads and "
        f"{load_after:.1f} after ({os.cpu_count()} cores). On a loaded machine, every time here grows."
    )
    return [
        _loads_table(loads, core, ctx.runs, context, after),
        _options_table(options, startup_options, core, ctx.runs),
        _generator(ctx.root / "space"),
    ]


def _loads_table(loads: dict[str, dict[str, list[dict]]], core: int, runs: int, context: str, after: float) -> Table:
    space = loads["Space-like"]["page"]
    cold, warm = median([v["cold"]["ready"] for v in space]) / 1000, median([v["warm"]["ready"] for v in space]) / 1000
    extra = statistics.median(v["cold"]["bytes"] for v in space) - core
    worst_warm = max(median([v["warm"]["ready"] for v in server["page"]]) / 1000 for server in loads.values())
    met = cold <= COLD_TARGET_S and worst_warm <= WARM_TARGET_S and extra <= EXTRA_BYTES_TARGET
    rows = []
    for server, pages in loads.items():
        for name, label in (("page", "the Space's page"), ("reference", "Pyodide alone")):
            rows.append(_load_row(f"{label}, {server}", pages[name], pages["reference"], core))
    return Table(
        "9a. Space page: cold and warm loads",
        [
            "page, server",
            "cold: ready (median)",
            "cold: quartiles",
            "cold: Python ready",
            "warm: ready (median)",
            "warm: quartiles",
            "cold: transferred",
            "cold: beyond the Pyodide core",
            "warm: transferred",
            "warm: runtime files downloaded",
            "cold ready / Pyodide alone",
        ],  # fmt: skip
        target=f'`data-state="ready"` within {COLD_TARGET_S:.0f} s cold and {WARM_TARGET_S} s warm; no more than the '
        "Pyodide core plus 0.5 MB transferred.",
        verdict="met" if met else "not met",
        headline=f"ready in {ms(cold)} cold and {ms(warm)} warm on the Space-like server, "
        f"{extra / 1000:,.0f} kB beyond the Pyodide core",
        notes=[
            "Times run from navigation start, read from the page's own marks.",
            "`python-ready` is when `loadPyodide` returns; `ready` is when the form works.",
            "Bytes are the browser's `transferSize` of every request, headers included.",
            "A file that Cache Storage or the HTTP cache answered transfers nothing; a revalidation, only its headers.",
            "The page starts Python from build.py's memory snapshot: CPython started, the generator imported.",
            "It downloads the wasm and the snapshot gzipped. It keeps the three large files in Cache Storage, by "
            "their SHA-256.",
            "`Pyodide alone` is the npm package as it comes (plain files, lock file inlined), measured in the same "
            "rounds.",
            "It is not ready for the form (no generator), so the page's ratio to it flatters Pyodide alone.",
            "The Pyodide core is the npm package's runtime that the page must load: `pyodide.mjs`, "
            "`pyodide.asm.mjs`, `pyodide.asm.wasm`, `python_stdlib.zip`.",
            f"It is {core / 1e6:.2f} MB, uncompressed. The local server does not compress, and Hugging Face's file "
            "storage serves the binary files as they are.",
            "Space-like: text files come from the page's origin, revalidated (`no-cache`, then 304).",
            "Binary files (`.wasm`, `.zip`, `.gz`, `.whl`) come by a `no-store` 302 to a freshly signed URL on "
            "another origin.",
            "That origin sends `application/octet-stream` with CORS, as a static Space serves what it keeps in Xet "
            "storage.",
            "huggingface.co cannot be reached from this machine. These headers are what "
            "/work/shared/reference/pyodide-and-spaces.md gathered.",
            "Pyodide alone then downloads its 12 MB again on every visit.",
            "On `build.py --serve`, the HTTP cache answers its standard library (304). But Chromium downloads the "
            "9.6 MB wasm again (`warm: transferred`).",
            f"Medians of {runs} cold loads and {runs} warm ones of each page, alternating, after one warm-up round.",
            f"The warm one ran {after:g} s after the cold one was ready. {context}",
        ],
        rows=rows,
    )


def _load_row(name: str, visits: list[dict], reference: list[dict], core: int) -> list[str]:
    cold = [v["cold"]["ready"] / 1000 for v in visits]
    warm = [v["warm"]["ready"] / 1000 for v in visits]
    transferred = statistics.median(v["cold"]["bytes"] for v in visits)
    return [
        name,
        ms(median(cold)),
        _quartiles(cold),
        ms(median([v["cold"]["python"] / 1000 for v in visits])),
        ms(median(warm)),
        _quartiles(warm),
        f"{transferred / 1e6:.2f} MB",
        f"{(transferred - core) / 1000:,.1f} kB",
        f"{statistics.median(v['warm']['bytes'] for v in visits) / 1e6:.2f} MB",
        str(max(v["warm"]["runtime"] for v in visits)),
        ratio(median(cold), median([v["cold"]["ready"] / 1000 for v in reference])),
    ]


def _quartiles(values: list[float]) -> str:
    low, high = quartiles(values) if len(values) > 1 else (values[0], values[0])
    return f"{ms(low)} to {ms(high)}"


def _options_table(
    options: dict[str, list[dict]], startup_options: list[tuple[str, str]], core: int, runs: int
) -> Table:
    baseline = median([v["cold"]["ready"] for v in options[startup_options[0][0]]]) / 1000
    rows = []
    for label, query in startup_options:
        visits = options[label]
        cold = median([v["cold"]["ready"] / 1000 for v in visits])
        transferred = statistics.median(v["cold"]["bytes"] for v in visits)
        warm_transferred = statistics.median(v["warm"]["bytes"] for v in visits)
        bytes_seen = "worker" not in query  # a worker's requests are in its own timeline, not the page's
        rows.append(
            [
                label,
                ms(cold),
                ms(median([v["warm"]["ready"] / 1000 for v in visits])),
                f"{transferred / 1e6:.2f} MB" if bytes_seen else "as above",
                f"{(transferred - core) / 1000:,.0f} kB" if bytes_seen else "as above",
                f"{warm_transferred / 1e6:.2f} MB" if bytes_seen else "as above",
                ratio(cold, baseline),
            ]
        )
    return Table(
        "9b. Space page: what each start-up option gives",
        [
            "option (each alone, unless it says +)",
            "cold: ready",
            "warm: ready",
            "cold: transferred",
            "beyond the core",
            "warm: transferred",
            "cold / as it comes",
        ],  # fmt: skip
        notes=[
            "These pages load Pyodide from the same site, on the Space-like server, in the same rounds. They have "
            "no form (bench/space_page_options.js).",
            "`ready` is when Python can run. With the generator, it is once `space.generator` is imported: what the "
            "page needs.",
            f"Medians of {runs} cold and {runs} warm loads of each.",
            "The snapshots are build.py's (`space/snapshot.mjs`), gzipped with the wasm.",
            "A snapshot holds CPython started, with the standard-library modules the generator uses imported. The "
            "page's holds the generator itself too.",
            "The page decompresses both with `DecompressionStream`.",
            "Python alone's snapshot is made by the bench, with the same script.",
            "Web Worker: the worker's own requests are not in the page's timeline, so its bytes are not shown. They "
            "are those of the row above it.",
            "Trimmed standard library: only the modules that Pyodide's start and the generator import, as a zip.",
            "It is made here, not shipped. The snapshot's zip directory is the full one's, so the two exclude each "
            "other.",
            "Chosen for the page: the snapshot with the generator imported, gzipped, with the runtime kept in Cache "
            "Storage (the last row).",
            "The lock file is inlined. Pyodide's two scripts are fetched at page start, with the runtime.",
            "Each file is checked against its SHA-256 on every use; the scripts are imported from their checked bytes.",
            "Not chosen: the Web Worker. CPython's start is the same work in a worker.",
            "The form already works while it runs, and every keystroke would become a message.",
            "Not chosen: the trimmed standard library. It has fewer bytes, but is no sooner.",
            "The time is CPython starting, not downloading; and a snapshot needs the zip it was made with.",
            "The page's files are fetched at page start, rather than once Python is ready. The snapshot holds the "
            "generator, so there is nothing left to fetch.",
            "Caching the compiled module: Chromium refuses to keep a `WebAssembly.Module` in IndexedDB.",
            "It says `DataCloneError: A WebAssembly.Module can not be serialized for storage`, in this Chromium.",
            "V8 keeps compiled wasm only beside a response's entry in the HTTP cache. A Space's `no-store` redirects "
            "rule that out.",
            "Even `build.py --serve`'s wasm was downloaded again on the second visit (9a, `warm: transferred`).",
            "The page keeps the gzipped bytes in Cache Storage, and compiles them on each visit.",
            "It compiles while streaming, as they are decompressed: a small part of the warm time above.",
        ],
        rows=rows,
    )


def _add_bench_pages(site: Path, scratch: Path) -> None:
    """The reference page and the options' pages, beside the built site (never part of it)."""
    index = (site / "index.html").read_text()
    config = space_site.page_config(index)
    lock = json.dumps(config["lock"])
    (site / REFERENCE).write_text(_PYODIDE_ONLY.replace("LOCK", lock).replace("WASM_SHIM", _WASM_SHIM))
    (site / "pyodide" / "pyodide-lock.json").write_text(lock)  # what `lock=file` fetches
    options_config = {"lock": config["lock"], "modules": sorted(config["modules"])}
    options_page = _OPTIONS_PAGE.replace("CONFIG", html.escape(json.dumps(options_config), quote=False))
    (site / OPTIONS).write_text(options_page.replace("WASM_SHIM", _WASM_SHIM))
    (site / "bench-space-options.js").write_bytes((REPO / "bench" / "space_page_options.js").read_bytes())
    (site / "bench-space-worker.js").write_text(f"{_WASM_SHIM}\n{_WORKER}")
    (site / "bench-stdlib-trimmed.zip").write_bytes(_trimmed_stdlib(scratch))
    (site / "pyodide" / "bench-snapshot-python.bin.gz").write_bytes(_python_snapshot())


def _python_snapshot() -> bytes:
    """A snapshot like build.py's, made by the same script, with the standard library but not the generator."""
    build = space_site.build_module()
    modules = {path: (REPO / source).read_bytes() for path, source in RUNTIME_FILES.items()}
    imports = [name for name in build.snapshot_imports(modules) if name != "space.generator"]
    request = {"root": build.MODULE_ROOT, "files": {}, "imports": imports}
    proc = subprocess.run(
        ["node", str(build.SNAPSHOT_SCRIPT), str(PYODIDE)],
        input=json.dumps(request).encode(),
        capture_output=True,
        env={**os.environ, "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
        check=True,
    )
    return gzip.compress(proc.stdout, compresslevel=build.GZIP_LEVEL, mtime=0)


def _trimmed_stdlib(scratch: Path) -> bytes:
    """python_stdlib.zip with only the modules loaded once Pyodide has started and imported the generator."""
    python = (
        "import sys\n"
        "sys.path.insert(0, '/home/pyodide/space/')\n"
        "import space.generator, hashlib, pathlib, json\n"
        "names = set()\n"
        "for module in list(sys.modules.values()):\n"
        "    origin = getattr(getattr(module, '__spec__', None), 'origin', None) or ''\n"
        "    if '.zip/' in origin:\n"
        "        names.add(origin.split('.zip/', 1)[1])\n"
        "'\\n'.join(sorted(names))\n"
    )
    loaded = set(_in_pyodide(scratch, python)["result"].splitlines())
    out = io.BytesIO()
    with zipfile.ZipFile(PYODIDE / "python_stdlib.zip") as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename in loaded:
                target.writestr(info, source.read(info))
    return out.getvalue()


def _in_pyodide(scratch: Path, python: str) -> dict[str, Any]:
    scratch.mkdir(parents=True, exist_ok=True)
    files = {path: str(REPO / source) for path, source in RUNTIME_FILES.items()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=scratch, delete=False) as file:
        json.dump({"pyodide": str(PYODIDE), "files": files, "python": python}, file)
    proc = subprocess.run(
        ["node", str(REPO / "tests" / "space_pyodide.mjs"), file.name], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


def _visits(
    server: contextlib.AbstractContextManager[str], pages: dict[str, str], runs: int, warmup: int, after: float
) -> dict[str, list[dict]]:
    """A cold and a warm load of each page per round (the warm one `after` seconds after the cold one was ready),
    the pages in alternating order, after `warmup` rounds (the server's and the OS's file caches)."""
    visits: dict[str, list[dict]] = {name: [] for name in pages}
    with server as url, launch() as browser:
        for round_ in range(-warmup, runs):
            for name in sorted(pages, reverse=round_ % 2 == 1):
                with _context(browser) as (page, outside):
                    cold = _load(page, url + pages[name])
                    time.sleep(after)
                    warm = _load(page, url + pages[name])
                    if outside:
                        raise RuntimeError(f"requests left 127.0.0.1: {outside}")
                if round_ >= 0:
                    visits[name].append({"cold": cold, "warm": warm})
    return visits


@contextlib.contextmanager
def _context(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A new context and page, not routed (routing would turn off the HTTP cache): requests are watched."""
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url) if "//127.0.0.1:" not in request.url else None)
    try:
        yield page, outside
    finally:
        context.close()


def _load(page: Any, url: str) -> dict:
    page.goto(url)
    if wait_until_settled(page) != "ready":
        raise RuntimeError(f"{url} did not become ready: {page.inner_text('body')[:500]}")
    return page.evaluate(_LOAD)


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
    pyodide = _in_pyodide(root, python)
    in_pyodide = json.loads(pyodide["result"])["median"]
    samples = []
    for _ in range(GENERATOR_CALLS):
        start = time.perf_counter()
        from_form(request)
        samples.append(time.perf_counter() - start)
    return Table(
        "9c. Setup commands: the generator's own run time",
        ["interpreter", "median per call", "calls"],
        rows=[
            [f"Pyodide {pyodide['python_version'].split()[0]} (Node)", ms(in_pyodide), str(GENERATOR_CALLS)],
            [f"CPython {sys.version.split()[0]}", ms(median(samples)), str(GENERATOR_CALLS)],
        ],
        notes=[
            "One call validates the form and writes the Linux script (venv, both agents). The page does this on "
            "every keystroke.",
            f"Starting Pyodide in Node (without the snapshot) took {pyodide['load_ms'] / 1000:.1f} s in the same run.",
        ],
    )
