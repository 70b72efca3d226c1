"""Tools some tests need beyond Python: the npm packages pinned in package.json (the real agent CLIs, Pyodide)
and Debian's chromium, zsh and shellcheck.

npm packages are installed with `npm ci` on first use. A missing tool skips the tests that need it, loudly, with
the command that installs it (a check that only adds to a test is left out with a warning that says so); in CI
(`AGENT_MEMORY_TESTS_COMPLETE=1`, set by `.ci/run`, which installs everything) a missing tool fails them instead,
so that no test can quietly stop running.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NODE_MODULES = REPO / "node_modules"
CHROMIUM = os.environ.get("SPACE_CHROMIUM", "/usr/bin/chromium")  # Debian's package


def missing(reason: str) -> None:
    """Skip the test for a missing tool, or fail it when the run must be complete (CI)."""
    if os.environ.get("AGENT_MEMORY_TESTS_COMPLETE") == "1":
        pytest.fail(f"{reason} (AGENT_MEMORY_TESTS_COMPLETE=1: every test must run)")
    pytest.skip(reason)


def require_npm_packages() -> None:
    """The npm packages pinned in package.json, installed with `npm ci` once per session if needed."""
    reason = _npm_ci()
    if reason:
        missing(reason)


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
def _npm_ci() -> str | None:
    pinned = json.loads((REPO / "package.json").read_text())["dependencies"]
    if all(installed_version(package) == version for package, version in pinned.items()):
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed, so the pinned npm packages (the agent CLIs, Pyodide) cannot be installed"
    import fcntl

    # `npm ci` empties node_modules first: two runs at once (two test sessions in one clone) would break each
    # other, so they take turns on the lock file's lock, and the second finds the work done
    with open(REPO / "package-lock.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(installed_version(package) == version for package, version in pinned.items()):
            return None
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=REPO, capture_output=True, text=True, timeout=900, check=False
        )
    if proc.returncode != 0:
        pytest.fail(f"npm ci failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    wrong = {p: installed_version(p) for p, v in pinned.items() if installed_version(p) != v}
    if wrong:
        pytest.fail(f"npm ci did not install the pinned versions: {wrong}")
    return None


def installed_version(package: str) -> str | None:
    """The version of an npm package in node_modules, None if it is not there."""
    try:
        return json.loads((NODE_MODULES / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
