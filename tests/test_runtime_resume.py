"""A session resumed in the real runtimes keeps one SessionStart reminder.

Codex keeps a resumed session's earlier context, the reminder included, and runs SessionStart again (`source:
resume`, same `session_id`), so the hook gives nothing the second time; Claude Code shows a resumed session only
its new SessionStart context, so it gets the reminder each time. Either way the model sees it once."""

from __future__ import annotations

import pytest
from test_runtime_e2e import REMINDER, SEARCH_TRIGGER, bootstrap

import tools
from agent_clis import CLIS
from model_servers import Say

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_session_resumed_twice_shows_the_model_one_reminder(runtime, machine, hub):
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        model.script(Say("First answer."), Say("Second answer."), Say("Third answer."))
        first = cli.run("Hello.")
        tools.exited(first)
        session = cli.session_id(first)
        for prompt in ("And again.", "Once more."):
            resumed = cli.resume(session, prompt)
            tools.exited(resumed)
        model.assert_played()
        assert len(model.requests) == 3
        assert "Once more." in model.text(2) and "First answer." in model.text(2)  # really the same session
        for index in range(3):
            shown = model.text(index)
            assert shown.count(REMINDER) == 1 and shown.count(SEARCH_TRIGGER) == 1, (index, shown.count(REMINDER))
        if runtime == "codex":
            assert "hook: SessionStart Failed" not in resumed.err  # an empty answer is a hook that succeeded
    seen = (machine.state / "state" / "reminded-sessions").read_text().splitlines() if runtime == "codex" else []
    assert seen == ([session] if runtime == "codex" else [])
