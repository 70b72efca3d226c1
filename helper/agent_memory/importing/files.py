"""Finding and reading a source's Markdown files: bounded, one file at a time, and never through a link.

Everything read here is the user's data from outside the process, so it is read with bounded cost: at most
FILES_MAX Markdown files and ENTRIES_MAX folder entries per source, DEPTH_MAX folders deep, each file at most
`notes.MAX_BYTES`. The folders are walked first (names only, so the limits hold before any file is read or
saved), then each file is read when it is imported, and let go before the next: an import holds one file at a
time, whatever their number. Below a source's folder (which may itself be reached through a link: the user's
choice) names are looked up one at a time and never through a link (`store.local_tree`), on the walk and again
on each read, so a link planted in a memory folder, then or meanwhile, cannot bring a file from elsewhere into
the bucket; such an entry is listed as refused, with why.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import commands
from ..display import safe
from ..errors import UsageError
from ..memory import notes
from ..store.local_tree import Folder, Untrusted, open_root
from .sources import Source

FILES_MAX = 2000
ENTRIES_MAX = 20000
DEPTH_MAX = 8


@dataclass
class File:
    """A Markdown file of a source: where it is, and why it cannot be imported (`problem`), if it cannot."""

    path: Path
    source: str  # what the note records as its source: the path, relative to the checkout when inside it
    problem: str | None = None
    name: str = ""  # its path inside the source's folder


def find_files(source: Source) -> list[File]:
    """Every Markdown file below the source's folder, in a stable order, not read yet (`read` reads one), or
    refused with why (a link, a folder too deep or that cannot be listed).

    UsageError, before any file is read, if the folder holds more than FILES_MAX files or ENTRIES_MAX entries.
    """
    found: list[File] = []
    entries = 0
    stack: list[tuple[Folder, int]] = [(open_root(str(source.folder)), 0)]
    try:
        while stack:
            folder, depth = stack.pop()
            try:
                entries += _scan(source, folder, depth, stack, found)
            finally:
                folder.close()
            if entries > ENTRIES_MAX:
                raise _too_many(source, f"more than {ENTRIES_MAX} files and folders")
            if len(found) > FILES_MAX:
                raise _too_many(source, f"more than {FILES_MAX} Markdown files")
    finally:
        for folder, _depth in stack:
            folder.close()
    return sorted(found, key=lambda file: file.name)


def _scan(source: Source, folder: Folder, depth: int, stack: list[tuple[Folder, int]], found: list[File]) -> int:
    """Read the Markdown files of one folder into `found`, its subfolders onto `stack`; how many entries it has."""
    try:
        listing = folder.entries()
    except OSError as exc:
        found.append(_refused(source, folder.where, f"cannot be listed ({exc.strerror})"))
        return 0
    if len(listing) > ENTRIES_MAX:
        return len(listing)
    for entry in sorted(listing, key=lambda entry: entry.name):
        where = folder.relative(entry.name)
        if entry.name.startswith("."):
            continue  # hidden files and folders: editors' swap files, `.git`
        info = entry.stat(follow_symlinks=False)
        markdown = entry.name.lower().endswith(".md")
        if stat.S_ISDIR(info.st_mode):
            if depth + 1 >= DEPTH_MAX:
                found.append(_refused(source, where, f"is more than {DEPTH_MAX} folders deep"))
                continue
            try:
                stack.append((folder.child(entry.name), depth + 1))
            except Untrusted as exc:
                found.append(_refused(source, where, exc.why))
            except OSError as exc:
                found.append(_refused(source, where, f"cannot be opened ({exc.strerror})"))
        elif stat.S_ISLNK(info.st_mode):
            if markdown or os.path.isdir(os.path.join(folder.path, entry.name)):
                found.append(_refused(source, where, "is a symbolic link (never followed out of the folder)"))
        elif markdown and not any(fnmatch.fnmatchcase(where, pattern) for pattern in source.ignored):
            found.append(File(source.folder / where, _recorded(source, where), name=where))
    return len(listing)


def read(source: Source, file: File) -> tuple[bytes | None, str | None]:
    """The bytes of one file that `find_files` found, reached again from the source's folder one name at a time
    (never through a link): `(data, None)`, else `(None, why it cannot be imported)`."""
    *folders, name = file.name.split("/")
    try:
        folder = open_root(str(source.folder))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    try:
        for part in folders:
            inner = folder.child(part)
            folder.close()
            folder = inner
        fd = folder.open_file(name)
    except Untrusted as exc:
        return None, exc.why
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    finally:
        folder.close()
    with open(fd, "rb") as handle:
        data = handle.read(notes.MAX_BYTES + 1)
    if len(data) > notes.MAX_BYTES:
        return None, f"is larger than {notes.MAX_BYTES} bytes (1 MiB), the most a note holds"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"is not UTF-8 text (invalid byte at offset {exc.start}), so it was skipped"
    return data, None


def _refused(source: Source, where: str, why: str) -> File:
    return File(source.folder / where, _recorded(source, where), why, name=where or ".")


def _recorded(source: Source, where: str) -> str:
    """The note's `source`: the file's path, relative to the checkout when it lies inside it (the same in every
    clone, on every machine), else absolute; a control character in a name is written as its visible escape."""
    path = source.folder / where
    if source.relative_to is not None:
        with contextlib.suppress(ValueError):
            return safe(path.relative_to(source.relative_to).as_posix())
    return safe(str(path))


def _too_many(source: Source, what: str) -> UsageError:
    return UsageError(
        f"{source.folder} holds {what}, more than one import reads, so nothing was imported.",
        next_step=f"{commands.line('import', 'DIR')} with a smaller folder (a subfolder of it)",
    )
