"""A long history of one synced file, as years of daily edits on a few machines make it: a chain of versions with
a divergence merged back every so often. Shared by the history tests and the long-history benchmark."""

from __future__ import annotations

from agent_memory.clock import new_id
from agent_memory.sync.versions import Version

START_NS = 1_767_225_600 * 1_000_000_000  # 2026-01-01: ids sort by time, one microsecond apart
TEXTS = [f"# Memory\n- fact {n}\n" for n in range(5)]  # a few texts: each is kept once, whatever the count
EVERY = 100  # a divergence, merged back, every this many versions


def chain(count: int, path: str = "MEMORY.md", first: Version | None = None, start_ns: int = START_NS) -> list[Version]:
    """`count` versions of `path` (after `first`, if given), oldest first, their ids from `start_ns` on; the last
    one is the single head."""
    made: list[Version] = []
    tip = first.id if first else None

    def version(bases: list[str]) -> Version:
        n = len(made)
        one = Version(new_id(start_ns + n * 1000), path, bases, TEXTS[n % len(TEXTS)], f"m{n % 3}", "2026-01-01")
        made.append(one)
        return one

    while len(made) < count:
        if len(made) % EVERY == EVERY - 3 and count - len(made) >= 3:  # two machines edit at once, then merge
            left, right = version([tip] if tip else []), version([tip] if tip else [])
            tip = version([left.id, right.id]).id
        else:
            tip = version([tip] if tip else []).id
    return made
