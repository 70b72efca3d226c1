"""A session resumed in the real runtimes keeps one SessionStart reminder, and is told once what changed.

Both runtimes keep a resumed session's earlier context, the SessionStart reminder included, and run SessionStart
again (`source: resume`, same `session_id`): Codex keeps every reminder, Claude Code every one that differs from an
earlier one. So the hook gives a resumed session nothing, or one line when the uploads it was told were pending
have been shared since; the model then holds one reminder, and the pending line in it is followed by its update."""

from __future__ import annotations

import pytest
from test_runtime_e2e import REMINDER, SEARCH_TRIGGER, bootstrap

import tools
from agent_clis import CLIS
from model_servers import Say

pytestmark = pytest.mark.slow

PENDING = "1 upload saved on this machine is not shared yet (1 note); the Stop hook retries it after each turn"
SHARED = "agent-memory: update to this session's earlier reminder: the uploads it named as not shared yet have been "


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_session_resumed_twice_shows_the_model_one_reminder(runtime, machine, hub):
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        hub.fault("batch", "fail", times=0)
        tools.exited(machine.save("# Decided offline\n\nA note saved while the Hub failed."), 75)
        model.script(Say("First answer."), Say("Second answer."), Say("Third answer."))
        first = cli.run("Hello.")
        tools.exited(first)
        session = cli.session_id(first)
        hub.clear_faults()
        retried = machine.run("pending", "retry", "--json")  # delivered between the session's runs
        tools.exited(retried)
        tools.exited(cli.resume(session, "And again."))
        if runtime == "claude":  # --continue goes on with the same session (and session id) as --resume
            resumed = cli.run("Once more.", args=["--continue"])
        else:
            resumed = cli.resume(session, "Once more.")
        tools.exited(resumed)
        model.assert_played()
        assert len(model.requests) == 3
        assert "Once more." in model.text(2) and "First answer." in model.text(2)  # really the same session
        for index in range(3):
            shown = model.text(index)
            assert shown.count(REMINDER) == 1 and shown.count(SEARCH_TRIGGER) == 1, (index, shown.count(REMINDER))
            assert shown.count(PENDING) == 1, (index, shown.count(PENDING))
            assert shown.count(SHARED) == (0 if index == 0 else 1), index  # told once, after the line it corrects
            if index:
                assert shown.index(PENDING) < shown.index(SHARED)
        if runtime == "codex":
            assert "hook: SessionStart Failed" not in resumed.err  # an empty answer is a hook that succeeded
    seen = (machine.state / "state" / "reminded-sessions").read_text().split()
    assert seen[0] == session and len(seen) == 2


def test_codex_s_own_memory_consolidation_session_gets_no_reminder(machine, hub):
    """Codex consolidates its memories in a session of its own, in `$CODEX_HOME/memories_v2`: no project of the
    user's, so neither a reminder nor setup advice ("not mapped to a project ... project map")."""
    cli_class = CLIS["codex"]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, "codex", "--hooks")
        folder = machine.home / ".codex" / "memories_v2"
        folder.mkdir(parents=True)
        model.script(Say("Consolidated."), Say("Working."))
        tools.exited(cli.run("Consolidate the memories.", cwd=folder))
        tools.exited(cli.run("Hello.", cwd=machine.work))  # a session of the user's project, for contrast
        model.assert_played()
        consolidation, project = model.text(0), model.text(1)
        assert REMINDER not in consolidation and "not mapped to a project" not in consolidation
        assert "project map" not in consolidation and SEARCH_TRIGGER not in consolidation
        assert project.count(REMINDER) == 1
