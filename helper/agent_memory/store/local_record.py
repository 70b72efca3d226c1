"""The folder store's record of the objects written: its change feed, read from a cursor instead of listing.

`<root>/.changes` (a dot-name: never an object, never listed) holds a header line naming its generation, then one
line per object written, appended by the same `put` that wrote the object with a single `write()` on a file
opened `O_APPEND`: concurrent writers (processes, or machines on one drive) never interleave their lines. A line
is `CRC-32 of the rest, path, size` separated by tabs. A cursor is `generation:offset`, the offset of the end of
the last complete line read.

The record is bounded: the put whose line takes it past ROTATE_BYTES replaces it with a new one (a new generation,
its header only), renamed into place. A reader whose cursor names the old generation cannot follow it, and lists,
as for a record replaced by hand. A line that a writer appends to the old record after the rotation (it had opened
it before) is lost to the record, never to the readers: that writer's object was in place before it opened the
record, so before the rotation, and every cursor in the new record was read after the rotation and before a
listing, which finds the object.

The record is data from the folder like any other, read with bounded cost. A line being written (no newline yet)
is left for the next reader; a line that does not check out (a writer killed in the middle, a hand edit), a
record that is not there, replaced (another generation), cut shorter than the cursor or too long to replay,
cannot be followed: the refresh lists instead (`Unfollowable`), which also finds an object whose writer died
before its line, and a listing at least once a day finds what a foreign writer added without one.
"""

from __future__ import annotations

import os
from binascii import crc32

from .change_feed import MAX_PATH, Change, Unfollowable

NAME = ".changes"
_HEADER = b"agent-memory changes 1 "
_GENERATION = 16  # hex digits
HEADER_BYTES = len(_HEADER) + _GENERATION + 1
MAX_REPLAY = 8 << 20  # bytes of record read by one refresh (about 80,000 lines): past that, listing is cheaper
ROTATE_BYTES = 2 * MAX_REPLAY  # a record past this size is replaced by a new one: what a drive keeps stays bounded
_TAIL = 4096  # bytes read back from the end to find where the last complete line ends (a line is far shorter)


def header() -> bytes:
    """The first line of a new record: a generation no other record has."""
    return _HEADER + os.urandom(_GENERATION // 2).hex().encode() + b"\n"


def line(path: str, size: int) -> bytes:
    """The record's line for an object written at `path` with `size` bytes."""
    rest = f"{path}\t{size}".encode()
    return b"%08x\t%s\n" % (crc32(rest), rest)


def generation(fd: int) -> str:
    """The generation named by the record's header; Unfollowable if it has none."""
    head = os.pread(fd, HEADER_BYTES, 0)
    found = head[len(_HEADER) : -1]
    if len(head) != HEADER_BYTES or not head.startswith(_HEADER) or head[-1:] != b"\n" or not _hex(found):
        raise Unfollowable("damaged", f"the folder store's record of changes ({NAME}) has no header")
    return found.decode()


def head(fd: int) -> int:
    """The offset just after the record's last complete line."""
    size = os.fstat(fd).st_size
    tail = os.pread(fd, min(_TAIL, size), max(0, size - _TAIL))
    end = tail.rfind(b"\n")
    if end == -1:
        raise Unfollowable("damaged", f"a line of the folder store's record of changes ({NAME}) is too long")
    return size - len(tail) + end + 1


def replay(fd: int, offset: int, folder: str) -> tuple[int, dict[str, Change]]:
    """The objects written below `folder` after `offset` (up to the last complete line), and the offset after
    them; Unfollowable if a line does not check out or there is too much to read."""
    size = os.fstat(fd).st_size
    if size - offset > MAX_REPLAY:
        raise Unfollowable("long", f"the folder store's record holds more than {MAX_REPLAY >> 20} MiB of changes")
    data = os.pread(fd, size - offset, offset)
    complete = data.rfind(b"\n") + 1
    changes: dict[str, Change] = {}
    for raw in data[:complete].split(b"\n")[:-1]:
        path, size_told = _parse(raw)
        if path.startswith(folder):
            change = changes[path] = Change(path)
            change.added, change.size = True, size_told
    return offset + complete, changes


def _parse(raw: bytes) -> tuple[str, int]:
    parts = raw.split(b"\t")
    if len(parts) == 3 and _hex(parts[0]) and len(parts[0]) == 8:
        rest = parts[1] + b"\t" + parts[2]
        if (
            int(parts[0], 16) == crc32(rest)
            and parts[2].isdigit()
            and len(parts[2]) <= 20
            and 0 < len(parts[1]) <= MAX_PATH
        ):
            try:
                return parts[1].decode(), int(parts[2])
            except UnicodeDecodeError:
                pass
    raise Unfollowable("damaged", f"a line of the folder store's record of changes ({NAME}) does not check out")


def _hex(value: bytes) -> bool:
    return bool(value) and all(c in b"0123456789abcdef" for c in value)
