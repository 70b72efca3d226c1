"""The search pack of a project's cache: one self-checking record per verified note, read in one pass.

A record is a NUL byte, the length and the CRC-32 of the rest of the record (8 hex digits each, each followed
by a tab), then a header line (id, created, kind, agent, title, machine, problem, corrects, tags, separated by
tabs) and the note's searchable text, lowercased: its title on one line, then its body (`notes.body_text`),
each ending with a newline. The frontmatter is not in the text: a search matches what a note says, never its
field names or values (the title aside). The header holds a note's fields as checked by `notes.fields`; a
damaged note has only its id and its problem there, so it ranks after every valid note, and an empty title line.
A note that corrects another has its `corrects` field marked with a SOH byte (\x01), which appears nowhere
else either: the corrections of a whole pack are found with one byte search per block. A record with another
number of fields (written by an earlier version, which also searched the frontmatter) counts as damage: the
pack is rebuilt.
NUL appears nowhere else, so a record runs from its NUL to the next one: a torn append (a crash in the middle
of a write) leaves a record shorter than its length says, and damage changes its CRC. Searching one file
instead of thousands of small ones keeps search close to ripgrep's speed; it is read in blocks, so memory stays
bounded whatever the number of notes.
"""

from __future__ import annotations

import os
from binascii import crc32  # not zlib or hashlib: this module is on the start-up path of every search
from collections.abc import Iterator
from io import BufferedReader
from pathlib import Path

from ..fsutil import UnsafeLocalFile, open_own
from . import notes
from .finding import finders

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .finding import Find

HEADER_FIELDS = ("id", "created", "kind", "agent", "title", "machine", "problem", "corrects", "tags")
TITLE, PROBLEM, CORRECTS = 4, 6, 7  # indexes among them
MARK = b"\x01"  # before the id in a `corrects` field
BLOCK = 1 << 20
SAMPLE = 1 << 16  # bytes of a block in which the terms of a query are counted, to pick the one to scan for
PREFIX = 19  # NUL, length, tab, CRC, tab
_TABS = len(HEADER_FIELDS) - 1


class Damaged(Exception):
    """The pack holds a torn or damaged record: rebuild it."""


def record(note_id: str, data: bytes) -> bytes:
    """The pack record of one note."""

    values, problem, body = notes.checked(note_id, data)
    header = [values.get(key, "") for key in HEADER_FIELDS]
    header[0], header[PROBLEM] = note_id, problem or ""
    line = "\t".join(header)
    if not _one_line_each(line):
        header = [_one_line(value) for value in header]
        line = "\t".join(header)
    if header[CORRECTS]:
        header[CORRECTS] = "\x01" + header[CORRECTS]
        line = "\t".join(header)
    text = (header[TITLE] + "\n" + body).lower()
    if "\x00" in text or "\x01" in text:  # only ever the first byte of a record, and the mark
        text = text.replace("\x00", " ").replace("\x01", " ")
    rest = line.encode() + b"\n" + text.encode() + b"\n"
    return b"\x00%08x\t%08x\t" % (len(rest), crc32(rest)) + rest


def _one_line_each(line: str) -> bool:
    """Whether each tab-separated value of `line` is already what `_one_line` makes of it (as the checked fields of
    a note nearly always are): no character but the space that `str.split` takes for whitespace (`isprintable`
    refuses every other one, and NUL and SOH), and no space at an end or twice."""
    return (
        line.replace("\t", "").isprintable()
        and "  " not in line
        and " \t" not in line
        and "\t " not in line
        and line[:1] != " "
        and line[-1:] != " "
    )


def _one_line(value: str) -> str:
    if "\x00" in value or "\x01" in value:  # see `record`
        value = value.replace("\x00", " ").replace("\x01", " ")
    return " ".join(value.split())


def fields(header: bytes) -> dict[str, str]:
    """A record's header as a dict of HEADER_FIELDS (`corrects` without its mark)."""
    found = dict(zip(HEADER_FIELDS, header.decode("utf-8", errors="replace").split("\t"), strict=False))
    found["corrects"] = found.get("corrects", "").removeprefix("\x01")
    return found


def record_problem(record: bytes) -> str:
    """The `problem` of a record that `record` made: why its note's fields cannot be used, or ""."""
    header = record[PREFIX : record.index(b"\n", PREFIX)]
    return header.split(b"\t")[PROBLEM].decode("utf-8", errors="replace")


def record_id(header: bytes) -> str:
    """The note id of a record's header."""
    return header[: header.find(b"\t")].decode("utf-8", errors="replace")


class Hit:
    """A record that a scan found: its header, and where its text is in the block being read (valid until the
    scan reads on): `data[title:body]` is the title line, `data[body:stop]` the body."""

    __slots__ = ("header", "data", "title", "body", "stop")

    def __init__(self, header: bytes, data: bytearray, title: int, stop: int) -> None:
        self.header, self.data, self.title, self.stop = header, data, title, stop
        body = data.find(b"\n", title, stop)
        if body == -1:
            raise Damaged  # a record without its title line
        self.body = body + 1


def scan(path: Path, needle: bytes) -> Iterator[bytes]:
    """Header lines of the records whose text contains `needle` (every record if it is empty), in file order."""
    return (hit.header for hit in hits(path, (needle,) if needle else ()))


