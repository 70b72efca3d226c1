"""Merging two versions of a file against the version both started from.

The three-way merge is git's own (`git merge-file`), through libgit2 (pygit2): the same xdiff code, so where git
merges cleanly the text is git's byte for byte (final newlines and repeated lines included), and where git reports
a conflict, so do we (Conflicting: the caller keeps both texts whole). git itself is not on every machine; libgit2
ships inside pygit2's wheels.

One rule of our own, on top of git's: two machines that both only appended lines at the end of a file (the usual
case for an index such as MEMORY.md) do not conflict, though git calls that a conflict. Every line both sides
added is kept, this machine's first, at that one point only; a side's last line without a final newline is ended
with one before the other side's lines follow, so no two lines are ever glued into one, and no line is dropped
even when it repeats a line the other side added (two code fences). The file ends as the side whose lines end it
ends (with or without a final newline). Identical additions are kept once, as git keeps an identical change once.
"""

from __future__ import annotations


class Conflicting(Exception):
    """The two sides changed the same lines, or one deleted what the other changed: no merge."""


def merge(base: str | None, ours: str | None, theirs: str | None) -> str | None:
    """The merged text (None: the file is deleted on both sides, or deleted on one and untouched on the other);
    Conflicting when the changes touch the same lines, or one side deleted what the other changed."""
    if ours == theirs:
        return ours
    if base == ours:
        return theirs
    if base == theirs:
        return ours
    if ours is None or theirs is None or base is None:
        raise Conflicting  # deleted on one side and changed on the other, or made on both without a common version
    merged = merge_file(base, ours, theirs)
    if merged is not None:
        return merged
    union = append_union(base, ours, theirs)
    if union is None:
        raise Conflicting
    return union


def merge_file(base: str, ours: str, theirs: str) -> str | None:
    """git's three-way merge of three texts: the merged text, or None where git reports a conflict."""
    # only a merge needs them: every sync loads this module, and a hook's with nothing to merge must not pay for
    # tempfile (with shutil, random and the compressors) nor for libgit2
    import tempfile

    import pygit2

    try:
        with tempfile.TemporaryDirectory(prefix="agent-memory-merge-") as folder:
            repo = pygit2.init_repository(folder, bare=True)  # libgit2 merges blobs of a repository: a throwaway one

            def entry(text: str) -> pygit2.IndexEntry:
                return pygit2.IndexEntry("file", repo.create_blob(text.encode("utf-8")), pygit2.enums.FileMode.BLOB)

            result = repo.merge_file_from_index(entry(base), entry(ours), entry(theirs), use_deprecated=False)
            return result.contents if result.automergeable else None
    except (OSError, pygit2.GitError):
        return None  # no scratch folder to merge in (a full disk, a read-only temp folder): a conflict loses nothing


def appended(base: str, side: str) -> str | None:
    """The lines `side` added after the whole of `base` (None: it changed `base` too). Each text is read with a
    final newline: one missing at the end of either is no change of a line, and an appended line starts afresh."""
    whole, now = _ended(base), _ended(side)
    return now[len(whole) :] if now.startswith(whole) else None


def append_union(base: str, ours: str, theirs: str) -> str | None:
    """Where both sides only appended at the end: the base, this side's added lines, then the other side's (once
    if the same); None where either side changed anything else."""
    mine, other = appended(base, ours), appended(base, theirs)
    if mine is None or other is None:
        return None
    last = theirs if other and other != mine else ours  # the side whose lines end the file
    union = _ended(base) + mine + ("" if other == mine else other)
    return union if last.endswith("\n") or not union.endswith("\n") else union[:-1]  # ends as that side ends


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
