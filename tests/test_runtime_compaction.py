"""After a compaction in the real runtimes, the model is pointed at its own session's checkpoint, or told plainly
that the checkpoint is another session's.

Two sessions of one project on one machine: A in a linked worktree, B in the main checkout. A saves a checkpoint
through the helper, as the model would; B is compacted and the request after the compaction holds the pointer to
A's checkpoint as another session's. B then saves a checkpoint of its own, the project's newest, and compacted
again holds one pointer, to it; A, compacted in turn, is pointed at the checkpoint it saved itself, not at B's
newer one. Assertions are about what the model received (the requests the scripted model recorded).

Each runtime compacts in both ways it has: on its own, when the model reports a nearly full context window, and
when the user asks (`/compact` in Claude Code, which `claude -p` takes as its prompt; in Codex, whose `codex exec`
sends `/compact` to the model as text, the app-server's `thread/compact/start`, the manual compaction it offers
its clients).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_runtime_e2e import COMPACTED, HELPER, bootstrap, exit_code_of, json_output, save_command

import tools
from agent_clis import CLIS, AgentCli, CodexAppServer
from conftest import BUCKET
from model_servers import Say, ScriptedModel, Shell, Step

pytestmark = pytest.mark.slow

FULL = 990_000  # input tokens reported by the model: a nearly full context window, so the runtime compacts
SUMMARY = "<analysis>Earlier work.</analysis>\n<summary>The work is in progress.</summary>"
A_BODY = "1. Goal: nested generics in the parser.\n2. Done: lookahead raised to 2.\n3. Next: benchmark it.\n"
B_BODY = "1. Goal: faster lexer.\n2. Done: keyword table.\n3. Next: profile the lexer.\n"
OWN = f"{COMPACTED} This session saved the checkpoint "
NEWEST = f"{COMPACTED} This project's newest checkpoint is "
OTHERS = "another session's: saved by {agent} on this machine, not in this session."


class Sessions:
    """Sessions of one runtime, run as the tests' non-interactive CLI runs; compacted on the runtime's own, by a
    model call that reports a nearly full window."""

    def __init__(self, cli: AgentCli, model: ScriptedModel) -> None:
        self.cli, self.model = cli, model

    def __enter__(self) -> Sessions:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def start(self, prompt: str, cwd: Path) -> str:
        """A new session's first turn: its session id."""
        return self.cli.session_id(tools.exited(self.cli.run(prompt, cwd=cwd)))

    def go_on(self, session: str, prompt: str, cwd: Path) -> None:
        """One more turn of `session`, resumed."""
        resumed = tools.exited(self.cli.resume(session, prompt, cwd=cwd))
        assert self.cli.session_id(resumed) == session  # the same session goes on

    def compact(self, session: str, cwd: Path, prompt: str, *after: Step) -> str:
        """Compact `session`, then go on with `prompt` and the scripted steps `after`: what the model received in
        the first request after the compaction."""
        start = len(self.model.requests)
        self.model.script(Shell("echo working", tokens=FULL), Say(SUMMARY), *after)
        self.go_on(session, prompt, cwd)
        return self.shown_after(start + 1)

    def shown_after(self, compaction: int) -> str:
        """What the model received right after the compaction request `compaction`."""
        assert "summary" in self.model.text(compaction).lower(), "no compaction request where one was expected"
        shown = self.model.text(compaction + 1)
        assert shown.count(COMPACTED) == 1, shown.count(COMPACTED)  # one pointer, for the one compaction
        return shown


class ClaudeAsked(Sessions):
    """Claude Code compacted by the user's `/compact`, given to `claude -p --resume` as the prompt."""

    def compact(self, session: str, cwd: Path, prompt: str, *after: Step) -> str:
        start = len(self.model.requests)
        self.model.script(Say(SUMMARY), *after)
        self.go_on(session, "/compact", cwd)
        self.go_on(session, prompt, cwd)
        return self.shown_after(start)


class CodexAsked(Sessions):
    """Codex threads in its app-server, compacted by `thread/compact/start`."""

    def __init__(self, cli: AgentCli, model: ScriptedModel) -> None:
        super().__init__(cli, model)
        self.server = CodexAppServer(cli.machine, env=cli.env())
        for hook in self.server.hooks(cli.machine.work):
            self.server.trust(hook)  # as the user does in /hooks

    def __exit__(self, *exc_info: object) -> None:
        self.server.close()

    def start(self, prompt: str, cwd: Path) -> str:
        thread = self.server.thread(cwd)
        self.server.go_on(thread, prompt)
        return thread

    def go_on(self, session: str, prompt: str, cwd: Path) -> None:
        self.server.go_on(session, prompt)

    def compact(self, session: str, cwd: Path, prompt: str, *after: Step) -> str:
        start = len(self.model.requests)
        self.model.script(Say(SUMMARY), *after)
        self.server.compact(session)
        self.go_on(session, prompt, cwd)
        return self.shown_after(start)


ASKED = {"claude": ClaudeAsked, "codex": CodexAsked}


def git(cwd: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", *args]
    tools.exited(subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60))


