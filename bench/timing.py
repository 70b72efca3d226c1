"""Alternating runs: every contender runs once per round, in a rotating order, after a warm-up round.

Machines are shared and noisy, so only ratios of medians measured in the same rounds mean anything.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path


def command(argv: list[str] | Callable[[], list[str]], *, env: Mapping[str, str], cwd: Path) -> Callable[[], None]:
    """A contender that runs `argv` (or, each time, what `argv()` returns) as a whole process, reads all its
    output, and fails unless it exits 0."""

    def run() -> None:
        args = argv() if callable(argv) else argv
        proc = subprocess.run(args, cwd=cwd, env=dict(env), capture_output=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()[-1000:]}")

    return run


def alternate(
    contenders: Mapping[str, Callable[[], object]],
    *,
    runs: int,
    warmup: int = 1,
    before: Callable[[str, int], object] | None = None,
) -> dict[str, list[float]]:
    """Wall-clock seconds of each contender for `runs` rounds; `before(name, round)` prepares a run, untimed."""
    names = list(contenders)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(-warmup, runs):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:  # rotate: nobody always runs first, or right after another
            if before is not None:
                before(name, round_)
            start = time.perf_counter()
            contenders[name]()
            elapsed = time.perf_counter() - start
            if round_ >= 0:
                times[name].append(elapsed)
    return times


def median(samples: list[float]) -> float:
    """The median of `samples`."""
    return statistics.median(samples)


def quartiles(samples: list[float]) -> tuple[float, float]:
    """The first and third quartiles of `samples` (the spread around the median); one sample (`--quick`) is its
    own spread."""
    if len(samples) < 2:
        return samples[0], samples[0]
    q1, _q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q3
