"""13 and 14. What the size of the memory and of a query cost: `status` at three sizes of memory, and the largest
query that search accepts against a one-word search."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import data
from corpus import Context
from env import Machine, write_folder
from report import Table, ms, ratio
from timing import alternate, command, median

STATUS_SIZES = {"quick": (20, 200), "full": (20, 10_000, 50_000)}
QUERY_SIZES = {"quick": (200,), "full": (300, 10_000)}
DAMAGED = 3  # notes of each status corpus whose frontmatter cannot be read


def _folder_machine(ctx: Context, size: int) -> Machine:
    """A machine on a folder store of `size` synthetic notes, its cache filled by one online search."""
    store = ctx.root / f"bounds-store-{size}"
    if not store.exists():
        files = data.notes(size)
        for n in range(DAMAGED):  # frontmatter that cannot be used: listed by status
            note = "---\ntitle: [not, a, string]\nkind: note\ncreated: '2026-01-01T00:00:00Z'\n---\n\nbody\n"
            files[f"projects/{data.PROJECT}/notes/20260101-000000-00000{n}-d0d0d0d0d0.md"] = note.encode()
        write_folder(store, files)
        store.chmod(0o700)  # a folder store that other users can open is refused
    machine = Machine(ctx.root / f"bounds-{size}").setup(f"file://{store}", data.PROJECT)
    machine.run(machine.argv("search", "--json", data.QUERY), env={"AGENT_MEMORY_TIMEOUT": "3600"})
    return machine


def largest_query() -> str:
    """The largest query search accepts (32 terms, 1,000 characters), as costly as it gets: 31 words that most notes
    hold, and a phrase that none holds, so that no note holds every term and the notes with the most are looked
    for among all of them."""
    words = list(dict.fromkeys(data.VOCABULARY_WORDS))
    query = " ".join(words[:31])
    phrase = " ".join(words[31:])
    return f'{query} "{phrase[: 1000 - len(query) - 3].strip()}"'


def query_bounds(ctx: Context) -> list[Table]:
    """14. The largest accepted query against a one-word search, offline."""
    query = largest_query()
    table = Table(
        "14. The largest accepted query",
        ["notes", "one word", "largest query (32 terms, 1,000 characters)", "largest / one word"],
        target="no accepted query costs more than twice a one-word search (300 and 10,000 notes).",
        notes=[
            f"`agent-memory search --offline cache` (a word nearly every note holds) against `agent-memory search "
            f"--offline QUERY`, QUERY being 31 words that most notes hold and a phrase that none does ({len(query)} "
            "characters): no note holds every term, so the notes with the most of them are looked for in every "
            f"note. Medians of {ctx.runs * 2} alternating runs.",
            "A query of more than 32 words and phrases, or of more than 1,000 characters, is refused (exit 2).",
        ],
    )
    met = True
    for size in QUERY_SIZES["quick" if ctx.quick else "full"]:
        machine = _folder_machine(ctx, size)
        argvs = {
            "one word": machine.argv("search", "--offline", "cache"),
            "largest": machine.argv("search", "--offline", query),
        }
        contenders = {name: command(argv, env=machine.env, cwd=machine.work) for name, argv in argvs.items()}
        times = alternate(contenders, runs=ctx.runs * 2, warmup=ctx.warmup(2))
        one, largest = median(times["one word"]), median(times["largest"])
        met = met and largest / one <= 2.0
        table.rows.append([f"{size:,}", ms(one), ms(largest), ratio(largest, one)])
    table.verdict = "met" if met else "not met"
    table.headline = f"largest / one word = {table.rows[-1][3]} at {table.rows[-1][0]} notes"
    return [table]


def status_size(ctx: Context) -> list[Table]:
    """13. `agent-memory status` at three sizes of memory, run in the same rounds (the machine's load is shared)."""
    table = Table(
        "13. Status and the size of the memory",
        ["notes", "status", "ratio to 20 notes", "damaged notes listed"],
        target="`status` at 10,000 and at 50,000 notes within 10% of its cost at 20 notes.",
        notes=[
            "`agent-memory status` on folder stores whose notes are all cached; among them a few damaged ones "
            "(frontmatter that cannot be read), which status lists from the record the cache keeps when it writes "
            "its search pack, never by reading the pack. The sizes alternate in the same rounds, with `python -c "
            f"pass`; medians of {ctx.runs * 4} rounds.",
        ],
    )
    sizes = STATUS_SIZES["quick" if ctx.quick else "full"]
    machines = {size: _folder_machine(ctx, size) for size in sizes}
    listed = {
        size: json.loads(machine.agent_memory("status", "--json").stdout)["damaged_notes"]
        for size, machine in machines.items()
    }
    contenders = {size: command(m.argv("status"), env=m.env, cwd=m.work) for size, m in machines.items()}
    floor = command([sys.executable, "-c", "pass"], env=machines[sizes[0]].env, cwd=machines[sizes[0]].work)
    times = alternate(
        {**{str(size): run for size, run in contenders.items()}, "pass": floor}, runs=ctx.runs * 4, warmup=ctx.warmup(2)
    )
    base = median(times[str(sizes[0])])
    for size in sizes:
        cost = median(times[str(size)])
        table.rows.append([f"{size:,}", ms(cost), ratio(cost, base), str(len(listed[size]))])
    table.rows.append(["`python -c pass`", ms(median(times["pass"])), "", ""])
    met = all(median(times[str(size)]) / base <= 1.10 for size in sizes[1:])
    table.verdict = "met" if met else "not met"
    table.headline = ", ".join(f"{row[0]}: {row[2]}" for row in table.rows[1:-1])
    return [table]


if __name__ == "__main__":  # pragma: no cover - run through bench/run.py
    sys.exit(f"run: python {Path(__file__).parent / 'run.py'} --only status_size (or query_bounds)")
