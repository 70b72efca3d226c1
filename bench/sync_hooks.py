"""11. What the hooks cost with sync of the runtime's own memory on and nothing changed anywhere: Claude Code's Stop
hook (push) and SessionStart hook (pull) against the same hooks with sync off, and the requests each makes to the
Hub emulator."""

from __future__ import annotations

import json
import os
import re
import subprocess

from corpus import Context, endpoints
from env import AGENT_MEMORY, Machine, hub_env
from hooks_cost import follower_live
from report import Table, ms, ratio
from timing import alternate, median

FILES = {"quick": (10,), "full": (10, 200)}  # memory files in the folder
HOOKS = {"Stop": ("hook", "stop", "--agent", "claude"), "SessionStart": ("hook", "session-start", "--agent", "claude")}
MOVING = ("batch", "resolve", "xet-write-token", "xet-read-token")  # endpoints that move objects


def sync(ctx: Context) -> list[Table]:
    """Table 11: the hooks with sync on (nothing changed) against the same hooks with sync off."""
    table = Table(
        "11. Hooks with sync of the agents' own memory on, nothing changed",
        ["memory files", "hook", "sync off", "sync on", "on / off", "requests with sync on", "objects moved"],
        target="with nothing changed anywhere, neither hook makes a request once the bucket's feed follower follows, "
        "and nothing is uploaded or downloaded (the local cost: one stat per file).",
    )
    met = True
    load_before = os.getloadavg()[0]
    for count in FILES["quick" if ctx.quick else "full"]:
        bucket = f"alice/sync-{count}"
        ctx.emulator.create_bucket(bucket, private=True)
        writer, on, off = (
            Machine(ctx.root / f"sync-{name}-{count}", hub_env(ctx.emulator)).setup(bucket, "demo")
            for name in ("writer", "on", "off")
        )
        folder = _memory_folder(writer)
        folder.mkdir(parents=True)
        (folder / "MEMORY.md").write_text("".join(f"- [Memory {n}](m{n}.md): one line\n" for n in range(1, count)))
        for n in range(1, count):
            (folder / f"m{n}.md").write_text(f"---\nname: memory {n}\n---\nSomething worth keeping, number {n}.\n")
        for machine in (writer, on, off):
            machine.agent_memory("sync", "enable", "--agent", "claude")
            machine.agent_memory("sync", "now")
        off.agent_memory("sync", "disable", "--agent", "claude")  # the same folder, its hooks without sync
        if len(list(_memory_folder(on).iterdir())) != count:
            raise RuntimeError(f"the reader's memory folder does not hold the {count} files")
        _hook(on, HOOKS["SessionStart"])()  # starts the bucket's feed follower, which no session waits for
        follower_live(on, bucket)
        _hook(on, HOOKS["SessionStart"])()  # the last refresh begins after the follow did: later starts ask nothing
        requests = {}
        for name, args in HOOKS.items():
            ctx.emulator.reset_requests()
            _hook(on, args)()
            requests[name] = endpoints(ctx.emulator.requests)
        contenders = {}
        for name, args in HOOKS.items():
            contenders[f"{name} on"] = _hook(on, args)
            contenders[f"{name} off"] = _hook(off, args)
        times = alternate(contenders, runs=ctx.runs * 2, warmup=ctx.warmup(2))
        medians = {name: median(t) for name, t in times.items()}
        for name in HOOKS:
            asked = sum(requests[name].values())
            moved = sum(n for endpoint, n in requests[name].items() if endpoint in MOVING)
            met = met and not asked and not moved
            table.rows.append(
                [
                    str(count),
                    name,
                    ms(medians[f"{name} off"]),
                    ms(medians[f"{name} on"]),
                    ratio(medians[f"{name} on"], medians[f"{name} off"]),
                    ", ".join(f"{endpoint} {n}" for endpoint, n in sorted(requests[name].items())) or "none",
                    str(moved),
                ]
            )
    load = (load_before + os.getloadavg()[0]) / 2
    table.verdict = "met" if met else "not met"
    table.headline = "; ".join(
        f"{row[1]} {row[4]} of sync off ({row[0]} files, requests: {row[5]})" for row in table.rows
    )
    table.notes = [
        f"Medians of {ctx.runs * 2} alternating runs after two warm-up rounds.",
        f"The machine's load average was about {load:.1f} ({os.cpu_count()} cores).",
        "Sync off is a third machine with the same memory folder, after `sync disable`. Its hooks read the "
        "configuration and stop there.",
        "Requests are counted by the Hub emulator.",
        "With sync on and nothing changed here, the Stop hook stats each file of the memory folder.",
        "It compares each with the size and time recorded at the last sync, and stops there: no store is opened.",
        "The SessionStart hook first looks at the bucket's feed follower, a background process that its first run "
        "started (and that is followed here by one more run before anything is measured).",
        "While the follower shows that nothing changed since the last listing began, it asks the bucket nothing and "
        "loads none of the Hub's SDK.",
        "Without a follower it asks the bucket for its `updatedAt` (one request, `info`), and lists nothing if "
        "unchanged.",
    ]
    return [table]


def _memory_folder(machine: Machine):
    key = re.sub(r"[^a-zA-Z0-9]", "-", str(machine.work.resolve()))
    return machine.home / ".claude" / "projects" / key / "memory"


def _hook(machine: Machine, args: tuple[str, ...]):
    """One run of a hook as the runtime runs it: the event's JSON on stdin."""
    event = json.dumps({"cwd": str(machine.work)}).encode()

    def run() -> None:
        proc = subprocess.run(
            [AGENT_MEMORY, *args], input=event, cwd=machine.work, env=machine.env, capture_output=True, check=False
        )
        if proc.returncode != 0 or proc.stderr:
            raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr.decode()[-500:]}")

    return run
