"""11b. Sync of one file with a long history (up to 20,000 versions, the most one folder keeps): a divergence merged
by `sync now` (two machines appended at once), and a `sync now` with nothing new, on two machines sharing a folder
store. The history is a chain with a divergence merged back every 100 versions (tests/long_history.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from corpus import Context
from env import Machine
from report import Table, ms
from sync_hooks import _memory_folder
from timing import alternate, median

from agent_memory.store.local import FolderStore
from agent_memory.sync import versions
from agent_memory.sync.history import MAX_VERSIONS
from long_history import chain

# versions of the file; the largest leaves room below the most a machine tracks (20,000) for the runs' own versions
SIZES = {"quick": (1_000,), "full": (1_000, 4_000, MAX_VERSIONS - 100)}
TARGET_SECONDS = 1.0


def history(ctx: Context) -> list[Table]:
    """Table 11b: `sync now` merging a divergence, and with nothing new, as the file's history grows."""
    table = Table(
        "11b. Sync of a file with a long history",
        ["versions of the file", "divergence merged (`sync now`)", "nothing new (`sync now`)"],
        target=f"with 20,000 versions of one file, a divergence merges in at most {TARGET_SECONDS:.0f} s.",
    )
    load_before = os.getloadavg()[0]
    merges: dict[int, float] = {}
    for count in SIZES["quick" if ctx.quick else "full"]:
        times = _measure(ctx, *_two_machines(ctx.root / f"history-{count}", count))
        merges[count] = median(times["merge"])
        table.rows.append([f"{count:,}", ms(merges[count]), ms(median(times["unchanged"]))])
    load = (load_before + os.getloadavg()[0]) / 2
    largest = max(merges)
    if largest < MAX_VERSIONS - 100:
        table.verdict = "not evaluated (--quick: 1,000 versions only)"
    else:
        table.verdict = "met" if merges[largest] <= TARGET_SECONDS else "not met"
    table.headline = f"a divergence of a file with {largest:,} versions merges in {ms(merges[largest])}"
    table.notes = [
        f"Medians of {ctx.runs} alternating runs of each after {ctx.warmup(1)} warm-up round; the machine's load "
        f"average was about "
        f"{load:.1f} ({os.cpu_count()} cores). Whole `sync now --json` processes on the merging machine, against a "
        "folder store. Before each merge, the other machine appends a line and syncs, then this one appends its own "
        "(both only appended: the merge keeps both lines). Before each run with nothing new, a sync brings this "
        "machine in step.",
        "The history is written into the store as the versions other machines pushed, then learned by both machines "
        "through `sync now` (2,000 new versions a sync). The merge base is found in one walk of the versions; the "
        "sync with nothing new lists the store and downloads nothing.",
        f"The largest history is {MAX_VERSIONS - 100:,} versions: a machine tracks at most {MAX_VERSIONS:,} versions "
        "of a folder, and the runs add versions of their own.",
    ]
    return [table]


def _measure(ctx: Context, here: Machine, there: Machine) -> dict[str, list[float]]:
    return alternate(
        {"merge": lambda: _sync(here, merged=True), "unchanged": lambda: _sync(here, merged=False)},
        runs=ctx.runs,
        warmup=ctx.warmup(1),
        before=lambda name, round_: _prepare(name, round_, here, there),
    )


def _two_machines(root: Path, count: int) -> tuple[Machine, Machine]:
    """Two machines that both know a history of `count` versions of MEMORY.md, in step."""
    store = root / "store"
    store.mkdir(parents=True, mode=0o700)
    here, there = Machine(root / "here"), Machine(root / "there")
    for machine in (here, there):
        machine.setup(f"file://{store}", "demo")
        machine.agent_memory("sync", "enable", "--agent", "claude")
    folder = _memory_folder(there)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory\n")
    there.agent_memory("sync", "now")
    (first_object,) = (store / "sync" / "claude").rglob("*.json")
    name = first_object.relative_to(store).as_posix()
    _, runtime, scope, _key, _ = name.split("/")
    first = versions.decode(name, first_object.read_bytes(), runtime, scope)
    made = chain(count - 1, first=first, start_ns=time.time_ns())  # ids after the first's, before later edits
    FolderStore(store).put_many(
        [(versions.object_path(runtime, scope, v), versions.encode(runtime, scope, v)) for v in made]
    )
    for machine in (there, here):
        for _ in range(count // 2000 + 2):  # a refresh downloads at most 2,000 new versions
            machine.agent_memory("sync", "now")
    if (_memory_folder(here) / "MEMORY.md").read_text() != made[-1].text:
        raise RuntimeError("the merging machine's MEMORY.md is not the history's last version")
    return here, there


def _prepare(name: str, round_: int, here: Machine, there: Machine) -> None:
    if name == "merge":  # both machines append a line: the other syncs first, so this one merges
        _append(there, f"- learned there, round {round_}\n")
        there.agent_memory("sync", "now")
        _append(here, f"- learned here, round {round_}\n")
    else:
        here.agent_memory("sync", "now")


def _sync(machine: Machine, *, merged: bool) -> None:
    done = json.loads(machine.agent_memory("sync", "now", "--json").stdout)
    folder = done["folders"][0]
    if (
        bool(folder["merged"]) != merged
        or folder["conflicts"]
        or (not merged and (folder["pushed"] or folder["pulled"]))
    ):
        raise RuntimeError(f"sync now did not do what was measured: {folder}")


def _append(machine: Machine, line: str) -> None:
    with (_memory_folder(machine) / "MEMORY.md").open("a") as file:
        file.write(line)
