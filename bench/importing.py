"""`agent-memory import` of many large files: peak memory and time, which must not grow with the number of files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import data
from corpus import Context
from env import Machine
from local import peak_memory
from report import Table

FILE_BYTES = 1_040_000  # about 1 MiB, within the most a note holds (1,048,576 bytes)
SIZES = (200, 2_000)
QUICK_SIZES = (5, 20)  # `--quick`: every path (a dry run, a real import, two sizes), few files
SAVED = 200  # files imported for real (each one saved through the outbox into a folder store)
QUICK_SAVED = 5
LOADS: list[float] = []  # the machine's load average around each measured run


def _files(folder: Path, count: int) -> None:
    """`count` Markdown files of FILE_BYTES each, every one different, made of the benchmark's synthetic notes."""
    pool = [text.decode() for text in data.notes(200).values()]
    folder.mkdir(parents=True)
    for number in range(count):
        parts, size = [f"# Imported file {number}\n\n"], 0
        while size < FILE_BYTES:
            part = pool[(number + len(parts)) % len(pool)]
            parts.append(part)
            size += len(part.encode())
        text = "".join(parts).encode()[:FILE_BYTES]
        (folder / f"memory-{number:05d}.md").write_bytes(text[: text.rfind(b"\n") + 1])


def _run(machine: Machine, folder: Path, *args: str) -> tuple[int, float]:
    """Peak memory (bytes) and wall-clock seconds of one `agent-memory import FOLDER ARGS`."""
    started, load = time.monotonic(), os.getloadavg()[0]
    peak = peak_memory(machine.argv("import", str(folder), *args), machine)
    seconds = time.monotonic() - started
    LOADS.extend((load, os.getloadavg()[0]))
    return peak, seconds


def importing(ctx: Context) -> list[Table]:
    """6. `import --dry-run` of many files of about 1 MiB, and a real import into a folder store."""
    sizes, saved = (QUICK_SIZES, QUICK_SAVED) if ctx.quick else (SIZES, SAVED)
    rows, peaks = [], {}
    for count in sizes:
        store = ctx.root / f"import-store-{count}"
        store.mkdir(mode=0o700)
        machine = Machine(ctx.root / f"import-{count}").setup(f"file://{store}", data.PROJECT)
        folder = ctx.root / f"import-files-{count}"
        _files(folder, count)
        planned = json.loads(machine.agent_memory("import", str(folder), "--dry-run", "--json").stdout)
        if planned["counts"]["new"] != count:
            raise RuntimeError(f"import --dry-run planned {planned['counts']} for {count} files")
        peak, seconds = _run(machine, folder, "--dry-run")
        peaks[count] = peak
        rows.append(_row(f"`import --dry-run`, {count:,} files", count, peak, seconds))
        if count == min(sizes):
            saving = ctx.root / f"import-saved-{count}"
            _files(saving, saved)
            peak, seconds = _run(machine, saving)
            found = json.loads(machine.agent_memory("search", "--offline", "--json", "--limit", "1", "file").stdout)
            if not found["results"]:
                raise RuntimeError("the imported notes are not found by search")
            rows.append(_row(f"`import` (saved to a folder store), {saved:,} files", saved, peak, seconds))
    small, large = min(sizes), max(sizes)
    growth = peaks[large] / peaks[small]
    return [
        Table(
            "6. Import of many files",
            ["run", "files", "read", "peak memory", "time", "per file"],
            rows,
            target=f"peak memory flat in the number of files: {large:,} files within 1.25x of {small:,} (one file "
            "is held at a time).",
            verdict="met" if growth <= 1.25 else "not met",
            headline=f"peak {peaks[large] / 2**20:.0f} MiB for {large:,} files of ~1 MiB ({growth:.2f}x the peak "
            f"for {small:,})",
            notes=[
                f"Files of {FILE_BYTES:,} bytes, each different: the benchmark's synthetic notes, concatenated.",
                "Peak memory is the command's own maximum resident set (`ru_maxrss`, through a small launcher).",
                "Time is wall-clock on a shared machine.",
                "Every file is read, checked by the secret guard (most of the time), and planned.",
                "A real import also saves each one through the outbox.",
                "Before files were streamed (all read first, then planned), `import --dry-run` of 2,000 such files "
                "peaked at 2.07 GB and took 322 s.",
                f"The machine's load average was {min(LOADS):.0f} to {max(LOADS):.0f} ({os.cpu_count()} cores) around "
                "the measured runs. Times grow with it; peak memory does not.",
            ],
        )
    ]


def _row(name: str, count: int, peak: int, seconds: float) -> list[str]:
    return [
        name,
        f"{count:,}",
        f"{count * FILE_BYTES / 2**20:,.0f} MiB",
        f"{peak / 2**20:.0f} MiB",
        f"{seconds:.1f} s",
        f"{seconds / count * 1000:.0f} ms",
    ]
