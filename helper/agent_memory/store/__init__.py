"""Object stores behind one small interface: a Hugging Face bucket, or a local folder with the same layout.

Objects are immutable and append-only: callers write fresh paths, and check `holds()` before any rewrite.
Backends import their heavy libraries lazily, so that offline commands never pay for them.
"""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path

from .. import names
from ..errors import AccessError, AgentMemoryError, ContentRefused
from ..names import FILE_SCHEME, folder_path, hub_id


class ObjectInfo:
    """One object in a store: its path, its size in bytes, its content hash when the listing gives one (see
    `Store.hashes`), and a backend handle that saves a lookup."""

    __slots__ = ("path", "size", "hash", "ref")  # a plain class: dataclasses would slow every command's start-up

    def __init__(self, path: str, size: int, ref: object = None, hash: str | None = None) -> None:
        self.path = path
        self.size = size
        self.hash = hash
        self.ref = ref

    def __repr__(self) -> str:
        return f"ObjectInfo({self.path!r}, {self.size})"


class StoreError(Exception):
    """A store operation failed; `reason` is `offline`, `auth` or `error` (the contract's sync reasons)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class ObjectConflict(StoreError):
    """An object already exists at the path with different bytes: we never overwrite it."""

    def __init__(self, path: str) -> None:
        super().__init__("error", f"a different object already exists at {path}; it was not overwritten")


class UnsafeObject(StoreError):
    """An object of a folder store that could lead out of it: a symbolic link anywhere in its path, a file with
    another hard link, anything but a regular file. It is never read or copied.

    `path` is its store path (a folder's, when the link is a folder on the way); `local` its path on disk.
    """

    def __init__(self, path: str, why: str, local: str) -> None:
        super().__init__("error", f"{path} {why}, so it was not read")
        self.path = path
        self.local = local

    @property
    def next_step(self) -> str:
        """The one action that clears it: removing that name, which loses no byte (the file is elsewhere)."""
        import shlex  # only to word an error

        return f"rm {shlex.quote(self.local)} (agent-memory never writes such an entry), then run the command again"


class Listing(list):
    """What `Store.list` returns: the objects, and in `skipped` those left out because they cannot be trusted
    (UnsafeObject: a folder store's links), so that one bad object never stops the others from being read."""

    def __init__(self, objects: Iterable[ObjectInfo] = (), skipped: Iterable[UnsafeObject] = ()) -> None:
        super().__init__(objects)
        self.skipped = list(skipped)


class Store(ABC):
    """A bucket-like store of immutable objects addressed by `/`-separated paths."""

    uri: str

    @abstractmethod
    def put(self, path: str, data: bytes) -> None:
        """Store `data` at `path`.

        A folder store refuses to replace other bytes (ObjectConflict) and accepts the same bytes again; the Hub
        cannot refuse an overwrite, so callers write fresh paths or check `holds()` first.
        """

    @abstractmethod
    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        """Store several objects, in order, in as few requests as the backend allows."""

    @abstractmethod
    def list(self, prefix: str) -> Listing:
        """Every object below the folder `prefix`, complete or not at all (a failed page raises), but for those
        that cannot be trusted, which are left out and named in `skipped`."""

    @abstractmethod
    def fetch(self, objects: list[ObjectInfo], dest: Path) -> None:
        """Download each object, in order, to `dest / object.path` (the caller makes the result atomic).

        An object found unsafe only now (it changed after the listing) raises UnsafeObject, after the objects
        before it were copied and before any after it.
        """

    @abstractmethod
    def holds(self, path: str, data: bytes) -> bool:
        """Whether the object at `path` is exactly `data` (False if absent; ObjectConflict if different)."""

    @abstractmethod
    def read(self, path: str) -> bytes | None:
        """The bytes at `path`, straight from the store, or None if there is no such object."""

    def hashes(self, files: list[Path]) -> list[str | None]:
        """For each local file, the hash that `list` would give an object with its bytes (None: no such hash).

        A folder store's listing gives none: hashing would read every object on every refresh, which is the
        cost a cache exists to avoid. Its objects are written once, by an exclusive link, and never rewritten.
        """
        return [None] * len(files)


def user_error(failure: StoreError, what: str, next_step: str) -> AgentMemoryError:
    """The one translation of a store failure for the user: `what` failed and why; exit 4 for access, 5 for an
    object that is not to be trusted (with the action that clears it), else 1."""
    if isinstance(failure, UnsafeObject):
        return ContentRefused(f"{what}: {failure.detail}.", next_step=failure.next_step)
    error = AccessError if failure.reason == "auth" else AgentMemoryError
    return error(f"{what}: {failure.detail}.", next_step=next_step)


def landed_anyway(store: Store, failure: StoreError, path: str, data: bytes) -> bool:
    """After a failed write whose outcome may be unknown (the answer was lost), read the object back to see."""
    if failure.reason == "auth":  # refused: nothing was written
        return False
    try:
        return store.holds(path, data)
    except StoreError:
        return False


def parse_bucket(spec: str) -> str:
    """Canonical URI for a bucket given as `owner/name`, `hf://buckets/owner/name` or `file:///abs/path`."""
    uri = names.bucket(spec)
    if (folder := folder_path(uri)) is not None and folder.exists():
        return FILE_SCHEME + str(folder.resolve())  # one URI per folder, whatever symlinks led to it
    return uri


def check_private(uri: str) -> None:
    """For a folder store, AccessError (saying the command that fixes it) unless only this user can open it.

    A folder that others can read leaks private notes; one that others can write lets them plant notes or skills
    that agents will trust. Like a public bucket, it is refused wherever the store is used, and its permissions
    are never changed for the user. One stat, so every command can afford it. A folder that is not there passes:
    using it reports an unmounted drive. Hub buckets are checked by bootstrap (private, never made public).
    """
    folder = folder_path(uri)
    if folder is None or os.name == "nt":  # Windows has no mode bits to check
        return
    try:
        info = os.stat(folder)
    except OSError:
        return
    if not (info.st_uid != os.getuid() or info.st_mode & 0o077):
        return
    import shlex  # only to word an error

    quoted = shlex.quote(str(folder))
    if info.st_uid != os.getuid():
        raise AccessError(
            f"The folder store {folder} belongs to another user (uid {info.st_uid}), so agent-memory will not use it.",
            next_step="use a folder of your own: agent-memory config set bucket file:///ABSOLUTE/PATH",
        )
    raise AccessError(
        f"The folder store {folder} can be read or written by other users (mode {stat.filemode(info.st_mode)}), "
        "so agent-memory will not use it; its permissions were not changed.",
        next_step=f"chmod 700 {quoted} (if only you should use it), then run the same command again",
    )


def open_store(uri: str, *, deadline: float | None = None) -> Store:
    """The store for a canonical bucket URI; `deadline` bounds each call (seconds) for network stores.

    A folder store is checked first (`check_private`): every command that uses one goes through here.
    """
    if (folder := folder_path(uri)) is not None:
        from .local import FolderStore

        check_private(uri)
        return FolderStore(folder)
    from .hub import HubStore

    return HubStore(hub_id(uri) or "", deadline=deadline)
