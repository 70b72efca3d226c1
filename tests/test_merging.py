"""The three-way merge of sync: git's (`git merge-file`) through libgit2, plus one rule of our own for two machines
that both only appended at the end of a file. Checked example by example, and by property against the real
`git merge-file` on random edit pairs of random texts."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tools
from agent_memory.sync.merging import Conflicting, append_union, appended, merge


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "merged"),
    [
        ("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nD\n"),  # different lines
        ("a\n", "a\nmine\n", "a\ntheirs\n", "a\nmine\ntheirs\n"),  # both appended: both kept, this machine's first
        ("a\n", "a\nsame\n", "a\nsame\n", "a\nsame\n"),  # the same change counts once
        ("a\n", None, "a\n", None),  # deleted here, untouched there: deleted
        ("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nd", "A\nb\nc\nd"),  # a dropped final newline is kept, as git does
        ("x\nx\nx\n", "x\nx\nx\ny\n", "z\nx\nx\nx\n", "z\nx\nx\nx\ny\n"),  # repeated lines come out exact
    ],
)
def test_merges(base, ours, theirs, merged):
    assert merge(base, ours, theirs) == merged


@pytest.mark.parametrize(
    ("base", "ours", "theirs"),
    [
        ("a\nb\n", "A\nb\n", "X\nb\n"),  # the same line
        ("a\nb\nc\n", "A\nb\nc\n", "a\nB\nc\n"),  # lines that touch
        ("a\n", None, "a changed\n"),  # deleted here, changed there
        ("a\n", "a changed\n", None),  # changed here, deleted there
        (None, "made here\n", "made there\n"),  # no common version
        ("a\nb\n", "a\nb\nmine\n", "a\nB\ntheirs\n"),  # appended on both, but one also changed a line: no union
    ],
)
def test_conflicts(base, ours, theirs):
    with pytest.raises(Conflicting):
        merge(base, ours, theirs)


def test_two_appends_one_without_a_final_newline_are_never_glued():
    """Both machines append to MEMORY.md, this side's edit without a final newline: each added line stays a line."""
    base = "# Memory\n- old\n"
    merged = merge(base, base + "- learned on A", base + "- learned on B\n")
    assert merged == "# Memory\n- old\n- learned on A\n- learned on B\n"
    assert "- learned on A- learned on B" not in merged
    # the other way round, and with the base itself missing its final newline
    assert merge(base, base + "- learned on A\n", base + "- learned on B") == base + "- learned on A\n- learned on B"
    assert merge("- old", "- old\n- learned on A", "- old\n- learned on B\n") == (
        "- old\n- learned on A\n- learned on B\n"
    )


def test_the_other_sides_lines_that_repeat_this_sides_are_kept():
    """Code fences (and any line) the other side added are kept though this side added the same line."""
    base = "# Memory\n"
    ours = base + "Run it with:\n```\nmake test\n```\n"
    theirs = base + "Deploy with:\n```\nmake deploy\n```\n"
    merged = merge(base, ours, theirs)
    assert merged == base + "Run it with:\n```\nmake test\n```\nDeploy with:\n```\nmake deploy\n```\n"
    assert merged.count("```\n") == 4


