"""The Stop hook's outcome reaches the user in the real runtimes: Claude Code shows a hook's `systemMessage` to the
user (its transcript records it as a hook system message, never as model context), and Codex hands it to its user
interface as the hook run's warning (what `codex app-server` reports; `codex exec` prints only "hook: Stop
Completed"). A turn with nothing pending says nothing."""

from __future__ import annotations

import json

import pytest
from test_runtime_e2e import bootstrap

import tools
from agent_clis import CLIS, Codex, CodexAppServer
from model_servers import Say

pytestmark = pytest.mark.slow

SHARED = "agent-memory: retried 1 pending upload: 1 shared, 0 still pending"


def claude_messages(machine) -> list[str]:
    """The hook system messages Claude Code showed, in its transcripts."""
    found = []
    for transcript in (machine.home / ".claude" / "projects").rglob("*.jsonl"):
        for line in transcript.read_text().splitlines():
            attachment = json.loads(line).get("attachment") or {}
            if attachment.get("type") == "hook_system_message":
                found.append(attachment["content"])
    return found


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_the_stop_hook_tells_the_user_what_it_retried_and_nothing_otherwise(runtime, machine, hub):
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        hub.fault("batch", "fail", times=0)
        tools.exited(machine.save("# Offline\n\nSaved while the Hub failed."), 75)
        hub.clear_faults()
        model.script(Say("First answer."), Say("Second answer."))
        first = cli.run("Hello.")
        tools.exited(first)
        second = cli.resume(cli.session_id(first), "Again.")  # nothing waits any more
        tools.exited(second)
        model.assert_played()
    assert machine.run("pending", "--json").json["notes"] == []  # the Stop hook shared it
    for shown in (model.text(0), model.text(1)):
        assert "retried" not in shown  # the user's message, never the model's context
    if runtime == "claude":
        assert claude_messages(machine) == [SHARED]  # once: the second turn had nothing to say
    else:
        for run in (first, second):
            assert "hook: Stop Completed" in run.err and "hook: Stop Failed" not in run.err


def test_codex_shows_the_stop_hooks_message_to_the_user(machine, hub):
    with Codex.model_class() as model:
        cli = Codex(machine, model)  # the user's config.toml, with the scripted model
        bootstrap(machine, "codex", "--hooks")
        hub.fault("batch", "fail", times=0)
        tools.exited(machine.save("# Offline\n\nSaved while the Hub failed."), 75)
        hub.clear_faults()
        model.script(Say("First answer."), Say("Second answer."))
        with CodexAppServer(machine, env=cli.env()) as codex:
            for hook in codex.hooks(machine.work):
                codex.trust(hook)  # as the user does in /hooks
            first = codex.turn(machine.work, "Hello.")
            second = codex.turn(machine.work, "Again.")
        model.assert_played()
    stops = [[run["entries"] for run in runs if run["eventName"] == "stop"] for runs in (first, second)]
    assert stops[0] == [[{"kind": "warning", "text": SHARED}]]
    assert stops[1] == [[]]  # nothing pending any more: nothing to say
