"""The checksums file of a project's cache: what each cached note must be, recorded from a verified source.

One line per note, `id size crc32 remote-hash` separated by tabs (`-` for a remote hash that the listing does
not give, or that is not known yet). Lines are appended under the cache's lock and the last line of a note
wins (a replaced copy, or a remote hash learnt later). A line torn by a crash in the middle of an append is
ignored, and the next writer rewrites the file whole before it appends. The file is read, like it is written, only
as our own regular file: one found to be a link (or another user's) is refused with UnsafeLocalFile, and the command
says to remove it (the notes are then verified afresh), instead of trusting whatever it leads to.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..fsutil import open_own, read_own
from .finding import finders

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping

Checksum = tuple[int, int, "str | None"]  # size, CRC-32, remote hash: a plain tuple, cheap to build 50,000 of
MAX_FILE = 64 << 20  # bytes: the lines of a few hundred thousand notes; a larger file is damage, never read
FEW = 32  # up to this many notes, look their lines up one by one instead of parsing the whole file


def line(note_id: str, checksum: Checksum) -> bytes:
    """The line that records `checksum` for a note."""
    size, crc, remote = checksum
    return f"{note_id}\t{size}\t{crc:08x}\t{remote or '-'}\n".encode()


def read(file: Path, note_ids: list[str] | set[str] | Mapping[str, object] | None = None) -> dict[str, Checksum]:
    """The checksums of `note_ids` (of every note when None) that `file` records."""
    data = _complete(file)
    if note_ids is None or len(note_ids) > FEW:
        wanted = None if note_ids is None else {note_id.encode() for note_id in note_ids}
        found = {}
        for each in data.split(b"\n")[:-1]:
            if wanted is not None and each[: each.find(b"\t")] not in wanted:
                continue  # another note's line: not parsed (a fill adds batches of a thousand to thousands)
            if (parsed := _parse(each)) is not None:
                found[parsed[0]] = parsed[1]
        return found if note_ids is None else {key: found[key] for key in note_ids if key in found}
    _count, _find, rfind = finders(len(data) * len(note_ids))  # through a large file: SIMD search (see `finding`)
    found = {}
    for note_id in note_ids:  # read and search need one or ten: no need to parse thousands of lines
        key = note_id.encode() + b"\t"
        at = rfind(data, b"\n" + key, 0, len(data))
        at = at + 1 if at != -1 else 0 if data.startswith(key) else -1  # the note's last line
        if at != -1 and (parsed := _parse(data[at : data.find(b"\n", at)])) is not None:
            found[note_id] = parsed[1]
    return found


# a well-formed line, as `_parse` takes it, for `ids`: one regular-expression pass instead of a loop over lines
_LINE = r"(?m)^([^\t\n]+)\t[0-9]+\t[0-9a-fA-F]{8}\t[^\t\n]+$"  # compiled on first use (re keeps it)


def ids(file: Path) -> set[str]:
    """The ids of the notes that `file` records (its well-formed lines' first fields): the keys `read(file)` would
    give, at a fraction of its cost (the SessionStart hook counts the notes at every session start)."""
    return set(re.findall(_LINE, _complete(file).decode("ascii", errors="replace")))


def ends_torn(file: Path) -> bool:
    """Whether the file's last line is incomplete (an append cut by a crash)."""
    try:
        with open(open_own(file), "rb") as handle:
            if handle.seek(0, os.SEEK_END) == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


def _parse(text: bytes) -> tuple[str, Checksum] | None:
    """`(id, checksum)` of one line, or None if it is not a well-formed one."""
    parts = text.split(b"\t")
    if len(parts) != 4 or not parts[1].isdigit() or len(parts[2]) != 8 or not parts[0] or not parts[3]:
        return None
    try:
        crc = int(parts[2], 16)
        note_id, remote = parts[0].decode("ascii"), parts[3].decode("ascii")
    except ValueError:
        return None
    return note_id, (int(parts[1]), crc, None if remote == "-" else remote)


def _complete(file: Path) -> bytes:
    """The lines of `file` that end with a newline (a torn last line is left out)."""
    try:
        data = read_own(file, MAX_FILE)  # never through a link: what it says decides which cached notes are shown
    except FileNotFoundError:
        return b""
    return data[: data.rfind(b"\n") + 1]
