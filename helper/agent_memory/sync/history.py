"""What this machine knows of one runtime's synced files in the bucket: every version seen (or written here), and
from them each file's heads, ancestors and common bases.

Kept in `<state>/sync/<bucket key>/<runtime>-<scope>/`: `versions.json` (each version's fields, the objects
refused and why, and the bucket's `updatedAt` when it was last listed) and `texts/<hash>`, each text once. A
refresh asks the bucket whether anything changed (the Hub's `updatedAt`: one request), lists the scope's folder
only then (a folder store: always, it is a local walk), and downloads only the versions it has not seen.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import KeysView
from pathlib import Path

from .. import paths
from ..contents import sha256
from ..fsutil import read_own, read_own_or_none, scratch_folder, write_atomic, write_json_atomic
from ..store.base import ObjectInfo, Store, StoreError
from . import versions
from .versions import Refused, Version

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import HistoryRecord, VersionMeta

MAX_VERSIONS = 20_000  # versions of one scope this machine keeps track of; more are refused, with why
MAX_FILES = 1000  # distinct files of one scope; a version of another file beyond them is refused
MAX_LISTED = 100_000  # objects in one scope's folder of the bucket; more: the scope is not synced, and says why
MAX_NEW = 2000  # versions downloaded in one refresh; the next refresh goes on from there
_RECORD_MAX = 64 * 1024 * 1024


class History:
    """The versions of one runtime's files for one scope, as this machine knows them."""

    def __init__(self, bucket: str, runtime: str, scope: str) -> None:
        self.runtime = runtime
        self.scope = scope
        self.folder = self.folder_of(bucket, runtime, scope)
        self._known = read_own_or_none(
            self.folder / "versions.json", _RECORD_MAX
        )  # the record's bytes as last read or written
        record = _read(self._known)
        self.versions: dict[str, VersionMeta] = record.get("versions", {})
        self.objects: dict[str, str] = record.get("objects", {})  # object path -> version id, or "" if refused
        self.refused: dict[str, str] = record.get("refused", {})  # object path -> why
        self.updated_at: str | None = record.get("updated_at")
        # when the last refresh that learned the scope whole began (POSIX time): a feed follower that followed the
        # bucket from before then, and saw nothing change in the scope since, stands for asking it (`store.follow`)
        checked = record.get("checked_at")
        self.checked_at = float(checked) if isinstance(checked, (int, float)) and checked is not True else None
        # version id -> the versions that name it as a base (of any file: heads() keeps those of the same file),
        # made once and kept up to date by add(): a refresh adds thousands of versions, one at a time
        self._children: dict[str, set[str]] | None = None
        self._by_path: dict[str, list[VersionMeta]] | None = None  # path -> its versions

    @staticmethod
    def folder_of(bucket: str, runtime: str, scope: str) -> Path:
        """Where this machine keeps what it knows of one scope of `bucket`."""
        return paths.state_dir() / "sync" / paths.bucket_key(bucket) / f"{runtime}-{scope}"

    def save(self) -> None:
        """Write the record (the caller holds the scope's lock)."""
        self._known = write_json_atomic(
            self.folder / "versions.json",
            {
                "versions": self.versions,
                "objects": self.objects,
                "refused": self.refused,
                "updated_at": self.updated_at,
                "checked_at": self.checked_at,  # last: a refresh that learned nothing changes this alone
            },
            known=self._known,
            volatile="checked_at",
        )

    def refresh(self, store: Store) -> int:
        """Learn the versions the bucket has and this machine has not seen; how many were new (StoreError if the
        bucket fails: what is known stays known)."""
        started = time.time()
        stamp = store.updated_at()
        if stamp is not None and stamp == self.updated_at:
            self.checked_at = started
            return 0  # nothing in the bucket changed since the last listing
        found, whole = self._learn(store, versions.prefix(self.runtime, self.scope))
        self.updated_at = stamp if whole else None
        self.checked_at = started if whole else None
        self.save()
        return found

    def learn(self, store: Store, path: str) -> int:
        """Learn the versions of one file that the bucket has (one listing of that file's folder, not the scope's):
        how `sync history` finds a file that other machines synced and this one does not know. How many were new
        (StoreError if the bucket fails); the next refresh still lists the whole scope."""
        found, _whole = self._learn(store, f"{versions.prefix(self.runtime, self.scope)}/{versions.path_key(path)}")
        self.save()
        return found

    def _learn(self, store: Store, folder: str) -> tuple[int, bool]:
        """Download the versions below `folder` not seen yet: how many were new, and whether that was all of them."""
        listing = store.list(folder)
        if len(listing) > MAX_LISTED:  # bounded work whatever the bucket holds: nothing of it is trusted
            raise StoreError("error", f"{folder} holds more than {MAX_LISTED} objects")
        for unsafe in listing.skipped:
            self.refused[unsafe.path] = unsafe.detail
        new = [info for info in listing if info.path not in self.objects and info.path not in self.refused]
        new = new[:MAX_NEW]  # bounded work per command: the next refresh goes on from there
        return self._download(store, new), len(new) < MAX_NEW

    def learn_listed(self, store: Store, listing: list[ObjectInfo]) -> int:
        """Download the versions of this scope in `listing` (a listing of a wider folder, already made) not seen
        yet: how many were new. Bounded as a refresh is."""
        new = [info for info in listing if info.path not in self.objects and info.path not in self.refused]
        found = self._download(store, new[:MAX_NEW])
        self.save()
        return found

    def _download(self, store: Store, new: list[ObjectInfo]) -> int:
        small = []
        for info in new:
            if info.size > versions.MAX_OBJECT:
                self._refuse(info.path, f"it is larger than {versions.MAX_OBJECT} bytes")
            else:
                small.append(info)
        if not small:
            return 0
        found = 0
        with scratch_folder(self.folder, ".download-") as staging:
            store.fetch(small, staging)
            for info in small:
                try:
                    data = read_own(staging / info.path, versions.MAX_OBJECT)
                except OSError:
                    self._refuse(info.path, "it could not be read back as a regular file")
                    continue
                try:
                    version = versions.decode(info.path, data, self.runtime, self.scope)
                    self._check_room(version)
                except Refused as exc:
                    self._refuse(info.path, str(exc))
                    continue
                self.add(version, info.path)
                found += 1
        return found

    def _check_room(self, version: Version) -> None:
        if len(self.versions) >= MAX_VERSIONS:
            raise Refused(f"this machine already tracks {MAX_VERSIONS} versions of this folder")
        if version.path not in self.paths() and len(self.paths()) >= MAX_FILES:
            raise Refused(f"the folder already has {MAX_FILES} synced files")
        if version.id in self.versions and self.versions[version.id]["path"] != version.path:
            raise Refused("another file already has a version with its id")

    def _refuse(self, object_name: str, why: str) -> None:
        self.refused[object_name] = why

    def add(self, version: Version, object_name: str | None = None) -> None:
        """Record a version (read from the bucket, or made here) and keep its text."""
        if version.text is not None and version.hash is not None:  # (a text always has its hash)
            file = self.folder / "texts" / version.hash
            if not file.is_file():
                write_atomic(file, version.text.encode("utf-8"))
        meta = version.meta()
        known = self.versions.get(version.id)
        self.versions[version.id] = meta
        self.objects[object_name or versions.object_path(self.runtime, self.scope, version)] = version.id
        if self._by_path is not None:  # kept up to date: a refresh adds thousands, one at a time
            if known is not None:  # the same version again: listed once
                self._by_path[known["path"]].remove(known)
            self._by_path.setdefault(version.path, []).append(meta)
        if self._children is not None:
            self._link(meta)

    def paths(self) -> KeysView[str]:
        """Every file that has a version."""
        return self._paths_map().keys()

    def of(self, path: str) -> list[VersionMeta]:
        """The versions of `path`, in the order of their ids."""
        return sorted(self._paths_map().get(path, []), key=lambda m: m["id"])

    def _paths_map(self) -> dict[str, list[VersionMeta]]:
        if self._by_path is None:
            self._by_path = {}
            for meta in self.versions.values():
                self._by_path.setdefault(meta["path"], []).append(meta)
        return self._by_path

    def text(self, version_id: str) -> str | None:
        """The text of a version (None: a tombstone); Refused if its kept text is gone or changed."""
        meta = self.versions[version_id]
        if meta["hash"] is None:
            return None
        try:
            data = read_own(self.folder / "texts" / meta["hash"], versions.MAX_OBJECT)
        except OSError:
            raise Refused(f"the kept text of version {version_id} is missing") from None
        if sha256(data) != meta["hash"]:
            raise Refused(f"the kept text of version {version_id} was changed")
        return data.decode("utf-8")

    def heads(self, path: str) -> list[str]:
        """The current versions of `path`: those no other version of it is based on (two or more: it diverged)."""
        children = self._child_map()
        return sorted(
            meta["id"]
            for meta in self.of(path)
            if not any(self.versions[child]["path"] == path for child in children.get(meta["id"], ()))
        )

    def ancestors(self, version_id: str) -> set[str]:
        """`version_id` and every version it is based on, as far as this machine knows them."""
        return self._reach([version_id])

    def common_base(self, one: str, other: str) -> str | None:
        """The nearest version both descend from (None: they share none); the newest id where several are as near
        (criss-cross merges). Linear in the versions walked: each is visited at most three times."""
        common = self.ancestors(one) & self.ancestors(other)
        # the nearest: those no other common version descends from. Everything below a common version is common
        # too, so one walk down from the bases of all of them marks every one that is not nearest.
        below = self._reach([base for version in common for base in self.versions[version]["bases"]])
        return max(common - below, default=None)

    def _reach(self, starts: list[str]) -> set[str]:
        """`starts` and every version they are based on, each walked once (no recursion: chains are long)."""
        seen: set[str] = set()
        todo = list(starts)
        while todo:
            current = todo.pop()
            if current in seen or current not in self.versions:
                continue
            seen.add(current)
            todo.extend(self.versions[current]["bases"])
        return seen

    def _child_map(self) -> dict[str, set[str]]:
        if self._children is None:
            self._children = {}
            for meta in self.versions.values():
                self._link(meta)
        return self._children

    def _link(self, meta: VersionMeta) -> None:
        """Record `meta` as a child of each of its bases, whether that base is known yet or not (a version may
        arrive before the one it is based on)."""
        assert self._children is not None  # (made before the first link: `_child_map`, `add`)
        for base in meta["bases"]:
            self._children.setdefault(base, set()).add(meta["id"])


def _read(raw: bytes | None) -> HistoryRecord:
    """The record, `{}` when missing; a record that is not ours (damaged, a link) is started again: the bucket
    still has every version, and the next refresh lists it whole."""
    with contextlib.suppress(ValueError):
        value = json.loads(raw.decode("utf-8")) if raw is not None else None
        if isinstance(value, dict) and _well_formed(value):
            return value  # type: ignore[return-value]  # _well_formed has just held its shape
    return {}


def _well_formed(record: dict[str, object]) -> bool:
    found = record.get("versions")
    if not (isinstance(found, dict) and isinstance(record.get("objects"), dict)):
        return False
    if not isinstance(record.get("refused", {}), dict):
        return False
    return all(
        isinstance(meta, dict)
        and meta.get("id") == key
        and isinstance(meta.get("path"), str)
        and isinstance(meta.get("bases"), list)
        and isinstance(meta.get("hash"), (str, type(None)))
        for key, meta in found.items()
    )
