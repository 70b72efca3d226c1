"""Local xet CAS folders for the Hub emulator: shard parsing, per-token folders and the master store.

A `local://` CAS keeps a redb index that only one process may open at a time, so
  * every write token gets a fresh folder of its own (concurrent uploaders never share an index),
  * the batch call copies each named file from that folder into ONE master folder that only the emulator
    process opens (under `CasStore._lock`),
  * every read token gets a private snapshot of the master folder.
"""

from __future__ import annotations

import itertools
import os
import shutil
import struct
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hf_xet

EMPTY_HASH = "0" * 64  # xet hash of a zero-byte file; such files never need CAS bytes
MASTER_COMMIT_FILES = 256  # files per hf_xet commit into the master CAS (see CasStore._upload_locked)
STALE_FOLDER_GRACE = 600  # seconds after a token expired before its CAS folder is deleted


# ---------------------------------------------------------------------------------------------------------------
# xet shard parsing: the batch call carries no size, so sizes come from the shard the client uploaded.
# ---------------------------------------------------------------------------------------------------------------

_SHARD_MAGIC = b"HFRepoMetaData"
_RECORD = 48  # every shard record (file header, segment, verification, metadata extension) is 48 bytes
_BOOKEND = b"\xff" * 32


def xet_hash_hex(raw: bytes) -> str:
    """Render a stored 32-byte hash as xet prints it (four little-endian u64 words, each byte-reversed)."""
    return "".join(raw[i : i + 8][::-1].hex() for i in range(0, 32, 8))


def parse_shard_file_sizes(data: bytes) -> dict[str, int]:
    """Return {xetHash: size} for every file in a xet shard (.mdb); raise ValueError if incomplete."""
    return {xet_hash: size for xet_hash, (size, _sha256) in parse_shard_files(data).items()}


def parse_shard_files(data: bytes) -> dict[str, tuple[int, str | None]]:
    """Return {xetHash: (size, sha256 or None)} for every file in a xet shard; raise ValueError if incomplete."""
    if not data.startswith(_SHARD_MAGIC):
        raise ValueError("not a xet shard")
    files: dict[str, tuple[int, str | None]] = {}
    offset = _RECORD  # header: 32-byte tag, u64 version, u64 footer size
    while offset + _RECORD <= len(data):
        raw_hash = data[offset : offset + 32]
        flags, entries = struct.unpack_from("<II", data, offset + 32)
        offset += _RECORD
        if raw_hash == _BOOKEND:
            return files
        # segment entry: 32-byte xorb hash, u32 flags, u32 unpacked_segment_bytes, u32 chunk start, u32 chunk end
        size = sum(struct.unpack_from("<I", data, offset + i * _RECORD + 36)[0] for i in range(entries))
        offset += _RECORD * entries
        if flags & (1 << 31):  # verification entries, one per segment
            offset += _RECORD * entries
        sha256 = None
        if flags & (1 << 30):  # one metadata-extension entry: the file's sha256, stored like a xet hash
            sha256 = xet_hash_hex(data[offset : offset + 32])
            offset += _RECORD
        files[xet_hash_hex(raw_hash)] = (size, sha256)
    raise ValueError("shard ends before its bookend (still being written?)")


def _snapshot(source: Path, target: Path) -> None:
    """Copy a local CAS store (xorbs, shards, redb index) so another process can open the copy."""

    # xorbs and shards are immutable, content-addressed files: hard links make snapshots cheap.
    # The redb index is updated in place, so it must be a real copy.
    def link_or_copy(src: str, dst: str) -> None:
        if not src.endswith(".redb"):
            try:
                os.link(src, dst)
                return
            except OSError:
                pass
        shutil.copy2(src, dst)

    # shard-cache and shard-session beside the store are client-side scratch space, rebuilt by each reader.
    shutil.copytree(source / "xet" / "xorbs", target / "xet" / "xorbs", copy_function=link_or_copy)


def local_url(folder: Path) -> str:
    """The CAS URL that makes hf_xet use `folder` directly, with no HTTP."""
    return "local://" + str(folder.resolve())


# ---------------------------------------------------------------------------------------------------------------
# CAS folders
# ---------------------------------------------------------------------------------------------------------------


