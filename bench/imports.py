"""Where start-up time goes: the imports of a command, from `python -X importtime`, beyond `python -c pass`."""

from __future__ import annotations

import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

OWN = "agent_memory"
Node = tuple[str, float, list]  # module, cumulative milliseconds, the modules it imported first


def _parse(stderr: str) -> list[Node]:
    """The top-level imports of one `-X importtime` report, as trees (the report lists children first)."""
    waiting: dict[int, list[Node]] = defaultdict(list)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        waiting[depth].append((name.strip(), int(cumulative) / 1000, waiting.pop(depth + 1, [])))
    return waiting[0]


def _libraries(children: list[Node]) -> list[Node]:
    """The first modules below `children` that are not the helper's own (what its modules cost)."""
    found = []
    for node in children:
        found += _libraries(node[2]) if node[0].startswith(OWN) else [node]
    return found


def _importtime(argv: list[str], env: Mapping[str, str], cwd: Path) -> list[Node]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], env=dict(env), cwd=cwd, capture_output=True, text=True
    )
    return _parse(proc.stderr)


def breakdown(script: list[str], env: Mapping[str, str], cwd: Path, runs: int = 5) -> tuple[float, str]:
    """Median milliseconds that `script` (a Python file and its arguments) spends importing beyond what
    `python -c pass` imports, and its largest imports: `module 10.5 (library 6.1, library 2.4)`."""
    baseline = {name for name, _ms, _children in _importtime(["-c", "pass"], env, cwd)}
    top: dict[str, list[float]] = defaultdict(list)
    inner: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    totals = []
    for _ in range(runs):
        nodes = [node for node in _importtime(script, env, cwd) if node[0] not in baseline]
        totals.append(sum(node[1] for node in nodes))
        for name, cumulative, children in nodes:
            top[name].append(cumulative)
            for library, library_ms, _ in _libraries(children):
                inner[name][library].append(library_ms)
    parts = []
    for name in sorted(top, key=lambda n: -statistics.median(top[n]))[:5]:
        heavy = sorted(((statistics.median(v), lib) for lib, v in inner[name].items()), reverse=True)[:4]
        detail = ", ".join(f"{lib} {value:.1f}" for value, lib in heavy if value >= 0.5)
        parts.append(f"{name} {statistics.median(top[name]):.1f}" + (f" ({detail})" if detail else ""))
    return statistics.median(totals), "; ".join(parts)