def test_no_scratch_folder_to_merge_in_is_a_conflict_that_loses_nothing(monkeypatch, tmp_path):
    """libgit2 merges in a throwaway repository: where none can be made (a full disk), the merge is held as a
    conflict (both texts kept) rather than failing the sync; two appends still merge, without git."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker))  # no folder can be made in a file
    with pytest.raises(Conflicting):
        merge("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n")
    assert merge("a\n", "a\nmine\n", "a\ntheirs\n") == "a\nmine\ntheirs\n"


# --- property tests against the real git merge-file ---------------------------------------------------------------

LINES = st.lists(st.sampled_from(["a", "b", "c", "```", "", "- x"]), max_size=12)  # few kinds: lines repeat


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(LINES)
    end = draw(st.booleans()) if lines else True
    return "\n".join(lines) + ("\n" if lines and end else "")


@st.composite
def edited(draw: st.DrawFn, base: str) -> str:
    """`base` with a few random edits: lines replaced, removed or inserted, and the final newline added or dropped."""
    lines = base.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lines)))
        end = draw(st.integers(start, min(len(lines), start + 2)))
        lines[start:end] = draw(st.lists(st.sampled_from(["a", "b", "c", "```", "", "N", "M"]), max_size=3))
    text = "\n".join(lines)
    if draw(st.booleans()):  # an appended tail, the usual edit of MEMORY.md
        text = (text if text.endswith("\n") or not text else text + "\n") + draw(texts())
    return text


@st.composite
def edit_pairs(draw: st.DrawFn) -> tuple[str, str, str]:
    base = draw(texts())
    return base, draw(edited(base)), draw(edited(base))


def git_merge_file(folder: Path, base: str, ours: str, theirs: str) -> str | None:
    """What `git merge-file -p` makes of the three texts: the merged text, or None for a conflict."""
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (folder / name).write_bytes(text.encode())
    proc = subprocess.run(
        ["git", "merge-file", "-p", "ours", "base", "theirs"], cwd=folder, capture_output=True, check=False
    )
    assert proc.returncode >= 0, proc.stderr  # negative: git failed, not a conflict
    return proc.stdout.decode() if proc.returncode == 0 else None


@pytest.fixture
def git(tmp_path_factory) -> Path:
    if shutil.which("git") is None:
        tools.missing("git is missing, so the merge cannot be compared with git merge-file: apt-get install -y git")
    return tmp_path_factory.mktemp("merge-file")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edit_pairs())
def test_the_merge_is_git_merge_file(git, pair):
    """Where git merges cleanly, ours is git's text byte for byte; where git reports a conflict, ours does too,
    except where both sides only appended at the end (the append-union rule, checked in the next test)."""
    base, ours, theirs = pair
    expected = git_merge_file(git, base, ours, theirs)
    if expected is not None:
        assert merge(base, ours, theirs) == expected
    elif append_union(base, ours, theirs) is None:
        with pytest.raises(Conflicting):
            merge(base, ours, theirs)
    else:
        assert merge(base, ours, theirs) == append_union(base, ours, theirs)


def lines_in_order(lines: list[str], within: list[str]) -> bool:
    found = iter(within)
    return all(line in found for line in lines)


@st.composite
def appends(draw: st.DrawFn) -> tuple[str, str, str]:
    base = draw(texts())
    ended = base if not base or base.endswith("\n") else base + "\n"
    ours = ended + draw(texts())
    theirs = ended + draw(texts())
    # an editor may drop the final newline of either side
    ours = ours[:-1] if draw(st.booleans()) and ours.endswith("\n") and ours != ended else ours
    theirs = theirs[:-1] if draw(st.booleans()) and theirs.endswith("\n") and theirs != ended else theirs
    return base, ours, theirs


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(appends())
def test_two_appends_keep_every_line_of_both_sides_in_order(git, pair):
    """The append-union rule: where both sides only appended at the end, the merge holds the base, then every line
    this side added, then every line the other side added (once if the same), each a line of its own, none glued;
    where git merges cleanly, it is git's text."""
    base, ours, theirs = pair
    merged = merge(base, ours, theirs)
    expected = git_merge_file(git, base, ours, theirs)
    if expected is not None:
        assert merged == expected
        return
    assert merged is not None and merged.startswith(base)
    lines = merged.splitlines()
    mine, other = appended(base, ours).splitlines(), appended(base, theirs).splitlines()
    assert lines == base.splitlines() + mine + ([] if mine == other else other)
    assert lines_in_order(ours.splitlines(), lines) and lines_in_order(theirs.splitlines(), lines)
