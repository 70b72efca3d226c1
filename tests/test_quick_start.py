"""The README's Quick start, as a new user runs it: its first command in a fresh copy of the checkout, with a
new user's HOME; then, from a new login shell (a new terminal), every command the Quick start gives after it,
as written: `agent-memory` is on the PATH, the note is saved and found, and the undo takes everything out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import space_site

import tools
from conftest import NEW_USER_PROFILE

try:
    import tomllib
except ImportError:  # Python 3.10: the helper's own dependency
    import tomli as tomllib

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def quick_start_blocks() -> list[str]:
    """The shell blocks of the README's Quick start, in order."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The helper's dependencies and its build backend, downloaded once (PyPI, through pip, as the user's pip would)."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    wanted = [*project["project"]["dependencies"], *project["build-system"]["requires"]]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", str(folder), *wanted],
        capture_output=True,
        text=True,
    )
    tools.exited(proc)
    return folder


def test_the_quick_start_as_written(tmp_path: Path, wheelhouse: Path) -> None:
    first, tests, then, undo = quick_start_blocks()
    assert first.count("\n") == 1 and tests.count("\n") == 1  # two commands for a fresh machine, one line each
    clone = space_site.copy_checkout(tmp_path / "clone", node_modules=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text(NEW_USER_PROFILE)  # what a new user's login shell reads
    env = {
        "HOME": str(home),
        "PATH": os.defpath,
        "SHELL": "/bin/bash",
        "PIP_NO_INDEX": "1",  # the dependencies come from the wheelhouse, as behind a company mirror
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }

    def run(script: str, *shell: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", *shell], input=script, cwd=clone, env=env, capture_output=True, text=True, timeout=600
        )

    set_up = run(first)
    tools.exited(set_up)
    assert "verification: verified" in set_up.stdout
    link = home / ".local" / "bin" / "agent-memory"
    assert f"command: agent-memory -> {clone / '.venv' / 'bin' / 'agent-memory'} (linked in {link}" in set_up.stdout
    assert (home / "agent-memory-store" / "projects" / "demo" / "notes").is_dir()

    # a new terminal: a login shell, from the system's PATH
    used = run(then, "-l")
    tools.exited(used)
    assert "Chose SQLite WAL mode" in used.stdout
    undone = run(undo, "-l")
    tools.exited(undone)
    assert not (home / ".codex" / "AGENTS.md").exists() and not (home / ".claude" / "CLAUDE.md").exists()
    assert not (home / ".agents" / "skills" / "agent-memory").exists() and not link.is_symlink()
    gone = run("agent-memory --version", "-l")
    tools.exited(gone, 127)  # the undo took the command out too
