"""The folders of a folder store, reached from its root one name at a time and never through a link.

Each name is looked up in its folder's open descriptor (`openat` and friends, with `O_NOFOLLOW`), so nothing can
be swapped in between a check and its use; where the platform has no such calls (Windows), each name is checked
with lstat before it is used, a narrow race we accept there. A file is trusted only as opened: a regular file
with no other hard link (see `Folder.why_not`). Anything else is `Untrusted`, with why.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from ..fsutil import DIR_MODE, FILE_MODE

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from collections.abc import Callable

TMP_PREFIX = ".tmp-"
_LINK = "is a symbolic link (never followed out of the folder store)"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO must not block the open that refuses it
# names looked up in an open folder (POSIX); elsewhere (Windows) each name is checked with lstat before use
_AT = {os.open, os.mkdir, os.link, os.unlink, os.rename, os.stat} <= os.supports_dir_fd and os.scandir in os.supports_fd


class Untrusted(Exception):
    """An entry below the root that cannot be trusted; `where` is its path relative to the root."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(why)
        self.where = where
        self.why = why


class Folder:
    """A folder of the store, reached from the root one name at a time, never through a link."""

    def __init__(self, path: str, where: str, fd: int | None) -> None:
        self.path = path  # on disk
        self.where = where  # relative to the store's root ("" for the root)
        self.fd = fd
        self._temporaries: tuple[tuple[int, int, int], set[tuple[int, int]]] | None = None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _name(self, name: str) -> str:
        return name if _AT else os.path.join(self.path, name)

    def _kw(self) -> dict[str, int | None]:
        return {"dir_fd": self.fd} if _AT else {}

    def relative(self, name: str) -> str:
        return f"{self.where}/{name}" if self.where else name

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self._name(name), follow_symlinks=False, **self._kw())

    def entries(self) -> list[os.DirEntry[str]]:
        with os.scandir(self.fd if _AT else self.path) as found:
            return list(found)

    def child(self, name: str, *, create: bool = False) -> Folder:
        """The folder `name` in this one (created 0700 if `create`); Untrusted if it is a link or not a folder."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(self._name(name), DIR_MODE, **self._kw())  # the umask can only take bits away
        path = os.path.join(self.path, name)
        if not _AT:
            self._require_folder(name, self.lstat(name))
            return Folder(path, self.relative(name), None)
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):  # how a link refuses O_NOFOLLOW | O_DIRECTORY
                raise
            self._require_folder(name, self.lstat(name))
            raise
        return Folder(path, self.relative(name), fd)

    def _require_folder(self, name: str, info: os.stat_result) -> None:
        if stat.S_ISLNK(info.st_mode):
            raise Untrusted(self.relative(name), _LINK)
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", os.path.join(self.path, name))

    def open_file(self, name: str) -> int:
        """A descriptor for reading the file `name`, trusted as opened (see `why_not`); Untrusted otherwise."""
        return self._open_trusted(name, os.O_RDONLY)[0]

    def read_file(self, name: str, size: int) -> bytes:
        """The bytes of the file `name`, trusted as opened (Untrusted otherwise), which should hold `size` bytes: all
        of them, read at once, if it holds that many as opened; else up to `size + 1` of them, read until its end, so
        that the caller finds it is not that size, and never more."""
        fd, info = self._open_trusted(name, os.O_RDONLY)
        try:
            data = os.read(fd, size + 1)
            if info.st_size != size or len(data) != size:  # not the size expected, or a short read: up to its end
                while len(data) <= size and (chunk := os.read(fd, size + 1 - len(data))):
                    data += chunk
            return data
        finally:
            os.close(fd)

    def open_append(self, name: str) -> int:
        """A descriptor for appending to the file `name` (FileNotFoundError if there is none), trusted as opened;
        Untrusted otherwise."""
        return self._open_trusted(name, os.O_WRONLY | os.O_APPEND)[0]

    def _open_trusted(self, name: str, flags: int) -> tuple[int, os.stat_result]:
        if _AT:
            try:
                fd = os.open(name, flags | _NOFOLLOW | _NONBLOCK, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise Untrusted(self.relative(name), _LINK) from None
                raise
        else:
            before = self.lstat(name)
            if stat.S_ISLNK(before.st_mode) or not stat.S_ISREG(before.st_mode):
                raise Untrusted(self.relative(name), self.why_not(name, before) or "is not a regular file")
            fd = os.open(self._name(name), flags | getattr(os, "O_BINARY", 0))
        try:
            info = os.fstat(fd)
            why = self.why_not(name, info, lambda: os.fstat(fd))
            if why is not None:
                raise Untrusted(self.relative(name), why)
        except BaseException:
            os.close(fd)
            raise
        return fd, info

    def why_not(self, name: str, info: os.stat_result, again: Callable[[], os.stat_result] | None = None) -> str | None:
        """Why the entry `name` with `info` cannot be trusted as an object, or None if it can."""
        if stat.S_ISLNK(info.st_mode):
            return _LINK
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file"
        if info.st_nlink > 1 and not self._writers_temporary(info):
            # `put` links a finished temporary into place and then unlinks it: a reader in between sees two
            # links. The other one is then that temporary, in this same folder, so the object is accepted (as
            # is one whose writer was killed in between); and a temporary unlinked while we looked shows in a
            # second stat, taken after the search. So a concurrent save is not refused. Only where a folder's
            # times are too coarse to show a temporary made since the last scan can a refresh skip such an
            # object: it is then neither fetched nor dropped, and the next refresh takes it.
            now = (again or (lambda: self.lstat(name)))()
            if now.st_nlink > 1:
                return f"has {now.st_nlink} hard links (another name may be a file outside the folder store)"
        return None

    def _writers_temporary(self, info: os.stat_result) -> bool:
        """Whether the file's only other name is a writer's temporary beside it (see `put`).

        The temporaries are found once per folder, and again only when the folder has changed since: a tree of
        hard-linked copies (a `cp -al` backup) costs one scan, not one per file.
        """
        if info.st_nlink != 2:
            return False
        key = (info.st_dev, info.st_ino)
        folder = os.fstat(self.fd) if self.fd is not None else os.stat(self.path)
        stamp = (folder.st_mtime_ns, folder.st_ctime_ns, folder.st_size)
        if self._temporaries is None or (key not in self._temporaries[1] and stamp != self._temporaries[0]):
            found = set()
            for entry in self.entries():
                if entry.name.startswith(TMP_PREFIX):
                    with contextlib.suppress(OSError):  # unlinked meanwhile
                        other = entry.stat(follow_symlinks=False)
                        found.add((other.st_dev, other.st_ino))
            self._temporaries = (stamp, found)
        return key in self._temporaries[1]

    def create_temporary(self, data: bytes) -> str:
        """A new owner-only file holding `data` in this folder; its name."""
        name = f"{TMP_PREFIX}{os.urandom(8).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_BINARY", 0)
        fd = os.open(self._name(name), flags, FILE_MODE, **self._kw())
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        return name

    def link(self, source: str, target: str) -> None:
        if _AT:
            os.link(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        else:
            os.link(self._name(source), self._name(target))

    def rename(self, source: str, target: str) -> None:
        if _AT:
            os.rename(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.rename(self._name(source), self._name(target))

    def replace(self, source: str, target: str) -> None:
        """Rename `source` to `target` over what is there (that name only: a link there is replaced, never followed),
        on every platform (`rename` refuses an existing target on Windows)."""
        if _AT:
            os.replace(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(self._name(source), self._name(target))

    def unlink(self, name: str) -> None:
        os.unlink(self._name(name), **self._kw())


def open_root(root: str) -> Folder:
    """The store's root, trusted as configured (it may be reached through links): only the names below are the
    store's."""
    return Folder(root, "", os.open(root, os.O_RDONLY | _DIRECTORY) if _AT else None)
