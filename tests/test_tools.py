"""A tool a test needs and does not find is never passed over in silence: outside CI the run says which checks did
not run and how to install the tool; in CI (`AGENT_MEMORY_TESTS_COMPLETE=1`) the test fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tools

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
    tools.exited(proc)
    assert "MissingTool: agent-memory-no-such-tool is missing, so the checks that need it did not run: " in proc.stdout
    assert "apt-get install -y agent-memory-no-such-tool" in proc.stdout
    assert "SKIPPED" in proc.stdout and "/nonexistent/chromium is missing: apt-get install -y chromium" in proc.stdout


def test_a_missing_tool_fails_the_run_in_ci(tmp_path: Path) -> None:
    proc = run_probe(tmp_path, complete=True)
    tools.exited(proc, 1)
    assert "2 failed" in proc.stdout and "AGENT_MEMORY_TESTS_COMPLETE=1: every check must run" in proc.stdout


def test_an_unexpected_exit_code_shows_what_the_command_printed() -> None:
    script = (
        'import sys; print(\'{"status": "pending", "message": "the reason"}\'); print(\'a warning\', file=sys.stderr)'
    )
    proc = subprocess.run([sys.executable, "-c", script + "; sys.exit(75)"], capture_output=True, text=True)
    with pytest.raises(AssertionError) as failed:
        tools.exited(proc)
    shown = str(failed.value)
    assert shown.startswith("exit 75, expected 0\n")
    assert '--- stdout ---\n{"status": "pending", "message": "the reason"}' in shown
    assert "--- stderr ---\na warning" in shown
    assert tools.exited(proc, (1, 75)) is proc  # one of several codes; the result goes on to the test

    started = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ended = tools.exited(tools.finished(started, timeout=60))
    assert (ended.returncode, ended.stderr) == (0, b"a warning\n")
    with pytest.raises(AssertionError, match=r"exit 0, expected 2 \(bad input\)\n--- stdout ---\n\{"):
        tools.exited(ended, 2, about="bad input")


def test_a_long_output_shows_its_end() -> None:
    proc = subprocess.CompletedProcess(["x"], 1, "x" * 10_000 + "the end", "")
    with pytest.raises(AssertionError) as failed:
        tools.exited(proc)
    assert "(first 6007 characters left out)" in str(failed.value) and str(failed.value).count("x") < 4100
    assert "the end\n--- stderr ---" in str(failed.value)


def test_timeouts_grow_with_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)  # one process, as `pytest tests/test_x.py`
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert tools.scaled(20) == 20  # idle: as written
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0, 3.0, 1.0))  # two busy processes per core
    assert tools.scaled(20) == 60
    # a parallel run's first minute: the load average still shows the idle machine, the workers count already
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.1, 0.0))
    assert tools.scaled(20) == 40
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0, 3.0, 1.0))  # then the load average, once it is higher
    assert tools.scaled(20) == 60
