"""The pending queue: a finished note is persisted here, with its full destination, before any network call.

One JSON file per note: `{"id", "bucket", "path", "project", "content", "sha256", "queued", "attempts",
"last_error"}`, plus the fields that search displays (`title`, `kind`, `created`, `agent`). The entry is removed
only once the bucket confirms the object, so a retry always sends the same bytes to the same place, whatever
the configuration says by then. No credential is ever written here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import paths
from .fsutil import try_locked, write_json_atomic
from .memory.notes import utc_now
from .names import note_id as validate_id


def _file(note_id: str) -> Path:
    return paths.pending_dir() / f"{validate_id(note_id)}.json"


def _sha256(data: bytes) -> str:
    import hashlib  # loads OpenSSL: only the commands that save or retry need it

    return hashlib.sha256(data).hexdigest()


def add(note_id: str, *, bucket: str, path: str, project: str, content: bytes, meta: dict[str, str]) -> dict[str, Any]:
    """Persist a new entry atomically and return it; `meta` holds the displayed fields (title, kind...)."""
    entry = {
        **meta,
        "id": note_id,
        "bucket": bucket,
        "path": path,
        "project": project,
        "content": content.decode("utf-8"),
        "sha256": _sha256(content),
        "queued": utc_now(),
        "attempts": 0,
        "last_error": None,
    }
    write_json_atomic(_file(note_id), entry)
    return entry


def content(entry: dict[str, Any]) -> bytes:
    """The exact bytes of the note; refuses an entry whose bytes no longer match their checksum."""
    data = entry["content"].encode("utf-8")
    if _sha256(data) != entry["sha256"]:
        raise ValueError(f"pending entry {entry['id']} is damaged (checksum mismatch)")
    return data


def get(note_id: str) -> dict[str, Any] | None:
    """The entry for `note_id`, or None."""
    try:
        return json.loads(_file(note_id).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def entries() -> list[dict[str, Any]]:
    """Every entry, oldest id first; unreadable files are skipped (they are never deleted)."""
    found = []
    folder = paths.pending_dir()
    if not folder.is_dir():
        return []
    for file in sorted(folder.glob("*.json")):
        with contextlib.suppress(ValueError, OSError):
            found.append(json.loads(file.read_text(encoding="utf-8")))
    return found


def record_failure(entry: dict[str, Any], reason: str, detail: str) -> dict[str, Any]:
    """Keep the entry, noting one more failed attempt and why."""
    entry = {**entry, "attempts": entry.get("attempts", 0) + 1, "last_error": {"reason": reason, "detail": detail}}
    entry["last_error"]["at"] = utc_now()
    write_json_atomic(_file(entry["id"]), entry)
    return entry


def remove(note_id: str) -> None:
    """Forget an entry whose object the bucket has confirmed."""
    with contextlib.suppress(FileNotFoundError):
        _file(note_id).unlink()
    with contextlib.suppress(FileNotFoundError):
        _lock_file(note_id).unlink()


def _lock_file(note_id: str) -> Path:
    return paths.pending_dir() / f".{validate_id(note_id)}.lock"


@contextlib.contextmanager
def claimed(note_id: str) -> Iterator[bool]:
    """Hold the entry's upload lock; yields False if another process is uploading it right now."""
    with try_locked(_lock_file(note_id)) as ok:
        yield ok
