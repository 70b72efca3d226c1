"""What every comparison shares: the run's context, the synthetic note collections, request counting.

Each comparison runs whole processes, alternating the contenders, checks that they did the same work (same
matches, same files), fails loudly if not, and returns its tables.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import data
from env import HF, Machine, hub_env


@dataclass
class Context:
    """What every comparison gets: a scratch folder, the Hub emulator, the sizes and how many runs."""

    root: Path
    emulator: Any
    sizes: list[int]
    runs: int
    quick: bool = False
    corpora: dict[int, Corpus] = field(default_factory=dict)
    search_latency: dict[str, dict[int, float]] = field(default_factory=dict)

    def warmup(self, rounds: int) -> int:
        """The warm-up rounds of a comparison: none in `--quick`, a smoke test whose times mean nothing."""
        return 0 if self.quick else rounds

    def requests(self, fn: Callable[[], object]) -> Counter:
        """Run `fn` once and count the emulator requests it made, by endpoint."""
        self.emulator.reset_requests()
        fn()
        return endpoints(self.emulator.requests)


@dataclass
class Corpus:
    """N synthetic notes in their own bucket, and a machine whose cache holds them all."""

    size: int
    bucket: str
    files: dict[str, bytes]
    machine: Machine
    fill_seconds: float
    hf_dir: Path
    hf_fill_seconds: float

    @property
    def notes_dir(self) -> Path:
        return self.machine.cached_notes(data.PROJECT)

    @property
    def remote_notes(self) -> str:
        return remote_notes(self.bucket)


def remote_notes(bucket: str) -> str:
    """The `hf://` address of the notes folder of `bucket`."""
    return f"hf://buckets/{bucket}/projects/{data.PROJECT}/notes"


def endpoints(requests: list[tuple[str, str, str]]) -> Counter:
    """Requests by endpoint name (unknown routes by their path, without the query)."""
    return Counter(name if name != "other" else path.split("?")[0] for _method, name, path in requests)


def timed(fn: Callable[[], object]) -> float:
    """Wall-clock seconds of one call of `fn` (for one-off measurements)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def requests_text(counter: Counter) -> str:
    """`name count, ...` for a table cell."""
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) or "none"


def prepare(ctx: Context, size: int) -> Corpus:
    """Seed the bucket, fill a machine's cache with one `agent-memory search`, and an `hf` copy with sync."""
    bucket = f"alice/notes-{size}"
    files = data.notes(size)
    ctx.emulator.create_bucket(bucket, private=True)
    ctx.emulator.put_files(bucket, files)
    machine = Machine(ctx.root / f"notes-{size}", hub_env(ctx.emulator)).setup(bucket, data.PROJECT)
    hf_dir = machine.root / "hf-copy"
    fill = timed(lambda: _fill(machine, size))
    hf_fill = timed(lambda: machine.run([HF, "buckets", "sync", remote_notes(bucket), str(hf_dir)]))
    corpus = Corpus(size, bucket, files, machine, fill, hf_dir, hf_fill)
    cached = {file.name for file in corpus.notes_dir.iterdir()}
    if cached != {path.rsplit("/", 1)[1] for path in files}:
        raise RuntimeError(f"the cache of {size} notes does not hold exactly the bucket's notes")
    ctx.corpora[size] = corpus
    return corpus


def _fill(machine: Machine, size: int) -> None:
    """One online search fills the cache (setup, not a target: no time budget may cut it short)."""
    argv = machine.argv("search", "--json", data.QUERY)
    sync = json.loads(machine.run(argv, env={"AGENT_MEMORY_TIMEOUT": "3600"}).stdout)["freshness"]
    if sync["status"] != "fresh":
        raise RuntimeError(f"filling the cache of {size} notes failed: {sync['reason']}: {sync['detail']}")


def check_tools(plot: bool) -> None:
    """Fail early, and clearly, if a baseline tool (or, with `plot`, matplotlib) is missing."""
    if plot and importlib.util.find_spec("matplotlib") is None:  # found missing at the end, it loses the run
        raise SystemExit(
            "matplotlib is not installed; a full run draws docs/search-latency.png with it.\n"
            "Next: .venv/bin/pip install matplotlib"
        )
    for tool in ("rg", "grep"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (ripgrep: apt-get install ripgrep)")
    if not Path(HF).exists():
        raise SystemExit(f"{HF} not found: run bench/run.py with the Python of the agent-memory virtualenv")
