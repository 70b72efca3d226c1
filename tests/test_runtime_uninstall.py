"""A helper that is gone (its virtual environment deleted without `agent-memory uninstall`) shows no hook failure in
the real runtimes: each hook command line tests its helper first, and exits 0 in silence without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

import tools
from agent_clis import CLIS, hf_login
from conftest import BUCKET
from model_servers import Say

pytestmark = pytest.mark.slow


def throwaway_helper(tmp_path):
    """An agent-memory install of its own (a virtual environment that sees this one's packages), to delete."""
    venv = tmp_path / "throwaway-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"]
    os.makedirs(purelib, exist_ok=True)
    ours = sysconfig.get_paths()["purelib"]
    (venv / purelib / "agent_memory_here.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    script = venv / "bin" / "agent-memory"
    script.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom agent_memory.entry import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return venv, script


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_session_after_the_helper_was_deleted_shows_no_hook_failure(runtime, machine, hub, tmp_path):
    venv, helper = throwaway_helper(tmp_path)
    hf_login(machine)
    boot = subprocess.run(
        [str(helper), "bootstrap", "--project", "demo", "--bucket", BUCKET, "--agent", runtime, "--hooks"],
        capture_output=True,
        text=True,
        cwd=machine.work,
        env=machine.env,
        timeout=300,
    )
    tools.exited(boot)
    hooks_file = machine.home / (".codex/hooks.json" if runtime == "codex" else ".claude/settings.json")
    assert f"[ ! -x {helper} ] || {helper} hook stop --agent {runtime}" in hooks_file.read_text()
    shutil.rmtree(venv)  # removed the way people remove things: the hooks still name it
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        model.script(Say("First answer."), Say("Second answer."))
        first = cli.run("Hello.")
        resumed = cli.resume(cli.session_id(first), "Again.")
        model.assert_played()
    for run in (first, resumed):
        tools.exited(run)
        if runtime == "codex":  # Codex prints each hook's outcome
            assert "hook: SessionStart Completed" in run.err and "hook: Stop Completed" in run.err
            assert "Failed" not in run.err, run.err[-2000:]
        else:  # Claude Code prints a failed SessionEnd hook, and records the others in the session's transcript
            assert "hook" not in run.err, run.err[-2000:]
    if runtime == "claude":
        transcripts = list((machine.home / ".claude" / "projects").rglob("*.jsonl"))
        assert transcripts
        for transcript in transcripts:
            for line in transcript.read_text().splitlines():
                entry = json.loads(line)
                assert entry.get("attachment", {}).get("type") != "hook_non_blocking_error", line[:500]
                assert not entry.get("hookErrors"), line[:500]
    assert "memory project is demo" not in model.text(0)  # no reminder: the helper that would give it is gone
