"""The per-bucket cache: exact copies of the notes, and a search pack derived from them.

Layout, mirroring the bucket: `<cache>/<bucket key>/projects/<project>/notes/<id>.md`. Beside `notes/`,
`search.pack` holds one record per note: a NUL byte, a header line (id, created, kind, agent, title, separated
by tabs), then the note's lowercased text. Offline search reads that one file instead of thousands of small
ones, which keeps it close to ripgrep's speed. The Markdown files stay the source of truth: the pack is
appended to under a lock, and rebuilt atomically from them whenever the two disagree.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from .. import paths
from ..clock import utc_now
from ..fsutil import locked, read_json, write_atomic, write_json_atomic
from ..store import folder_path, hub_id

HEADER_FIELDS = ("id", "created", "kind", "agent", "title")


def bucket_key(uri: str) -> str:
    """A folder name that identifies a bucket (hub names cannot contain `--`, so this is unambiguous)."""
    if (ident := hub_id(uri)) is not None:
        return "hf--" + ident.replace("/", "--")
    import re
    from binascii import crc32  # not hashlib: loading OpenSSL would slow down every search

    folder = str(folder_path(uri))
    # readable (the last two folder names) and distinct (a checksum of the whole path)
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", "-".join(folder.strip("/").split("/")[-2:]))[:60]
    return f"file--{slug}--{crc32(folder.encode()):08x}"


def record(note_id: str, data: bytes) -> bytes:
    """The pack record of one note."""
    from .notes import parse

    meta, _body = parse(data)
    values = {"id": note_id, **{key: meta.get(key) for key in HEADER_FIELDS[1:]}}
    header = "\t".join(_one_line(values[key]) for key in HEADER_FIELDS)
    text = data.decode("utf-8", errors="replace").lower().replace("\x00", " ")
    return b"\x00" + header.encode() + b"\n" + text.encode() + b"\n"


def _one_line(value: Any) -> str:
    if hasattr(value, "strftime"):  # an unquoted timestamp in a note written by another tool
        value = value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return " ".join(str(value if value is not None else "").split())


class ProjectCache:
    """The cached notes of one project of one bucket."""

    def __init__(self, bucket_uri: str, project: str) -> None:
        self.project = project
        self.dir = paths.cache_dir() / bucket_key(bucket_uri) / "projects" / project
        self.notes = self.dir / "notes"
        self.pack = self.dir / "search.pack"

    def note_file(self, note_id: str) -> Path:
        """Where the cached copy of a note is (it may not exist)."""
        return self.notes / f"{note_id}.md"

    def ids(self) -> set[str]:
        """Ids of the notes cached completely (temporary downloads live elsewhere)."""
        if not self.notes.is_dir():
            return set()
        return {name[:-3] for name in os.listdir(self.notes) if name.endswith(".md") and not name.startswith(".")}

    def staging(self) -> Path:
        """A fresh folder on the cache's filesystem for downloads that are not complete yet."""
        import tempfile

        self.dir.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".download-", dir=self.dir))

    def add(self, notes: dict[str, bytes | Path]) -> None:
        """Put complete notes (bytes, or downloaded files on this filesystem) into the cache and the pack."""
        with locked(self.dir / ".lock"):
            added = []
            for note_id, source in notes.items():
                target = self.note_file(note_id)
                if target.exists():  # another process cached it meanwhile: notes are immutable
                    continue
                if isinstance(source, Path):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(source, target)
                else:
                    write_atomic(target, source)
                added.append(note_id)
            if not self.pack.exists():
                self._rebuild_locked()  # covers the new notes too
            elif added:
                records = b"".join(record(note_id, self.note_file(note_id).read_bytes()) for note_id in added)
                with open(self.pack, "ab") as handle:
                    handle.write(records)

    def drop(self, note_ids: set[str]) -> None:
        """Remove notes that the bucket no longer lists, and rebuild the pack without them."""
        with locked(self.dir / ".lock"):
            for note_id in note_ids:
                with contextlib.suppress(FileNotFoundError):
                    self.note_file(note_id).unlink()
            self._rebuild_locked()

    def pack_ids(self) -> set[str]:
        """Ids that the pack has records for."""
        data = self.pack.read_bytes() if self.pack.exists() else b""
        return {chunk[: chunk.find(b"\t")].decode() for chunk in data.split(b"\x00")[1:]}

    def repair(self, cached: set[str] | None = None) -> None:
        """Rebuild the pack if it does not describe exactly the cached notes (e.g. after a crash mid-append).

        `cached` saves listing the notes folder again when the caller knows what it holds.
        """
        if self.pack_ids() != (self.ids() if cached is None else cached):
            with locked(self.dir / ".lock"):
                self._rebuild_locked()

    def _rebuild_locked(self) -> None:
        records = [record(note_id, self.note_file(note_id).read_bytes()) for note_id in sorted(self.ids())]
        write_atomic(self.pack, b"".join(records))

    def read_pack(self) -> bytes:
        """The search pack, rebuilt first if it is missing while notes are cached."""
        try:
            return self.pack.read_bytes()
        except FileNotFoundError:
            if not self.ids():
                return b""
        self.repair()
        return self.pack.read_bytes()

    def record_refresh(self) -> None:
        """Remember when the cache last matched a complete listing of the bucket."""
        write_json_atomic(self.dir / "refresh.json", {"last_success": utc_now()})

    def last_refresh(self) -> str | None:
        """When the cache last matched a complete listing, or None."""
        with contextlib.suppress(ValueError, OSError):
            return (read_json(self.dir / "refresh.json", {}) or {}).get("last_success")
        return None

    def discard_staging(self, folder: Path) -> None:
        """Remove a staging folder and whatever incomplete downloads it holds."""
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