@pytest.mark.parametrize("how", ["on its own", "asked"])
@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_the_compaction_pointer_names_only_this_session_s_checkpoint_as_its_own(runtime, how, machine, hub):
    cli_class = CLIS[runtime]
    git(machine.work, "init", "-q")
    git(machine.work, "commit", "-q", "--allow-empty", "-m", "start")
    worktree = machine.root / "work" / "checkout-parser"
    git(machine.work, "worktree", "add", "-q", "-b", "parser", str(worktree))
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")  # maps the main checkout; the worktree has its project through it
        sessions_class = ASKED[runtime] if how == "asked" else Sessions
        with sessions_class(cli, model) as sessions:
            # session A, in the worktree, saves a checkpoint as the model would
            model.script(Shell(save_command("Parser generics checkpoint", A_BODY)), Say("Checkpoint saved."))
            session_a = sessions.start("Work on the parser, then save a checkpoint.", worktree)
            saved_a = json_output(model, 0)
            assert saved_a["status"] == "saved" and exit_code_of(model, runtime, 0) == 0
            assert f"session: {session_a}\n" in hub.read_file(BUCKET, saved_a["path"]).decode()  # the runtime's own id

            # session B, in the main checkout, is compacted: A's checkpoint is offered as another session's
            model.script(Say("On the lexer."))
            session_b = sessions.start("Work on the lexer.", machine.work)
            assert session_b != session_a
            saving = Shell(save_command("Lexer checkpoint", B_BODY))
            shown = sessions.compact(session_b, machine.work, "Go on with the lexer.", saving, Say("Saved."))
            assert f'{NEWEST}{saved_a["id"]} "Parser generics checkpoint"' in shown
            assert OTHERS.format(agent=runtime) in shown and f"{HELPER} read {saved_a['id']}" in shown
            assert OWN not in shown and "as this session is" not in shown
            assert "benchmark it" not in shown  # a pointer, never the checkpoint's content
            saved_b = json_output(model, len(model.tool_results()) - 1)
            assert saved_b["status"] == "saved" and saved_b["id"] > saved_a["id"]  # B's is now the project's newest

            # B compacted again: one pointer, now to its own checkpoint (the earlier one went with the context)
            shown = sessions.compact(session_b, machine.work, "Profile the lexer.", Say("Profiling."))
            assert f'{OWN}{saved_b["id"]} "Lexer checkpoint"' in shown and NEWEST not in shown

            # session A, compacted in turn: pointed at its own checkpoint, not at B's newer one
            shown = sessions.compact(session_a, worktree, "Go on with the parser.", Say("Continuing the parser."))
            assert f'{OWN}{saved_a["id"]} "Parser generics checkpoint"' in shown
            assert f"{HELPER} read {saved_a['id']}" in shown
            assert saved_b["id"] not in shown and NEWEST not in shown
            model.assert_played()


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_session_that_names_its_agent_is_still_pointed_at_its_own_checkpoint(runtime, machine, hub):
    """`AGENT_MEMORY_AGENT` (say, in the user's profile) names the agent in the notes; the session stays the
    runtime's, so the checkpoint is still this session's after a compaction."""
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        bootstrap(machine, runtime, "--hooks")
        model.script(
            Shell(save_command("Parser generics checkpoint", A_BODY)),
            Shell("echo working", tokens=FULL),
            Say(SUMMARY),
            Say("Continuing the parser."),
        )
        run = tools.exited(cli.run("Work on the parser.", env={"AGENT_MEMORY_AGENT": "parser-bot"}))
        model.assert_played()
        saved = json_output(model, 0)
        stored = hub.read_file(BUCKET, saved["path"]).decode()
        assert "agent: parser-bot\n" in stored, stored
        assert f"session: {cli.session_id(run)}\n" in stored, stored
        shown = Sessions(cli, model).shown_after(2)
        assert f'{OWN}{saved["id"]} "Parser generics checkpoint"' in shown and NEWEST not in shown


@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_a_checkpoint_pending_then_shared_by_the_stop_hook_stays_this_session_s(runtime, machine, hub):
    """Saved while the Hub fails, the checkpoint is this session's from the outbox; shared by the Stop hook after
    the turn, it is this session's from the cache."""
    cli_class = CLIS[runtime]
    with cli_class.model_class() as model:
        cli = cli_class(machine, model)
        sessions = Sessions(cli, model)
        bootstrap(machine, runtime, "--hooks")
        hub.fault("batch", "fail", times=0)
        model.script(
            Shell(save_command("Parser generics checkpoint", A_BODY)),
            Shell("echo working", tokens=FULL),
            Say(SUMMARY),
            Say("Saved here only; it will be shared.", action=hub.clear_faults),  # the Hub is back before the Stop
        )
        session = cli.session_id(tools.exited(cli.run("Work on the parser.")))
        saved = json_output(model, 0)
        assert saved["status"] == "pending" and exit_code_of(model, runtime, 0) == 75
        shown = sessions.shown_after(2)  # the compaction came while it was pending
        assert f'{OWN}{saved["id"]} "Parser generics checkpoint"' in shown

        assert machine.run("pending", "--json").json["notes"] == []  # the Stop hook shared it after the turn
        assert f"session: {session}\n" in hub.read_file(BUCKET, saved["path"]).decode()
        shown = sessions.compact(session, machine.work, "Go on with the parser.", Say("Continuing the parser."))
        assert f'{OWN}{saved["id"]} "Parser generics checkpoint"' in shown and NEWEST not in shown
        model.assert_played()