def hits(
    path: Path, needles: tuple[bytes, ...], corrections: dict[str, tuple[str, str]] | None = None
) -> Iterator[Hit]:
    """The records that may hold every one of `needles` (all records if there is none), in file order: in each
    block, those whose text contains the needle that looks rarest there (`_rarest`: a record found costs a Python
    step, a search of the block does not); the caller checks the others. With `corrections`, fills it with
    `{id: (the id it corrects, created)}` of every record that corrects another.

    Each record returned is checked, and so is the last one of every block, which is where a torn append
    would be, and the first one, whose format tells the version that wrote the pack: Damaged is raised when a
    check fails. A missing pack has no records.
    """

    try:
        with open(open_own(path), "rb") as handle:  # a link planted in its place is damage: rebuilt by rename
            # the scan is what a search of many notes pays for: SIMD search through a large pack (see `finding`)
            count, find, _rfind = finders(os.fstat(handle.fileno()).st_size if needles else 0)
            first = True
            for data, end in _blocks(handle):
                if data[:1] != b"\x00" or not _intact(data, data.rfind(b"\x00", 0, end), end):
                    raise Damaged
                if first:
                    _header(data, 0, data.find(b"\n", 0, end))  # an earlier format's pack is rebuilt whole
                    first = False
                if corrections is not None:
                    _corrections(data, end, corrections)
                if not needles:
                    yield from _every(data, end)
                    continue
                yield from _matching(data, end, _rarest(needles, data, end, count), find)
    except FileNotFoundError:
        return
    except UnsafeLocalFile:
        raise Damaged from None


def _rarest(needles: tuple[bytes, ...], data: bytearray, end: int, count: Find) -> bytes:
    """The needle that occurs the fewest times in a sample of the block (the longest among equals): counting in
    the whole block would read it once per needle, which costs more than the records it spares. `count` counts
    as `data.count(needle, start, end)` does."""
    if len(needles) == 1:
        return needles[0]
    sample = min(end, max(SAMPLE // len(needles), SAMPLE // 8))  # a few needles: all of it; many: less each
    return min(needles, key=lambda needle: (count(data, needle, 0, sample), -len(needle)))


def _corrections(data: bytearray, end: int, found: dict[str, tuple[str, str]]) -> None:
    pos = data.find(MARK, 0, end)
    while pos != -1:
        start = data.rfind(b"\x00", 0, pos)
        header_end = data.find(b"\n", start, end)
        stop = data.find(b"\x00", pos, end)
        stop = end if stop == -1 else stop
        if header_end == -1 or header_end < pos or not _intact(data, start, stop):
            raise Damaged  # the mark is only ever in a header
        values = fields(_header(data, start, header_end))
        found[values["id"]] = (values["corrects"], values["created"])
        pos = data.find(MARK, stop, end)


def _blocks(handle: BufferedReader) -> Iterator[tuple[bytearray, int]]:
    """`(data, end)`: `data[:end]` is whole records; a record cut by the block is carried to the next one.

    One buffer is reused, read into: fresh megabytes for every block would cost more in page faults than the
    search itself. A pack smaller than a block gets a buffer of its size: zeroing a whole block cost a small
    cache's search more than reading its pack.
    """
    data, filled = bytearray(min(BLOCK, os.fstat(handle.fileno()).st_size + 1)), 0
    while True:
        if filled == len(data):  # one record longer than the buffer: make room
            data.extend(bytes(len(data)))
        with memoryview(data) as free:
            count = handle.readinto(free[filled:])
        if not count:
            break
        filled += count
        end = data.rfind(b"\x00", 0, filled)
        if end > 0:
            yield data, end
            data[: filled - end] = data[end:filled]
            filled -= end
    if filled:
        yield data, filled


def _matching(data: bytearray, end: int, needle: bytes, find: Find) -> Iterator[Hit]:
    """The records of `data[:end]` whose text holds `needle`, found with `find` (see `Find`)."""
    pos = find(data, needle, 0, end)
    while pos != -1:
        start = data.rfind(b"\x00", 0, pos)
        header_end = data.find(b"\n", start, end)
        stop = data.find(b"\x00", pos, end)
        stop = end if stop == -1 else stop
        if header_end == -1:
            raise Damaged
        if pos <= header_end:  # inside the header (id, agent...): look in that record's text instead
            following = data.find(b"\x00", start + 1, end)
            if following != -1 and following < header_end:
                raise Damaged  # a record without its header line
            pos = find(data, needle, header_end + 1, end)
            continue
        if not _intact(data, start, stop):
            raise Damaged
        yield Hit(_header(data, start, header_end), data, header_end + 1, stop)
        pos = find(data, needle, stop, end)


def _every(data: bytearray, end: int) -> Iterator[Hit]:
    start = 0
    while start < end:
        stop = data.find(b"\x00", start + 1, end)
        stop = end if stop == -1 else stop
        header_end = data.find(b"\n", start, stop)
        if header_end == -1 or not _intact(data, start, stop):
            raise Damaged
        yield Hit(_header(data, start, header_end), data, header_end + 1, stop)
        start = stop


def _header(data: bytearray, start: int, header_end: int) -> bytes:
    if header_end < start + PREFIX:
        raise Damaged
    header = bytes(data[start + PREFIX : header_end])
    if header.count(b"\t") != _TABS:
        raise Damaged  # a record of an earlier format
    return header


def _intact(data: bytes | bytearray, start: int, stop: int) -> bool:
    """Whether the record `data[start:stop]` is as long as it says, with the CRC it says."""
    if data[start + 9 : start + 10] != b"\t" or data[start + 18 : start + 19] != b"\t":
        return False
    try:
        length, crc = int(data[start + 1 : start + 9], 16), int(data[start + 10 : start + 18], 16)
    except ValueError:
        return False
    return stop - start - PREFIX == length and crc32(memoryview(data)[start + PREFIX : stop]) == crc


def ends_whole(tail: bytes) -> bool:
    """Whether `tail`, the end of a pack, ends with a whole record."""
    start = tail.rfind(b"\x00")
    return start != -1 and _intact(tail, start, len(tail))
