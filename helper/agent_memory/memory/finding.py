"""Literal search through the cache's large files (the search pack, the checksums): StringZilla's SIMD functions,
10 to 15 times Python's own methods, where there are enough bytes to search to pay for loading them.

Loading the extension costs about half a millisecond, what Python's `find` takes through 1 MiB: a search of a small
cache (most of them) and the commands that read the pack without a query (`status`, the hooks) never load it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Callable

    # `find(data, needle, start, end)`, as `data.find(needle, start, end)`; the same for `count` and `rfind`
    Find = Callable[[bytes | bytearray, bytes, int, int], int]

SIMD_BYTES = 1 << 20  # bytes to search from which the SIMD functions are loaded


def finders(size: int) -> tuple[Find, Find, Find]:
    """`(count, find, rfind)` for a search through `size` bytes in all."""
    if size < SIMD_BYTES:
        return _count, _find, _rfind
    try:
        from stringzilla import count, find, rfind
    except ImportError:  # an environment that lost it: the same answers, slower, rather than a failed search
        return _count, _find, _rfind
    return count, find, rfind


def _count(data: bytes | bytearray, needle: bytes, start: int, end: int) -> int:
    return data.count(needle, start, end)


def _find(data: bytes | bytearray, needle: bytes, start: int, end: int) -> int:
    return data.find(needle, start, end)


def _rfind(data: bytes | bytearray, needle: bytes, start: int, end: int) -> int:
    return data.rfind(needle, start, end)
