"""A FUSE filesystem that passes everything through to a real folder until it is told to hang, then never answers
again: the way a hard NFS mount behaves when its server goes away (a call into it blocks in the kernel, and no
signal or timeout of the caller's ends it).

Run as a process (`HungMount`), since the calls that hang are answered by it: `python hung_mount.py SOURCE MOUNT
SWITCH`; while the file SWITCH exists, every operation blocks. `stop` ends the process, after which the
kernel fails the calls still waiting (ENOTCONN), and unmounts it.

mfusepy (ctypes bindings for libfuse 3, installed only for the tests) is its one dependency; a machine without
/dev/fuse, fusermount3 or libfuse 3 cannot run it (`missing` says why).
"""

from __future__ import annotations

import ctypes.util
import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def missing() -> str | None:
    """Why a hung mount cannot be made on this machine, None if it can."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (no FUSE in this kernel or container)"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (Debian: apt-get install fuse3)"
    if ctypes.util.find_library("fuse3") is None:
        return "libfuse 3 is not installed (Debian: apt-get install libfuse3-3)"
    try:
        import mfusepy  # noqa: F401
    except ImportError:
        return "mfusepy is not installed (pip install mfusepy)"
    return None


class HungMount:
    """A pass-through mount of `source` at `mount`, hung by `hang()`; `stop()` ends it."""

    def __init__(self, source: Path, mount: Path) -> None:
        self.source, self.mount = source, mount
        self.switch = source.parent / (source.name + ".hang")
        mount.mkdir(mode=0o700, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(source), str(mount), str(self.switch)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not os.path.ismount(mount):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the FUSE mount did not start: {self.process.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)

    def hang(self) -> None:
        self.switch.touch()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        subprocess.run(["fusermount3", "-u", "-z", str(self.mount)], capture_output=True)


LIFETIME = 900.0  # seconds: a test killed before its teardown leaves no mount that hangs whoever walks its folder


def _done(call):
    """A method that makes `call` with the path and its arguments and answers 0 (success)."""

    def method(self, path, *args):
        call(path, *args)
        return 0

    return method


def _serve(source: str, mount: str, switch: str) -> None:
    import threading

    import mfusepy

    threading.Timer(LIFETIME, os._exit, (0,)).start()  # the kernel then fails every call (ENOTCONN)

    def gate(method):
        def wrapped(self, path, *args):
            while os.path.exists(switch):
                time.sleep(0.1)  # hung: no answer while the switch is there
            try:
                return method(self, source + path, *args)
            except OSError as exc:
                raise mfusepy.FuseOSError(exc.errno or errno.EIO) from None

        return wrapped

    class PassThrough(mfusepy.Operations):
        use_ns = True

        @gate
        def getattr(self, path, fh=None):
            st = os.lstat(path)
            keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_ino")
            found = {key: getattr(st, key) for key in keys}
            found.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
            return found

        @gate
        def readdir(self, path, fh):
            return [".", "..", *os.listdir(path)]

        @gate
        def access(self, path, amode):
            if not os.access(path, amode):
                raise OSError(errno.EACCES, "denied")
            return 0

        @gate
        def open(self, path, flags):
            return os.open(path, flags)

        @gate
        def create(self, path, mode, fi=None):
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

        @gate
        def read(self, path, size, offset, fh):
            return os.pread(fh, size, offset)

        @gate
        def write(self, path, data, offset, fh):
            return os.pwrite(fh, data, offset)

        @gate
        def truncate(self, path, length, fh=None):
            os.truncate(path, length)
            return 0

        @gate
        def flush(self, path, fh):
            return 0

        @gate
        def fsync(self, path, datasync, fh):
            os.fsync(fh)
            return 0

        @gate
        def release(self, path, fh):
            os.close(fh)
            return 0

        # the calls that take the path and return nothing
        mkdir, rmdir, unlink, chmod = (gate(_done(call)) for call in (os.mkdir, os.rmdir, os.unlink, os.chmod))

        @gate
        def utimens(self, path, times=None):
            os.utime(path, ns=times)
            return 0

        @gate
        def statfs(self, path):
            st = os.statvfs(path)
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_frsize")
            return {key: getattr(st, key) for key in keys} | {"f_namemax": st.f_namemax}

        def rename(self, old, new):
            return self._rename(old, source + new)

        @gate
        def _rename(self, old, new):
            os.rename(old, new)
            return 0

        def link(self, target, name):  # `target` is the new name, `name` the existing file (fusepy's order)
            return self._link(name, source + target)

        @gate
        def _link(self, existing, new):
            os.link(existing, new)
            return 0

    mfusepy.FUSE(PassThrough(), mount, foreground=True, attr_timeout=0, entry_timeout=0)


if __name__ == "__main__":
    _serve(*sys.argv[1:4])
