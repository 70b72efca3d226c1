"""Comparisons against the Hub emulator: refresh (requests and time), save, and skill publish and install."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import data
from corpus import Context, Corpus, endpoints, requests_text, timed
from env import BUCKET, HF, Machine, hub_env, write_folder
from report import Table, ms, ratio
from timing import alternate, command, median, quartiles

PAGE_SIZE = 1000  # the emulator's listing page size (the Hub's is the same)
NEW_NOTES = 10  # notes added to the bucket before each "k new" refresh


# -- 3. refresh -------------------------------------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {entry.name: (entry.inode(), entry.stat().st_mtime_ns) for entry in os.scandir(folder)}


def refresh(ctx: Context) -> list[Table]:
    """3. Refresh against the emulator: requests and time with nothing new, then with k new notes."""
    unchanged = Table(
        "3a. Refresh with nothing new",
        [
            "notes",
            "requests (agent-memory)",
            "requests / N",
            "`hf buckets sync` requests",
            "agent-memory search",
            "search --offline",
            "refresh share",
            "hf buckets sync (down)",
            "agent-memory / hf",
        ],
        target="listing pages only (ceil(N / 1000) `tree` requests), no per-note request.",
        notes=[
            "`agent-memory search QUERY` refreshes the cache (lists the bucket, downloads what is missing) and then "
            "searches; `refresh share` is its median minus the median of `search --offline` in the same rounds. "
            "`hf buckets sync hf://buckets/.../notes DIR` into an up-to-date copy is the reference.",
            f"Medians of {ctx.runs} alternating runs after one warm-up round; requests counted by the emulator.",
        ],
    )
    added = Table(
        f"3b. Refresh with {NEW_NOTES} new notes",
        ["notes", "new", "requests (agent-memory)", "notes downloaded", "other cached notes rewritten", "median time"],
        target=f"one download per new note: exactly {NEW_NOTES} notes written to the cache, the others untouched.",
        notes=[
            "Before each run, untimed, 10 new notes are put into the bucket. Downloads go through hf_xet straight "
            "to the (emulated) storage, so they show as one `xet-read-token` and `resolve` per refresh rather "
            "than one request per file; `notes downloaded` counts the files that appeared in the cache.",
        ],
    )
    cold = Table(
        "3c. Filling an empty cache (context, one run each)",
        ["notes", "agent-memory search (empty cache)", "hf buckets sync (empty folder)", "agent-memory / hf"],
        notes=["One run each, while preparing the data: context only, not a target."],
    )
    listing_only = new_only = True
    for size in ctx.sizes:
        corpus = ctx.corpora[size]
        machine = corpus.machine
        refresh_cmd = command(machine.argv("search", data.QUERY), env=machine.env, cwd=machine.work)
        hf_cmd = command(
            [HF, "buckets", "sync", corpus.remote_notes, str(corpus.hf_dir)], env=machine.env, cwd=machine.work
        )
        ours, theirs = ctx.requests(refresh_cmd), ctx.requests(hf_cmd)
        pages = math.ceil(size / PAGE_SIZE)
        listing_only = listing_only and ours == Counter(tree=pages)
        contenders = {
            "refresh": refresh_cmd,
            "offline": command(machine.argv("search", "--offline", data.QUERY), env=machine.env, cwd=machine.work),
            "hf": hf_cmd,
        }
        med = {name: median(t) for name, t in alternate(contenders, runs=ctx.runs, warmup=1).items()}
        unchanged.rows.append(
            [
                f"{size:,}",
                requests_text(ours),
                f"{sum(ours.values()) / size:.4f}",
                requests_text(theirs),
                ms(med["refresh"]),
                ms(med["offline"]),
                ms(med["refresh"] - med["offline"]),
                ms(med["hf"]),
                ratio(med["refresh"], med["hf"]),
            ]
        )
        cold.rows.append(
            [
                f"{size:,}",
                ms(corpus.fill_seconds),
                ms(corpus.hf_fill_seconds),
                ratio(corpus.fill_seconds, corpus.hf_fill_seconds),
            ]
        )
        new_only = _refresh_new(ctx, corpus, added) and new_only
    unchanged.verdict = "met" if listing_only else "not met"
    unchanged.headline = f"requests / N = {unchanged.rows[-1][2]} at {ctx.sizes[-1]:,} notes ({unchanged.rows[-1][1]})"
    added.verdict = "met" if new_only else "not met"
    added.headline = f"{NEW_NOTES} new notes: {added.rows[-1][3]} downloaded, {added.rows[-1][4]} others rewritten"
    return [unchanged, added, cold]


def _refresh_new(ctx: Context, corpus: Corpus, table: Table) -> bool:
    """Refresh after adding NEW_NOTES notes, several times; adds a row; whether each run downloaded just those."""
    machine, ok = corpus.machine, True
    times, requests, downloaded, rewritten = [], Counter(), set(), set()
    for run in range(max(2, ctx.runs // 2)):
        new = data.notes(NEW_NOTES, seed=1000 + run)
        ctx.emulator.put_files(corpus.bucket, new)
        before = _snapshot(corpus.notes_dir)
        ctx.emulator.reset_requests()
        times.append(timed(lambda: machine.agent_memory("search", data.QUERY)))
        seen = endpoints(ctx.emulator.requests)
        after = _snapshot(corpus.notes_dir)
        changed = {name for name in after if before.get(name) != after[name]}
        wanted = {path.rsplit("/", 1)[1] for path in new}
        downloaded.add(len(changed & wanted))
        rewritten.add(len(changed - wanted))
        requests = requests or seen
        pages = math.ceil(len(after) / PAGE_SIZE)
        # besides the listing, only what one batch download needs (a read token, one resolve), whatever k is
        ok = ok and changed == wanted and seen["tree"] == pages and sum(seen.values()) - pages <= 2
    table.rows.append(
        [
            f"{corpus.size:,}",
            str(NEW_NOTES),
            requests_text(requests),
            "/".join(map(str, sorted(downloaded))),
            "/".join(map(str, sorted(rewritten))),
            ms(median(times)),
        ]
    )
    return ok


# -- 4. save --------------------------------------------------------------------------------------------------------


def _fresh(template: str) -> Callable[[], str]:
    """A function that returns `template` filled with 1, 2, 3...: a new destination for every run."""
    numbers = itertools.count(1)
    return lambda: template.format(next(numbers))


def save(ctx: Context) -> list[Table]:
    """4. `agent-memory save` against `hf buckets cp` of the same file."""
    machine = Machine(ctx.root / "writer", hub_env(ctx.emulator)).setup(BUCKET, data.PROJECT)
    note = next(text for text in data.notes(50, seed=7).values() if 1200 < len(text) < 2000)
    body_file = machine.root / "note.md"
    body = note.split(b"\n---\n", 1)[1].lstrip()  # save adds the frontmatter itself
    body_file.write_bytes(body)
    destination = _fresh(f"hf://buckets/{BUCKET}/projects/{data.PROJECT}/cp/{{}}.md")
    env, cwd = machine.env, machine.work
    contenders = {
        "agent-memory save": command(machine.argv("save", "--file", str(body_file)), env=env, cwd=cwd),
        "hf buckets cp": command(lambda: [HF, "buckets", "cp", str(body_file), destination()], env=env, cwd=cwd),
    }
    rows, value, times = _pair_rows(ctx, contenders, runs=ctx.runs * 2)  # a close race: more runs
    (ours_q1, _), (_, theirs_q3) = (quartiles(samples) for samples in times.values())
    tie = value > 1.0 and ours_q1 <= theirs_q3  # slower, but by less than the spread of the runs
    return [
        Table(
            "4. Save one note",
            ["command", "median", "interquartile range", "requests per call", "ratio to `hf buckets cp`"],
            rows,
            target="`agent-memory save` no slower than `hf buckets cp` of the same file (ratio at most 1.00).",
            verdict="met" if value <= 1.0 else "not met, within noise" if tie else "not met",
            headline=f"save / hf buckets cp = {value:.2f}x",
            notes=[
                f"The same {len(body):,}-byte Markdown file; each run writes a new object. Medians of {ctx.runs * 2} "
                "alternating runs after one warm-up round, against the emulator. `save` also renders the frontmatter, "
                "scans for secrets, queues the note as pending before uploading, and adds it to the local cache. "
                '"Within noise": the medians differ by less than the interquartile ranges, which overlap.',
            ],
        )
    ]


# -- 5. skills ---------------------------------------------------------------------------------------------------


def _same_files(folder: Path, files: dict[str, bytes]) -> bool:
    return all((folder / relative).read_bytes() == data for relative, data in files.items())


def skills(ctx: Context) -> list[Table]:
    """5. Publishing and installing a 40-file skill against `hf buckets sync` up and down."""
    machine = Machine(ctx.root / "skills", hub_env(ctx.emulator)).setup(BUCKET, data.PROJECT)
    folder = machine.root / "bench-skill"
    files = data.skill_folder(40)
    write_folder(folder, files)
    revision = json.loads(machine.agent_memory("publish-skill", str(folder), "--json").stdout)["revision"]
    remote = f"hf://buckets/{BUCKET}/skills/bench-skill"
    installed = machine.home / ".agents" / "skills" / "bench-skill"
    hf_copy = machine.root / "hf-install"
    prefix = _fresh(f"{remote}-hf/{{}}")
    env, cwd = machine.env, machine.work

    def clear(name: str, _round: int) -> None:  # every install starts from an empty destination (untimed)
        shutil.rmtree(installed if name.startswith("agent-memory") else hf_copy, ignore_errors=True)

    publish = {
        "agent-memory publish-skill": command(machine.argv("publish-skill", str(folder)), env=env, cwd=cwd),
        "hf buckets sync (up)": command(lambda: [HF, "buckets", "sync", str(folder), prefix()], env=env, cwd=cwd),
    }
    install_argv = machine.argv("install-skill", "bench-skill", "--revision", revision, "--agent", "codex")
    install = {
        "agent-memory install-skill": command(install_argv, env=env, cwd=cwd),
        "hf buckets sync (down)": command(
            [HF, "buckets", "sync", f"{remote}/{revision}", str(hf_copy)], env=env, cwd=cwd
        ),
    }
    (publish_rows, publish_ratio, _), (install_rows, install_ratio, _) = (
        _pair_rows(ctx, publish),
        _pair_rows(ctx, install, before=clear),
    )
    if not (_same_files(installed, files) and _same_files(hf_copy, files)):
        raise RuntimeError("install-skill or hf buckets sync did not produce the skill's files")
    return [
        Table(
            "5. Publish and install a 40-file skill",
            ["command", "median", "interquartile range", "requests per call", "ratio to `hf buckets sync`"],
            publish_rows + install_rows,
            target="none set: shown against `hf buckets sync` of the same folder.",
            headline=f"publish {publish_ratio:.2f}x, install {install_ratio:.2f}x of hf buckets sync",
            notes=[
                f"{len(files)} files, {sum(map(len, files.values())):,} bytes. Each publication is a new revision "
                "(uploaded as two commits by design: the supporting files, then SKILL.md, which makes it visible) "
                "and for hf a new prefix (one commit); each install starts from an empty destination. "
                f"Medians of {ctx.runs} alternating runs after one warm-up round, against the emulator.",
            ],
        )
    ]


def _pair_rows(
    ctx: Context,
    contenders: dict[str, Callable[[], None]],
    before: Callable[[str, int], None] | None = None,
    runs: int | None = None,
) -> tuple[list[list[str]], float, dict[str, list[float]]]:
    """Rows for agent-memory against hf (the second contender): median, quartiles, requests, ratio; that ratio;
    and the times. The requests are counted in one call before the timed rounds."""
    requests = {}
    for name, fn in contenders.items():
        if before is not None:
            before(name, 0)
        requests[name] = ctx.requests(fn)
    times = alternate(contenders, runs=runs or ctx.runs, warmup=1, before=before)
    med = {name: median(samples) for name, samples in times.items()}
    ours, theirs = (med[name] for name in contenders)
    rows = []
    for name, samples in times.items():
        low, high = quartiles(samples)
        spread = f"{low * 1000:.0f}-{high * 1000:.0f} ms"
        rows.append([f"`{name}`", ms(med[name]), spread, requests_text(requests[name]), ratio(med[name], theirs)])
    return rows, ours / theirs, times
