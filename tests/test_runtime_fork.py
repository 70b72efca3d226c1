"""A session forked in the real Claude Code (`claude --resume ID --fork-session`) holds a copy of the earlier
conversation, its SessionStart reminder included: it gets no second, contradicting one, and after a compaction the
checkpoint saved before the fork is named as this conversation's. Claude Code records which session a copied reply
came from in the fork's transcript (`requestSessionId`), which is what the hook goes by (`machine.forks`)."""

from __future__ import annotations

import pytest
from test_runtime_compaction import FULL, SUMMARY, Sessions
from test_runtime_e2e import COMPACTED, HELPER, REMINDER, bootstrap, json_output, save_command

import tools
from agent_clis import CLIS
from conftest import BUCKET
from model_servers import Say, Shell

# its checkout outside /tmp: a parallel test's Codex sandbox makes /tmp a repository for a moment, and Claude Code
# then keys the session's project by /tmp (see conftest's outside_tmp)
pytestmark = [pytest.mark.slow, pytest.mark.outside_tmp]

INHERITED = f"{COMPACTED} This conversation (in the session it was forked from) saved the checkpoint "


def test_a_forked_session_gets_one_reminder_and_its_inherited_checkpoint_as_its_own(machine, hub):
    cli_class = CLIS["claude"]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, "claude", "--hooks")
        model.script(Shell(save_command("Parser checkpoint", "1. Goal: the parser.\n")), Say("Checkpoint saved."))
        session = cli.session_id(tools.exited(cli.run("Work on the parser, then save a checkpoint.")))
        saved = json_output(model, 0)
        assert f"session: {session}\n" in hub.read_file(BUCKET, saved["path"]).decode()
        tools.exited(machine.save("# Another note\n\nSaved between: a new reminder would count it."))

        model.script(Say("In the fork."))
        start = len(model.requests)
        forked = tools.exited(cli.run("Go on in a fork.", args=["--resume", session, "--fork-session"]))
        fork = cli.session_id(forked)
        assert fork != session
        shown = model.text(start)
        assert "Checkpoint saved." in shown  # the earlier conversation, copied
        assert shown.count(REMINDER) == 1, shown.count(REMINDER)  # one reminder, the one it inherited
        assert "2 notes in this machine's cache" not in shown

        # compacted, the fork is pointed at the checkpoint saved before it, as this conversation's
        start = len(model.requests)
        model.script(Shell("echo working", tokens=FULL), Say(SUMMARY), Say("Going on."))
        tools.exited(cli.resume(fork, "Go on."))
        shown = Sessions(cli, model).shown_after(start + 1)
        assert f'{INHERITED}{saved["id"]} "Parser checkpoint"' in shown and f"{HELPER} read {saved['id']}" in shown
        assert "another session's" not in shown
        model.assert_played()
