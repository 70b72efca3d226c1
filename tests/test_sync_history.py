"""What a machine knows of a synced file's history: heads, ancestors and the merge base stay right on a long history
(20,000 versions, the most one folder keeps) with divergences merged back, whatever order the versions arrive in.
Correctness only: the time it takes is the long-history benchmark's (bench/sync_history.py)."""

from __future__ import annotations

import random

import pytest

from agent_memory.clock import new_id
from agent_memory.sync.history import MAX_VERSIONS, History
from agent_memory.sync.merging import merge
from agent_memory.sync.versions import Version
from long_history import chain


@pytest.fixture
def history(monkeypatch, tmp_path) -> History:
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "state"))
    return History("file:///bucket", "claude", "demo")


def diverge(history: History, tip: Version) -> tuple[Version, Version]:
    """Two machines append to the file at once, each from `tip`."""
    ours = Version(new_id(), tip.path, [tip.id], tip.text + "- learned on A\n", "a", "2026-12-01")
    theirs = Version(new_id(), tip.path, [tip.id], tip.text + "- learned on B\n", "b", "2026-12-01")
    history.add(ours)
    history.add(theirs)
    return ours, theirs


def test_a_divergence_after_20000_versions_merges_against_the_right_base(history):
    versions = chain(MAX_VERSIONS - 2)
    for version in versions:
        history.add(version)
    tip = versions[-1]
    assert history.heads("MEMORY.md") == [tip.id]
    ours, theirs = diverge(history, tip)
    assert history.heads("MEMORY.md") == sorted([ours.id, theirs.id])
    assert history.common_base(ours.id, theirs.id) == tip.id
    assert len(history.ancestors(ours.id)) == MAX_VERSIONS - 1
    merged = merge(history.text(tip.id), history.text(ours.id), history.text(theirs.id))
    assert merged == tip.text + "- learned on A\n- learned on B\n"
    history.save()  # and the same once read back from the record
    again = History("file:///bucket", "claude", "demo")
    assert again.heads("MEMORY.md") == sorted([ours.id, theirs.id])
    assert again.common_base(theirs.id, ours.id) == tip.id


def test_versions_arriving_in_any_order_give_the_same_heads(history):
    """A refresh may download a version before the one it is based on; heads asked between adds stay right."""
    versions = chain(3000)
    shuffled = random.Random(7).sample(versions, len(versions))
    for n, version in enumerate(shuffled):
        history.add(version)
        if n % 500 == 0:  # asked between adds: the child map is kept up to date, not made again
            history.heads("MEMORY.md")
    assert history.heads("MEMORY.md") == [versions[-1].id]
    history.add(versions[10])  # the same version again is listed once
    assert len(history.of("MEMORY.md")) == 3000


def test_the_nearest_common_base_of_merged_branches(history):
    """Inside the chain, two sides of a merged divergence have the fork as their base; a version and its own
    ancestor have that ancestor."""
    versions = chain(300)
    for version in versions:
        history.add(version)
    merge_point = next(v for v in versions if len(v.bases) == 2)
    left, right = merge_point.bases
    fork = history.versions[left]["bases"][0]
    assert history.common_base(left, right) == fork == history.versions[right]["bases"][0]
    assert history.common_base(versions[-1].id, versions[120].id) == versions[120].id
    assert history.common_base(versions[-1].id, left) == left


def test_criss_cross_merges_pick_the_newest_nearest_base(history):
    """Two merges each based on both sides of a divergence: two nearest common versions; the newer is taken."""
    root = Version(new_id(), "f.md", [], "x\n", "a", "t")
    left = Version(new_id(), "f.md", [root.id], "x\nl\n", "a", "t")
    right = Version(new_id(), "f.md", [root.id], "x\nr\n", "b", "t")
    one = Version(new_id(), "f.md", [left.id, right.id], "x\nl\nr\n", "a", "t")
    other = Version(new_id(), "f.md", [right.id, left.id], "x\nr\nl\n", "b", "t")
    for version in (root, left, right, one, other):
        history.add(version)
    assert history.heads("f.md") == sorted([one.id, other.id])
    assert history.common_base(one.id, other.id) == max(left.id, right.id)


def test_a_base_of_another_file_makes_no_version_of_this_one_old(history):
    """Bases are ids from anyone: a version of another file that names this file's head leaves it a head."""
    mine = Version(new_id(), "a.md", [], "a\n", "a", "t")
    other = Version(new_id(), "b.md", [mine.id], "b\n", "b", "t")
    history.add(mine)
    history.heads("a.md")
    history.add(other)
    assert history.heads("a.md") == [mine.id] and history.heads("b.md") == [other.id]
