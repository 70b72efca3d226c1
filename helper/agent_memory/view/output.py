"""Where the site is written, and how: only under its `--out` folder, owner-only, never through a link.

The site is written whole into a fresh private folder beside the target (no other process has its name, so nothing
can be planted in it), marked as ours, then swapped in by rename; the previous site is removed after. A target that
is a link, is not a folder, belongs to another user, or is a folder with files that are not a site of ours is
refused: nothing of it is touched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import commands, paths
from ..errors import AgentMemoryError
from ..fsutil import DIR_MODE, FILE_MODE, make_dirs, new_folder, remove_tree

MARK = ".agent-memory-view"  # in every site this command writes: a folder without it is someone else's


def default_folder() -> Path:
    """The site's folder when `--out` is not given: under the state folder (owner-only)."""
    return paths.state_dir() / "view"


def not_ours(out: Path, why: str) -> AgentMemoryError:
    """The error of an `--out` that the view will not write to."""
    return AgentMemoryError(
        f"{out} {why}: the view writes only into a new folder or one it wrote before. Nothing was written.",
        next_step=commands.line("view", "--out", "NEW_FOLDER"),
    )


def check(out: Path) -> None:
    """AgentMemoryError (`not_ours`) unless `out` is missing, or a folder of this user that is empty or a site this
    command wrote."""
    if out == default_folder():
        make_dirs(out.parent, DIR_MODE)  # the state folder, on a machine that has none yet
    try:
        info = os.lstat(out)
    except (FileNotFoundError, NotADirectoryError):  # the second when a folder above it is a file
        parent = out.parent
        if not parent.is_dir():
            raise not_ours(out, f"is in {parent}, which is not a folder") from None
        return
    if stat.S_ISLNK(info.st_mode):
        raise not_ours(out, "is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise not_ours(out, "is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise not_ours(out, f"belongs to another user (uid {info.st_uid})")
    names = os.listdir(out)
    if names and not os.path.isfile(out / MARK):
        raise not_ours(out, "holds files that are not a site written by agent-memory view")


def staged(out: Path) -> Path:
    """A fresh owner-only folder beside `out` to write the site into (then `publish`)."""
    return new_folder(out.parent, f".{out.name}.staging-")


def write(folder: Path, name: str, data: bytes) -> None:
    """Write a new file of the site (its folder is ours and fresh: nothing can be there before us)."""
    path = folder / name
    if not path.parent.is_dir():
        os.mkdir(path.parent, DIR_MODE)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def replace(folder: Path, name: str, data: bytes) -> None:
    """Write a file of the site again, whole (under a fresh name in the staged folder, then renamed over it)."""
    fresh = f"{name}.{os.urandom(6).hex()}.tmp"
    write(folder, fresh, data)
    os.replace(folder / fresh, folder / name)


def publish(staging: Path, out: Path) -> None:
    """Swap the staged site in at `out`, checked again just before; the previous site is removed after."""
    write(staging, MARK, b"written by agent-memory view\n")
    try:
        check(out)
    except AgentMemoryError:
        remove_tree(staging)
        raise
    old = None
    if os.path.lexists(out):
        old = out.parent / f".{out.name}.old-{os.urandom(6).hex()}"
        os.rename(out, old)
    try:
        os.rename(staging, out)
    except OSError:
        if old is not None:
            os.rename(old, out)
        raise
    if old is not None:
        if os.path.islink(old):  # swapped in between the check and the rename: only the link goes
            os.unlink(old)
        else:
            remove_tree(old)


def discard(staging: Path) -> None:
    """Remove a staged site that was not published."""
    remove_tree(staging)
