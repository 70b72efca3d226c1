"""The interface every store implements, and what it answers: objects, listings, freshness and failures."""

from __future__ import annotations

import builtins
import shlex
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path

from .. import commands

# what fixes a failure of each reason, in words of the Hub, the store with a network and a login (a folder store's
# failures of those reasons are its own kinds, `FolderMissing` and `FolderDenied`, which speak of the folder alone)
FIXES = {
    "auth": "restore this machine's access to the Hugging Face bucket (hf auth login, yourself, in your own terminal)",
    "offline": "check this machine's network",
    "error": commands.line("status") + " (it names the bucket and what failed last)",
}


class Unfollowable(Exception):
    """The feed cannot say what changed after this cursor (`reset`, unavailable, refused, too long, not
    understood): list instead. `reason` is one short word for the record, the message says more."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class Change:
    """The last state of one path after a replay: deleted, or its size and xet hash where the feed gave them
    (an `update` carries only what changed: None means not told)."""

    __slots__ = ("path", "deleted", "size", "hash", "added")

    def __init__(self, path: str) -> None:
        self.path = path
        self.deleted = False
        self.size: int | None = None
        self.hash: str | None = None
        self.added = False  # an `add` was seen: size and hash are complete

    def __repr__(self) -> str:
        return f"Change({self.path!r}, deleted={self.deleted}, size={self.size})"


class Replay:
    """What changed below a folder after a cursor, and the cursor that stands after it (None: never changed)."""

    def __init__(self, cursor: str | None, changes: dict[str, Change]) -> None:
        self.cursor = cursor
        self.changes = changes


class ObjectInfo:
    """One object in a store: its path, its size in bytes, its content hash when the listing gives one (see
    `Store.hashes`), and a backend handle that saves a lookup."""

    __slots__ = ("path", "size", "hash", "ref")

    def __init__(self, path: str, size: int, ref: object = None, hash: str | None = None) -> None:
        self.path = path
        self.size = size
        self.hash = hash
        self.ref = ref

    def __repr__(self) -> str:
        return f"ObjectInfo({self.path!r}, {self.size})"


class StoreError(Exception):
    """A store operation failed; `reason` is `offline`, `auth` or `error` (the contract's sync reasons), and
    `lasting` says whether it is an outage (see `outage`).

    The error is told to the user in one place, at the command's boundary (`failures`); on its way there, the
    operation that met it may say what it was doing (`during`).
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.what: str | None = None
        self.lasting = False  # a failure that will not clear within seconds (refused, timed out, 5xx): an outage

    def during(self, what: str) -> None:
        """Say what failed because of this error (the first to say so wins: it is the closest)."""
        self.what = self.what or what

    @property
    def fix(self) -> str:
        """What fixes it, in words of the store that failed; a `Next:` line adds the command to run again."""
        return FIXES.get(self.reason, FIXES["error"])


class FolderMissing(StoreError):
    """A folder store's folder is not there: its drive is not mounted, or the folder was moved away."""

    def __init__(self, root: Path) -> None:
        super().__init__("offline", f"the folder store {root} is not there")
        self.root = root

    @property
    def fix(self) -> str:
        return f"mount the drive that holds {self.root} (or move the folder back there)"  # what waits is planned here


class FolderSilent(StoreError):
    """A folder store's folder that does not answer at all: a network share or mount whose server went away (its
    calls block in the kernel). `lasting`: an outage (`outage`)."""

    def __init__(self, root: Path, detail: str) -> None:
        super().__init__("offline", detail)
        self.root = root
        self.lasting = True

    @property
    def fix(self) -> str:
        where = shlex.quote(str(self.root))
        return f"bring back the share or drive that holds {self.root} (or unmount it: umount -l {where})"


class FolderDenied(StoreError):
    """A file or folder of a folder store that this user may not open."""

    def __init__(self, path: str) -> None:
        super().__init__("auth", f"permission denied: {path}")
        self.path = path

    @property
    def fix(self) -> str:
        where = shlex.quote(self.path)
        return f"make {where} yours to read and write again (ls -ld {where} shows its owner and mode)"


class NoCredentials(StoreError):
    """This machine has no Hugging Face credentials, or the Hub refused them."""

    def __init__(self, detail: str) -> None:
        super().__init__("auth", detail)


class BucketMissing(StoreError):
    """The bucket does not exist, or these credentials cannot see it."""

    def __init__(self, uri: str) -> None:
        super().__init__("auth", f"the bucket {uri} does not exist, or this account cannot access it")
        self.uri = uri


class BucketPublic(StoreError):
    """The bucket is public: agent-memory uses private buckets only, and never changes a bucket's visibility."""

    def __init__(self, uri: str) -> None:
        super().__init__("auth", f"the bucket {uri} is public")
        self.uri = uri


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
        return f"rm {shlex.quote(self.local)} (agent-memory never writes such an entry), then run the command again"


class OversizedObject(StoreError):
    """An object larger than what it may be (a note file over the cache's 4 MiB, a skill file over its 5 MiB), as
    its listing, the change feed or a lookup gives its size: it is never downloaded, and the rest goes on.

    `path` is its store path; `next_step` the one command that clears it (removing it from the store, where it
    cannot be read as what it claims to be).
    """

    def __init__(self, path: str, size: int, limit: int, what: str, next_step: str) -> None:
        super().__init__(
            "error", f"{path} is {size} bytes, more than the {limit} a {what} may have, so it was not read"
        )
        self.path = path
        self.size = size
        self.next_step = next_step


def oversized(store: Store, path: str, size: int, limit: int) -> OversizedObject:
    """The refusal of the object at `path` of `size` bytes, over `limit`, named by what the layout keeps there."""
    what = (
        "note"
        if path.startswith("projects/") and "/notes/" in path
        else "skill file"
        if path.startswith("skills/")
        else "file"
    )
    return OversizedObject(path, size, limit, what, store.removal(path))


class Listing(list[ObjectInfo]):
    """What `Store.list` returns: the objects, and in `skipped` those left out because they cannot be trusted
    (UnsafeObject: a folder store's links), so that one bad object never stops the others from being read."""

    def __init__(self, objects: Iterable[ObjectInfo] = (), skipped: Iterable[UnsafeObject] = ()) -> None:
        super().__init__(objects)
        self.skipped = list(skipped)


class Freshness:
    """How a local copy (the cache of a project, the index of skills) stands against its store after a refresh:
    fresh, with what was skipped (unsafe or oversized objects) and the cached copies dropped because the store no
    longer holds them (`gone`, their paths); stale, with the store's error; or not asked (`offline`). `kind` says how
    a fresh copy was brought up to date: `changes` (the store's change feed) or `listing` (all of it)."""

    __slots__ = ("error", "skipped", "gone", "offline", "kind")

    def __init__(
        self,
        *,
        error: StoreError | None = None,
        skipped: Iterable[UnsafeObject | OversizedObject] = (),
        gone: Iterable[str] = (),
        offline: bool = False,
        kind: str | None = None,
    ) -> None:
        self.error = error
        self.skipped = list(skipped)
        self.gone = sorted(gone)
        self.offline = offline
        self.kind = kind

    @property
    def fresh(self) -> bool:
        """Whether the copy matched the store just now."""
        return self.error is None and not self.offline


class Store(ABC):
    """A bucket-like store of immutable objects addressed by `/`-separated paths."""

    uri: str
    hashed = True  # its listing and change feed give each object's content hash (a folder store's give none)
    direct = False  # its objects are read where they are (`read_many`), not downloaded; such a store is not hashed

    @abstractmethod
    def ensure(self, *, create: bool) -> bool:
        """Make sure the store exists and is private; with `create`, create it (private) if it is missing.

        True if it was created now. BucketMissing if it is missing (and not to be created), BucketPublic (or, for a
        folder store, AccessError) if others can read it. The visibility of an existing store is never changed.
        """

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
    def fetch(self, objects: builtins.list[ObjectInfo], dest: Path) -> None:
        """Download each object, in order, to `dest / object.path` (the caller makes the result atomic).

        An object found unsafe only now (it changed after the listing) raises UnsafeObject, after the objects
        before it were copied and before any after it.
        """

    def read_many(self, objects: builtins.list[ObjectInfo]) -> Iterator[tuple[ObjectInfo, bytes]]:
        """Of a `direct` store only: each object with its bytes, in order, read where it is: at most one byte more
        than its listed size (the caller finds one that is not that size: it changed since the listing). An object
        found unsafe only now raises UnsafeObject, after the objects before it were given and before any after it.
        """
        raise NotImplementedError(f"{self.uri} is read by downloads (`fetch`)")

    @abstractmethod
    def holds(self, path: str, data: bytes) -> bool:
        """Whether the object at `path` is exactly `data` (False if absent; ObjectConflict if different)."""

    @abstractmethod
    def read(self, path: str, limit: int | None = None) -> bytes | None:
        """The bytes at `path`, straight from the store, or None if there is no such object; OversizedObject,
        before anything is downloaded, if it is larger than `limit`."""

    def changes(self, cursor: str | None, prefix: str) -> Replay:
        """What changed below the folder `prefix` after `cursor` (with None: nothing, only the cursor that stands
        now, None if the store never changed), in one request. Unfollowable when the store cannot say: no feed, a
        cursor too old for it, a feed that fails or is damaged; the caller lists instead."""
        raise Unfollowable("unsupported", f"{self.uri} has no change feed")

    def removal(self, path: str) -> str:
        """The command line that removes the object at `path` from the store (for one that can never be read)."""
        bucket = self.uri.removeprefix("hf://buckets/")
        return f"hf buckets rm {shlex.quote(bucket + '/' + path)}"

    def updated_at(self) -> str | None:
        """When the store last changed, as the store tells it (compared for equality only, never as a time), in
        one request; None if it cannot tell (a folder store)."""
        return None

    def hashes(self, files: builtins.list[Path]) -> builtins.list[str | None]:
        """For each local file, the hash that `list` would give an object with its bytes (None: no such hash).

        A folder store's listing gives none: hashing would read every object on every refresh, which is the
        cost a cache exists to avoid. Its objects are written once, by an exclusive link, and never rewritten.
        """
        return [None] * len(files)

    def close(self) -> None:  # noqa: B027 (a backend that sets nothing up has nothing to release)
        """Release what opening the store set up (nothing, unless the backend says otherwise)."""
