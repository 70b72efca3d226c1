"""What tests share beyond the fixtures: the check of a command's exit code, timeouts that grow with the machine's
load, and the tools some tests need beyond Python: the npm packages pinned in two places (Pyodide for the Space in
the repository's package.json; the real agent CLIs in tests/agent-clis/package.json) and Debian's chromium, zsh and
shellcheck.

npm packages are installed with `npm ci`, in the folder that pins them, by the first test that needs them: the
Space's build never downloads the agent CLIs. A missing tool skips the tests that need it, loudly, with
the command that installs it (a check that only adds to a test is left out with a warning that says so); in CI
(`AGENT_MEMORY_TESTS_COMPLETE=1`, set by `.ci/run`, which installs everything) a missing tool fails them instead,
so that no test can quietly stop running.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
import subprocess
import time
import warnings
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SPACE_NPM = REPO  # package.json: Pyodide, which build.py copies into the page
AGENT_CLIS = REPO / "tests" / "agent-clis"  # package.json: the real Claude Code and Codex, for the end-to-end tests
AGENT_BIN = AGENT_CLIS / "node_modules" / ".bin"
CHROMIUM = os.environ.get("SPACE_CHROMIUM", "/usr/bin/chromium")  # Debian's package


SHOWN = 4000  # characters of a failed command's stdout and of its stderr shown: the end, where the reason is


def exited(result: Any, code: int | Collection[int] = 0, about: object = None) -> Any:
    """Assert that a command exited with `code` (or one of `code`), showing its stdout and stderr when it did not.

    Every exit code a test checks goes through here: a bare `assert 75 == 0` hides why a command failed (a save's
    reason is in its --json stdout). `result` is the tests' `Result` (code, out, err) or a `CompletedProcess`;
    it is returned, so that a test can go on with it. `about` says which of a test's commands it was.
    """
    if isinstance(result, subprocess.Popen):  # its output was read by communicate(): pass tools.finished(proc)
        raise TypeError("tools.exited needs what the command printed: tools.exited(tools.finished(proc))")
    actual = result.code if hasattr(result, "code") else result.returncode
    wanted = (code,) if isinstance(code, int) else tuple(code)
    if actual not in wanted:
        out = result.out if hasattr(result, "out") else result.stdout
        err = result.err if hasattr(result, "err") else result.stderr
        expected = wanted[0] if len(wanted) == 1 else f"one of {wanted}"
        which = "" if about is None else f" ({about})"
        shown = f"{_shown('stdout', out)}\n{_shown('stderr', err)}"
        raise AssertionError(f"exit {actual}, expected {expected}{which}\n{shown}")
    return result


def finished(proc: subprocess.Popen, timeout: float | None = None, input: bytes | None = None) -> Any:
    """Wait for a command started with Popen and return what it did (a `CompletedProcess`), for `exited`."""
    out, err = proc.communicate(input, timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _shown(name: str, text: str | bytes | None) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    text = text or ""
    cut = f"(first {len(text) - SHOWN} characters left out) " if len(text) > SHOWN else ""
    return f"--- {name} {cut}---\n{text[-SHOWN:]}"


def load_factor() -> float:
    """How much slower than idle this machine may run a test now: 1 when idle, 1 + the runnable processes per core.

    A concurrency test's timeouts (its budgets, its waits) are multiplied by it, so that a loaded two-core machine
    gives the same verdict as an idle one; a test never asserts that something is fast (bench/ measures that).
    The load average follows the machine a minute late: at the start of a parallel run (pytest-xdist's `-n`) it
    still shows the idle machine while every worker already runs a test, so the workers count from the start.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
    return 1.0 + max(os.getloadavg()[0], workers) / (os.cpu_count() or 1)


def scaled(seconds: float) -> float:
    """`seconds` of an idle machine, on this machine as loaded as it is now."""
    return seconds * load_factor()


def until(check: Callable[[], bool], seconds: float) -> bool:
    """Whether `check` became true within `seconds` (asked every 0.1 s): for what a process nobody waits for does."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return check()


def missing(reason: str) -> None:
    """Skip the test for a missing tool, or fail it when the run must be complete (CI)."""
    if os.environ.get("AGENT_MEMORY_TESTS_COMPLETE") == "1":
        pytest.fail(f"{reason} (AGENT_MEMORY_TESTS_COMPLETE=1: every test must run)")
    pytest.skip(reason)


def require_npm_packages(folder: Path = SPACE_NPM) -> None:
    """The npm packages pinned in `folder`'s package.json (default: the Space's Pyodide), installed with `npm ci`
    once per session if needed."""
    reason = _npm_ci(folder)
    if reason:
        missing(reason)


def require_agent_clis() -> None:
    """The real Claude Code and Codex pinned in tests/agent-clis, installed with `npm ci` once per session if needed."""
    require_npm_packages(AGENT_CLIS)


def require_chromium() -> None:
    """Debian's chromium (never a downloaded browser)."""
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} is missing: apt-get install -y chromium")


class MissingTool(UserWarning):
    """A check that did not run because its tool is missing (pytest lists each in its warnings summary)."""


def available(name: str) -> bool:
    """Whether a command is on PATH, for a check that adds to a test (zsh -n, shellcheck); in CI it must be.

    A missing one is said loudly, never passed over: the test goes on without that check, and the run's summary
    names the tool and how to install it.
    """
    if shutil.which(name) is not None:
        return True
    reason = f"{name} is missing, so the checks that need it did not run: apt-get install -y {name}"
    if os.environ.get("AGENT_MEMORY_TESTS_COMPLETE") == "1":
        pytest.fail(f"{reason} (AGENT_MEMORY_TESTS_COMPLETE=1: every check must run)")
    warnings.warn(reason, MissingTool, stacklevel=2)
    return False


@functools.cache
def _npm_ci(folder: Path) -> str | None:
    pinned = json.loads((folder / "package.json").read_text())["dependencies"]
    names = ", ".join(pinned)
    if _installed(folder, pinned):
        return None
    npm = shutil.which("npm")
    if npm is None:
        return f"npm is not installed, so the pinned npm packages ({names}) cannot be installed"
    # `npm ci` empties node_modules first: two runs at once (two parallel test processes, or two test sessions in
    # one clone) would break each other, so they take turns on the lock file's lock, and the second finds the work
    # done
    with open(folder / "package-lock.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(folder, pinned):
            return None
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=900, check=False
        )
    if proc.returncode != 0:
        # offline, the registry is out of reach: the tests that need these packages are skipped with npm's reason
        return (
            f"npm ci could not install the pinned npm packages ({names}) in {folder} (exit {proc.returncode}): "
            + proc.stderr.strip()[-600:]
        )
    wrong = {p: installed_version(p, folder) for p, v in pinned.items() if installed_version(p, folder) != v}
    if wrong:
        pytest.fail(f"npm ci did not install the pinned versions in {folder}: {wrong}")
    return None


def _installed(folder: Path, pinned: dict[str, str]) -> bool:
    return all(installed_version(package, folder) == version for package, version in pinned.items())


def installed_version(package: str, folder: Path = SPACE_NPM) -> str | None:
    """The version of an npm package in `folder`'s node_modules, None if it is not there."""
    try:
        return json.loads((folder / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
