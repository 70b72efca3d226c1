"""A tool a test needs and does not find is never passed over in silence: outside CI the run says which checks did
not run and how to install the tool; in CI (`AGENT_MEMORY_TESTS_COMPLETE=1`) the test fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PROBE = """
import sys
sys.path.insert(0, {tests!r})
from tools import available, require_chromium


def test_a_check_that_adds_to_a_test():
    assert available("agent-memory-no-such-tool") is False


def test_a_test_that_needs_a_browser(monkeypatch):
    import tools

    monkeypatch.setattr(tools, "CHROMIUM", "/nonexistent/chromium")
    require_chromium()
"""


def run_probe(tmp_path: Path, complete: bool) -> subprocess.CompletedProcess:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE.format(tests=str(TESTS)))
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_TESTS_COMPLETE"}
    if complete:
        env["AGENT_MEMORY_TESTS_COMPLETE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(probe)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_tool_is_said_loudly_outside_ci(tmp_path: Path) -> None:
    proc = run_probe(tmp_path, complete=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MissingTool: agent-memory-no-such-tool is missing, so the checks that need it did not run: " in proc.stdout
    assert "apt-get install -y agent-memory-no-such-tool" in proc.stdout
    assert "SKIPPED" in proc.stdout and "/nonexistent/chromium is missing: apt-get install -y chromium" in proc.stdout


def test_a_missing_tool_fails_the_run_in_ci(tmp_path: Path) -> None:
    proc = run_probe(tmp_path, complete=True)
    assert proc.returncode == 1
    assert "2 failed" in proc.stdout and "AGENT_MEMORY_TESTS_COMPLETE=1: every check must run" in proc.stdout