class CasStore:
    """Owns every local:// CAS folder: the master, one per write token, one snapshot per read token."""

    def __init__(self, root: Path) -> None:
        self.master = root / "master"
        self._writes = root / "write"
        self._reads = root / "read"
        self._scratch = root / "scratch"
        for folder in (self.master, self._writes, self._reads, self._scratch):
            folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # serializes every hf_xet call and master change in this process
        self._session = hf_xet.XetSession()
        self._ids = itertools.count(1)
        self._sizes: dict[str, int] = {EMPTY_HASH: 0}  # hashes the master can reconstruct
        self._staged: dict[str, tuple[Path, int]] = {}  # hash -> (write folder holding it, size)
        self._by_sha256: dict[str, str] = {}  # sha256 -> xet hash, for repo commits that name files by sha256
        self._parsed_shards: set[Path] = set()
        self._folders: list[tuple[float, Path]] = []  # (token expiry, folder) for write folders and snapshots

    @staticmethod
    def _connection(folder: Path) -> dict[str, Any]:
        # A local:// CAS never checks the token, but hf_xet wants one.
        return {"endpoint": local_url(folder), "token": "emulator", "token_expiry_unix_secs": int(time.time()) + 3600}

    def _download(self, folder: Path, files: Sequence[tuple[str, int, Path]]) -> None:
        with self._session.new_file_download_group(**self._connection(folder)) as group:
            for xet_hash, size, target in files:
                group.start_download_file(hf_xet.XetFileInfo(xet_hash, size), str(target))

    def size_of(self, xet_hash: str) -> int | None:
        """Size of content the master holds, or None."""
        with self._lock:
            return self._sizes.get(xet_hash)

    def new_write_folder(self, expires: float) -> Path:
        """A fresh, empty CAS folder for one write token."""
        with self._lock:
            self._prune()
            folder = self._writes / str(next(self._ids))
            folder.mkdir()
            self._folders.append((expires, folder))
            return folder

    def new_read_snapshot(self, expires: float) -> Path:
        """A private copy of the master CAS for one read token."""
        with self._lock:
            self._prune()
            folder = self._reads / str(next(self._ids))
            _snapshot(self.master, folder)
            self._folders.append((expires, folder))
            return folder

    def _prune(self) -> None:
        # Long benchmark runs hand out many tokens; drop folders well after their token expired.
        cutoff = time.time() - STALE_FOLDER_GRACE
        stale = {folder for expires, folder in self._folders if expires < cutoff}
        if not stale:
            return
        self._folders = [(e, f) for e, f in self._folders if f not in stale]
        for folder in stale:
            shutil.rmtree(folder, ignore_errors=True)
        # Forget what was staged: the next unknown hash rescans the folders that remain.
        self._staged.clear()
        self._parsed_shards.clear()

    def upload(self, blobs: Sequence[bytes]) -> list[tuple[str, int]]:
        """Store blobs in the master (one session, a few commits); return [(xetHash, size)]."""
        with self._lock:
            return self._upload_locked(blobs)

    def _upload_locked(self, blobs: Sequence[bytes]) -> list[tuple[str, int]]:
        if not blobs:
            return []
        results: list[tuple[str, int]] = []
        # Measured: reading a file back from a local CAS costs time proportional to its xorb, so one commit of
        # 50,000 files makes every later download ~7x slower. Small commits keep xorbs small for little cost.
        for start in range(0, len(blobs), MASTER_COMMIT_FILES):
            with self._session.new_upload_commit(**self._connection(self.master)) as commit:
                chunk = blobs[start : start + MASTER_COMMIT_FILES]
                handles = [commit.start_upload_bytes(blob, sha256=hf_xet.SKIP_SHA256) for blob in chunk]
            infos = [handle.result().xet_info for handle in handles]
            results += [(info.hash, info.file_size) for info in infos]
        self._sizes.update(results)
        return results

    def import_hashes(self, hashes: Sequence[str]) -> tuple[dict[str, int], dict[str, str]]:
        """Copy files that clients uploaded into their write folders into the master; return (sizes, errors)."""
        with self._lock:
            missing = {h for h in hashes if h not in self._sizes}
            if missing - self._staged.keys():
                self._scan_write_folders()
            errors = {h: "xetHash not found in any CAS handed out" for h in missing - self._staged.keys()}
            by_folder: dict[Path, list[str]] = {}
            for xet_hash in missing - errors.keys():
                by_folder.setdefault(self._staged[xet_hash][0], []).append(xet_hash)
            for folder, folder_hashes in by_folder.items():
                try:
                    self._copy_to_master(folder, folder_hashes)
                except Exception as err:  # one broken write folder must not fail the other operations
                    errors.update({h: f"could not copy from upload CAS: {err}" for h in folder_hashes})
            return {h: self._sizes[h] for h in hashes if h in self._sizes}, errors

    def xet_hash_of(self, sha256: str) -> str | None:
        """The xet hash of content a client uploaded with this sha256 (in a shard's metadata), or None."""
        with self._lock:
            if sha256 not in self._by_sha256:
                self._scan_write_folders()
            return self._by_sha256.get(sha256)

    def _scan_write_folders(self) -> None:
        for shard in self._writes.glob("*/xet/xorbs/shards/*.mdb"):
            if shard in self._parsed_shards:
                continue
            try:
                files = parse_shard_files(shard.read_bytes())
            except (OSError, ValueError, struct.error):
                continue  # half-written by a client still uploading: look again next time
            self._parsed_shards.add(shard)
            folder = shard.parents[3]
            for xet_hash, (size, sha256) in files.items():
                self._staged.setdefault(xet_hash, (folder, size))
                if sha256 is not None:
                    self._by_sha256.setdefault(sha256, xet_hash)

    def _copy_to_master(self, folder: Path, hashes: list[str]) -> None:
        scratch = self._scratch / uuid.uuid4().hex
        # The uploading process keeps its write folder's redb index open (and locked) until it exits,
        # so read from a snapshot of that folder rather than the folder itself.
        _snapshot(folder, scratch / "cas")
        try:
            self._download(scratch / "cas", [(h, self._staged[h][1], scratch / h) for h in hashes])
            blobs = [(scratch / h).read_bytes() for h in hashes]
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        for expected, (actual, _) in zip(hashes, self._upload_locked(blobs), strict=True):
            if expected != actual:
                raise RuntimeError(f"master CAS hashed {expected} as {actual}")

    def read(self, xet_hash: str, size: int) -> bytes:
        """Reconstruct a file's bytes from the master."""
        if size == 0:
            return b""
        with self._lock:
            scratch = self._scratch / uuid.uuid4().hex
            scratch.mkdir()
            try:
                self._download(self.master, [(xet_hash, size, scratch / "file")])
                return (scratch / "file").read_bytes()
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
