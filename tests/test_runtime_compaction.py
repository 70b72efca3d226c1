"""After a compaction in the real runtimes, the model is pointed at its own session's checkpoint, or told plainly
that the checkpoint is another session's.

Two sessions of one project on one machine: A in a linked worktree, B in the main checkout. A saves a checkpoint
through the helper, as the model would; B is compacted (the scripted model reports a nearly full context window, so
the runtime compacts on its own) and the request after the compaction holds the pointer to A's checkpoint as
another session's. B then saves a checkpoint of its own, the project's newest; A, resumed and compacted, is pointed
at the checkpoint it saved itself, not at B's newer one. Assertions are about what the model received.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_runtime_e2e import COMPACTED, HELPER, bootstrap, exit_code_of, json_output, save_command

import tools
from agent_clis import CLIS
from conftest import BUCKET
from model_servers import Say, Shell

pytestmark = pytest.mark.slow

FULL = 990_000  # input tokens reported by the model: a nearly full context window, so the runtime compacts
SUMMARY = "<analysis>Earlier work.</analysis>\n<summary>The work is in progress.</summary>"
A_BODY = "1. Goal: nested generics in the parser.\n2. Done: lookahead raised to 2.\n3. Next: benchmark it.\n"
B_BODY = "1. Goal: faster lexer.\n2. Done: keyword table.\n3. Next: profile the lexer.\n"
OWN = f"{COMPACTED} This session saved the checkpoint "
NEWEST = f"{COMPACTED} This project's newest checkpoint is "
OTHERS = "another session's: saved by {agent} on this machine, not in this session."


def git(cwd: Path, *args: str) -> None:
    tools.exited(
        subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=60,
        )
    )


def compaction() -> list:
    """A model call that reports a nearly full window, then the answer to the runtime's request for a summary; the
    turn goes on after the compaction with the next step scripted."""
    return [Shell("echo working", tokens=FULL), Say(SUMMARY)]


def after_compaction(model, first: int) -> str:
    """What the model received in the turn after the compaction that began at request `first`."""
    assert "summary" in model.text(first + 1).lower(), "no compaction request where one was scripted"
    shown = model.text(first + 2)
    assert shown.count(COMPACTED) == 1, shown.count(COMPACTED)  # one pointer, for the one compaction
    return shown


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_the_compaction_pointer_names_only_this_session_s_checkpoint_as_its_own(runtime, machine, hub):
    cli_class = CLIS[runtime]
    git(machine.work, "init", "-q")
    git(machine.work, "commit", "-q", "--allow-empty", "-m", "start")
    worktree = machine.root / "work" / "checkout-parser"
    git(machine.work, "worktree", "add", "-q", "-b", "parser", str(worktree))
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")  # maps the main checkout; the worktree has its project through it

        # session A, in the worktree, saves a checkpoint as the model would
        model.script(Shell(save_command("Parser generics checkpoint", A_BODY)), Say("Checkpoint saved."))
        first = cli.run("Work on the parser, then save a checkpoint.", cwd=worktree)
        tools.exited(first)
        session_a = cli.session_id(first)
        saved_a = json_output(model, 0)
        assert saved_a["status"] == "saved" and exit_code_of(model, runtime, 0) == 0
        assert f"session: {session_a}\n" in hub.read_file(BUCKET, saved_a["path"]).decode()  # the runtime's own id

        # session B, in the main checkout, is compacted: A's checkpoint is offered as another session's
        start = len(model.requests)
        model.script(*compaction(), Shell(save_command("Lexer checkpoint", B_BODY)), Say("Saved."))
        second = cli.run("Work on the lexer.")
        tools.exited(second)
        session_b = cli.session_id(second)
        assert session_b != session_a
        shown = after_compaction(model, start)
        assert f'{NEWEST}{saved_a["id"]} "Parser generics checkpoint"' in shown
        assert OTHERS.format(agent=runtime) in shown and f"{HELPER} read {saved_a['id']}" in shown
        assert OWN not in shown and "as this session is" not in shown
        assert "benchmark it" not in shown  # a pointer, never the checkpoint's content
        saved_b = json_output(model, 2)  # the tool calls so far: save, echo, save
        assert saved_b["status"] == "saved" and saved_b["id"] > saved_a["id"]  # B's is now the project's newest

        # session A, resumed in the worktree and compacted: pointed at its own checkpoint, not at B's newer one
        start = len(model.requests)
        model.script(*compaction(), Say("Continuing the parser."))
        third = cli.resume(session_a, "Go on with the parser.", cwd=worktree)
        tools.exited(third)
        assert cli.session_id(third) == session_a
        shown = after_compaction(model, start)
        assert f'{OWN}{saved_a["id"]} "Parser generics checkpoint"' in shown
        assert f"{HELPER} read {saved_a['id']}" in shown
        assert saved_b["id"] not in shown and NEWEST not in shown
        model.assert_played()
