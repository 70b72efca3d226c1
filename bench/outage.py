"""7. A hung Hub: what a search and a save cost when the Hub accepts connections and never answers, against the
same commands on a healthy Hub, and how soon a Hub that is back is found again.

The emulator is hung on every endpoint (`HubEmulator.hang`). The first search of an outage pays the change feed's
wait and a short try of the listing, then records the outage (`store/outage.py`); a save that comes first pays the
upload's wait for any answer and one more request (`store/hub.py`, `_within`), then goes pending and records it;
every later search and save answers from what is local without a request, until the wait is over.
"""

from __future__ import annotations

import json
import subprocess
import time

from corpus import Context
from env import BUCKET, Machine, hub_env
from report import Table, ms
from timing import median

FIRST_SEARCH = 6.0  # seconds: the targets of issue 23
FIRST_SAVE = 6.0
LATER = 1.5


def outage(ctx: Context) -> list[Table]:
    """7. Search and save against a hung Hub, against a healthy one."""
    machine = Machine(ctx.root / "outage", hub_env(ctx.emulator)).setup(BUCKET, "outage-bench")
    _save(machine, "The connection pool holds 8 sockets.", ok=(0,))
    record = machine.state / "state" / "outage.json"
    runs = 1 if ctx.quick else max(2, ctx.runs // 2)  # every first search and save waits seconds: one in `--quick`
    warmup = ctx.warmup(1)
    backoff = machine.state / "state" / "retry-backoff.json"

    healthy_search = [_timed(machine, ["search", "pool", "--json"], "fresh") for _ in range(warmup + runs)][warmup:]
    healthy_save = [_timed_save(machine, 0) for _ in range(warmup + runs)][warmup:]

    healthy_stop = []  # a Stop hook that delivers one upload kept pending while this machine was offline
    for _ in range(runs):
        _save(machine, f"Kept while this machine was offline, {time.time()}.", ok=(75,), env={"HF_HUB_OFFLINE": "1"})
        backoff.unlink(missing_ok=True)
        healthy_stop.append(_timed_hook(machine, "stop"))
    # one more: what the first Stop hook of an outage retries
    _save(machine, "Kept while this machine was offline.", ok=(75,), env={"HF_HUB_OFFLINE": "1"})
    record.unlink(missing_ok=True)
    ctx.emulator.hang(seconds=60)
    try:
        first = []
        for _ in range(runs):
            record.unlink(missing_ok=True)  # each run is the first search of a new outage
            first.append(_timed(machine, ["search", "pool", "--json"], "stale"))
        ctx.emulator.reset_requests()
        later_search = [_timed(machine, ["search", "pool", "--json"], "stale") for _ in range(runs)]
        later_save = [_timed_save(machine, 75) for _ in range(runs)]
        asked = len(ctx.emulator.requests)
        first_save = []
        for _ in range(runs):
            record.unlink(missing_ok=True)  # each run is a save that meets the outage before any search did
            first_save.append(_timed_save(machine, 75))
            if not record.exists():
                raise RuntimeError("a save against a hung Hub did not record the outage")

        # the first Stop hook after the Hub hangs: one upload pending (kept while offline, no outage recorded), the
        # hook's retry is the first to meet the hang
        first_stop = []
        for _ in range(runs):
            record.unlink(missing_ok=True)
            backoff.unlink(missing_ok=True)
            first_stop.append(_timed_hook(machine, "stop"))
            if not record.exists():
                raise RuntimeError("the first Stop hook against a hung Hub did not record the outage")
    finally:
        ctx.emulator.clear_faults()

    # the Hub is back: within the wait nothing asks it; once the wait is over the next search answers from the cache
    # at once and starts the probe, a process nobody waits for, which finds it and ends the outage
    stored = json.loads(record.read_text())
    record.write_text(json.dumps({**stored, "until": time.time() - 0.1}))
    back = _timed(machine, ["search", "pool", "--json"], "stale")
    started = time.monotonic()
    while record.exists() and time.monotonic() - started < 60:
        time.sleep(0.05)
    found_again = not record.exists()
    found_in = time.monotonic() - started
    _timed(machine, ["search", "pool", "--json"], "fresh")

    rows = [
        ["first search of an outage", ms(median(healthy_search)), ms(median(first)), f"≤ {FIRST_SEARCH:g} s"],
        ["every later search", ms(median(healthy_search)), ms(max(later_search)), f"≤ {LATER:g} s"],
        ["every later save (pending at once)", ms(median(healthy_save)), ms(max(later_save)), f"≤ {LATER:g} s"],
        [
            "a save before any outage is recorded",
            ms(median(healthy_save)),
            ms(median(first_save)),
            f"≤ {FIRST_SAVE:g} s",
        ],
        [
            "first Stop hook after the Hub hangs (an upload pending)",
            ms(median(healthy_stop)),
            ms(median(first_stop)),
            f"≤ {FIRST_SAVE:g} s",
        ],
        ["search once the wait is over (the probe asks)", ms(median(healthy_search)), ms(back), f"≤ {LATER:g} s"],
    ]
    met = (
        median(first) <= FIRST_SEARCH
        and median(first_save) <= FIRST_SAVE
        and max(later_search) <= LATER
        and max(later_save) <= LATER
        and median(first_stop) <= FIRST_SAVE
        and back <= LATER
        and asked == 0
        and found_again
    )
    return [
        Table(
            "7. A hung Hub",
            ["command", "healthy Hub", "hung Hub", "target"],
            rows,
            target=f"against a Hub hung on every endpoint: the first search within {FIRST_SEARCH:g} s, a save or a "
            f"Stop hook before any outage is recorded within {FIRST_SAVE:g} s, every later search and save within "
            f"{LATER:g} s (stale results, a pending note) with no request, and a healthy Hub found again at the end "
            "of the wait by a probe nobody waits for.",
            verdict="met" if met else "not met",
            headline=f"first search {ms(median(first))}, first save {ms(median(first_save))}, first Stop hook "
            f"{ms(median(first_stop))}, later search {ms(max(later_search))}, later save {ms(max(later_save))}",
            notes=[
                f"Healthy, first-search and first-save columns: medians of {runs} runs.",
                "Each first save starts with no outage recorded, and records it.",
                f"Later searches and saves: the slowest of {runs} runs.",
                "The emulator accepts every connection and never answers (`HubEmulator.hang`).",
                f"Requests received by the hung Hub during the later searches and saves: {asked}.",
                "The first search gives the change feed 2 s to answer at all, then the request that replaces it 2 s.",
                "A second request without an answer ends the command's use of the network. The search answers from "
                "the cache, and records the outage.",
                "Later commands answer from what is local until the wait is over: 30 s, then doubling to at most "
                "5 minutes.",
                "A save before any outage is recorded gives its upload 2 s to hear any answer (a response's headers) "
                "from the Hub.",
                "That is a fifteenth of `AGENT_MEMORY_TIMEOUT` if that is longer. Then it makes one more request (the "
                "bucket's info), as long.",
                "If neither is answered, the Hub counts as hung. The note goes pending with its retry line, and the "
                "save records the outage.",
                "Until this change, it waited for the command's whole network budget (`AGENT_MEMORY_TIMEOUT`, 30 s: "
                "30.1 s measured).",
                "A Hub that answers is waited for. An upload's own traffic (hf_xet's) is not seen by the helper.",
                "So a large note on a slow link is silent for as long as it takes. The answered request is what keeps "
                "it going (`tests/test_outage.py`).",
                "The first Stop hook retries the uploads kept pending (one kept while offline, and the saves above), "
                f"with no outage recorded and its retry wait cleared: median of {runs} runs. Healthy: it delivers one "
                "upload kept while offline. Its budget is 5 s (`hooks/retry.py`).",
                "Once the wait is over, a search answers from the cache at once and starts a probe in a process of "
                f"its own. The probe found the Hub back and ended the outage {found_in:.1f} s later; the next search "
                "was fresh.",
            ],
        )
    ]


def _timed(machine: Machine, args: list[str], status: str) -> float:
    started = time.perf_counter()
    proc = machine.run(machine.argv(*args))
    elapsed = time.perf_counter() - started
    found = json.loads(proc.stdout)["freshness"]["status"]
    if found != status:
        raise RuntimeError(f"agent-memory {' '.join(args)} was {found}, expected {status}: {proc.stderr.decode()}")
    return elapsed


def _timed_save(machine: Machine, code: int) -> float:
    started = time.perf_counter()
    _save(machine, f"A note saved at {time.time()}.", ok=(code,))
    return time.perf_counter() - started


def _timed_hook(machine: Machine, event: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        machine.argv("hook", event, "--agent", "claude"),
        cwd=machine.work,
        env=machine.env,
        input=b"{}",
        capture_output=True,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"agent-memory hook {event} exited {proc.returncode}: {proc.stderr.decode()[-1000:]}")
    return elapsed


def _save(
    machine: Machine, body: str, *, ok: tuple[int, ...], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    environment = {**machine.env, **(env or {})}
    proc = subprocess.run(
        machine.argv("save", "--json"), cwd=machine.work, env=environment, input=body.encode(), capture_output=True
    )
    if proc.returncode not in ok:
        raise RuntimeError(f"agent-memory save exited {proc.returncode}: {proc.stderr.decode()[-1000:]}")
    return proc
