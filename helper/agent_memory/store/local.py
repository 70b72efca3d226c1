"""A folder store (`file:///abs/path`): the bucket layout on a local or shared drive.

Writes go to a temporary name in the destination folder and are then hard-linked into place, which
fails if the name exists: two machines on a shared drive can never overwrite each other's objects.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from pathlib import Path

from ..fsutil import make_dirs
from . import ObjectConflict, ObjectInfo, Store, StoreError, UnsafeObject

TMP_PREFIX = ".tmp-"


class FolderStore(Store):
    """Objects as files below `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uri = "file://" + str(root)

    def _file(self, path: str) -> Path:
        parts = path.split("/")
        if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
            raise StoreError("error", f"invalid object path {path!r}")
        return self.root.joinpath(*parts)

    def _reachable(self) -> None:
        if not self.root.is_dir():
            raise StoreError("offline", f"the folder store {self.root} is not there (unmounted drive?)")

    def put(self, path: str, data: bytes) -> None:
        self.put_many([(path, data)])

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        self._reachable()
        for path, data in objects:
            with _as_store_error():
                self._put_one(self._file(path), path, data)

    def _put_one(self, dest: Path, path: str, data: bytes) -> None:
        if dest.exists():
            self._require_same(dest, path, data)
            return
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f"{TMP_PREFIX}{secrets.token_hex(8)}"
        try:
            with open(tmp, "xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(tmp, dest)  # atomic and exclusive: fails if another writer got there first
            except FileExistsError:
                self._require_same(dest, path, data)
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                # filesystems without hard links: check, then rename (a narrow race we accept there)
                if dest.exists():
                    self._require_same(dest, path, data)
                else:
                    os.rename(tmp, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    @staticmethod
    def _require_same(dest: Path, path: str, data: bytes) -> None:
        if dest.read_bytes() != data:
            raise ObjectConflict(path)

    def list(self, prefix: str) -> list[ObjectInfo]:
        self._reachable()
        base = self._file(prefix.strip("/"))
        found = []
        with _as_store_error():
            for folder, dirs, files in os.walk(base):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in files:
                    if name.startswith("."):  # temporary files of writers in progress
                        continue
                    full = Path(folder) / name
                    found.append(ObjectInfo(full.relative_to(self.root).as_posix(), full.stat().st_size))
        return sorted(found, key=lambda info: info.path)

    def fetch(self, objects: list[ObjectInfo], dest: Path) -> None:
        self._reachable()
        with _as_store_error():
            for info in objects:
                source = self._file(info.path)
                if source.is_symlink() or not source.is_file():  # never follow a link out of the store
                    raise UnsafeObject(info.path)
                target = dest / info.path
                make_dirs(target.parent)  # owner-only when `dest` is in the cache
                shutil.copyfile(source, target)

    def holds(self, path: str, data: bytes) -> bool:
        self._reachable()
        dest = self._file(path)
        with _as_store_error():
            if not dest.exists():
                return False
            self._require_same(dest, path, data)
        return True

    def read(self, path: str) -> bytes | None:
        self._reachable()
        with _as_store_error():
            try:
                return self._file(path).read_bytes()
            except FileNotFoundError:
                return None


@contextlib.contextmanager
def _as_store_error():
    try:
        yield
    except StoreError:
        raise
    except PermissionError as exc:
        raise StoreError("auth", f"permission denied: {exc.filename}") from exc
    except OSError as exc:
        raise StoreError("error", f"{exc.strerror or exc} ({exc.filename})") from exc
