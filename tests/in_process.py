"""Running `agent-memory` inside the test process: `entry.run(argv)` with the machine's environment, working
folder, stdin and captured stdout/stderr, as a real process would see them, without its start-up.

A command run this way must not be told apart from a real process by anything it does: it reads its
environment, folders and stdin when it runs. What a real process has and this cannot give is kept for real
processes (see `needs_process`): the hook entry (the runtimes start it), libraries that read their settings
once at import (`HF_HUB_OFFLINE` and the like), signals, kills, the umask and start-up measurements.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

# read once, when the interpreter starts or huggingface_hub and hf_xet are imported: a process of its own sees them
_READ_AT_IMPORT = ("HF_HUB_", "HF_XET_", "HF_HOME", "PYTHON")


def needs_process(args: tuple[str, ...], env: dict[str, str]) -> bool:
    """Whether this command line, with these extra variables, has to run as a real process."""
    return (args[:1] == ("hook",)) or any(name.startswith(_READ_AT_IMPORT) for name in env)


def run(args: tuple[str, ...], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """`(exit code, stdout, stderr)` of `agent-memory ARGS` run here."""
    from agent_memory import entry

    out, err = _Stream(), _Stream()
    with _environment(env), _cwd(cwd), _streams(_Stream(stdin), out, err):
        try:
            code = entry.run(list(args))
        except SystemExit as exc:  # argparse's --help and --version end the process
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        sys.stdout.flush()
        sys.stderr.flush()
    return code, out.buffer.getvalue(), err.buffer.getvalue()


class _Stream(io.TextIOWrapper):
    """A text stream over bytes, like a pipe's: UTF-8, `.buffer` for exact bytes, never a terminal."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", newline=None, write_through=True)

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _cwd(folder: Path) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _streams(stdin: _Stream, stdout: _Stream, stderr: _Stream) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
