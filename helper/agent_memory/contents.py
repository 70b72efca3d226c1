"""What a set of files holds: the SHA-256 of bytes, and how two sets of files differ.

The outbox records a SHA-256 per object, an install marker one per file; installing and `status` compare what a
folder holds with what was installed or is about to be.
"""

from __future__ import annotations

from collections.abc import Mapping


def sha256(data: bytes) -> str:
    """Hex SHA-256 of `data`.

    `hashlib` is loaded here, where a digest is first made: it loads OpenSSL, a quarter of the interpreter's own
    start-up, and the read path with nothing pending (a search, the SessionStart hook of a new session) makes none.
    """
    import hashlib

    return hashlib.sha256(data).hexdigest()


def compare(before: Mapping[str, object], after: Mapping[str, object]) -> dict[str, list[str]]:
    """`{"added", "removed", "changed"}`: the paths of `after` that `before` lacks, those it alone has, and those
    whose value (bytes, or a hash) differs."""
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(path for path in set(before) & set(after) if before[path] != after[path]),
    }
