"""Run the real agent CLIs from npm (Codex CLI, Claude Code) offline against a scripted model server.

The CLIs come from `tests/agent-clis/package.json`/`package-lock.json` (installed there with `npm ci`, once per
test session when its `node_modules` does not hold the pinned versions). Each run gets the machine's HOME and agent
folders and an environment built from scratch: nothing of the developer's shell leaks in. Flags, variables
and pitfalls follow the measurements in the reference "Measured with the real CLIs".
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import TOKEN, Machine
from model_servers import AnthropicModel, ResponsesModel, ScriptedModel
from tools import AGENT_BIN, require_agent_clis

REPO = Path(__file__).resolve().parent.parent
# Debian's login PATH for root (/etc/profile): the agent-memory helper is deliberately not on it
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RUN_TIMEOUT = 240  # seconds for one whole CLI run (a helper command inside gets AGENT_MEMORY_TIMEOUT)


def hf_login(machine: Machine) -> None:
    """What `hf auth login` leaves on a machine: the token in `$HF_HOME/token`, never in the environment.

    Codex hides variables named like *TOKEN* from the model's commands, so a real user's helper finds its
    credentials in this file.
    """
    token_file = Path(machine.env["HF_HOME"]) / "token"
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)


@dataclass
class Run:
    """One finished CLI run."""

    code: int
    out: str
    err: str


class AgentCli:
    """One agent CLI on one machine, wired to a scripted model."""

    name = ""
    model_class: type[ScriptedModel] = ScriptedModel

    def __init__(self, machine: Machine, model: ScriptedModel) -> None:
        require_agent_clis()
        self.machine = machine
        self.model = model
        self.binary = AGENT_BIN / self.name

    def env(self) -> dict[str, str]:
        """The CLI's environment: the machine's agent-memory and Hugging Face variables, no credential."""
        env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1"}
        env.update(
            (key, value)
            for key, value in self.machine.env.items()
            if key in self.machine.own_env or (key.startswith(("HF_", "AGENT_MEMORY_")) and key != "HF_TOKEN")
        )
        return env

    def argv(self, cwd: Path, extra: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def run(
        self, prompt: str, *, cwd: Path | None = None, env: dict[str, str] | None = None, args: Sequence[str] = ()
    ) -> Run:
        """Run one non-interactive session with `prompt` and extra CLI `args`, in `cwd` (default: the checkout)."""
        cwd = cwd or self.machine.work
        return self._run(self.argv(cwd, args), prompt, cwd, env)

    def _run(self, argv: list[str], prompt: str, cwd: Path, env: dict[str, str] | None) -> Run:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**self.env(), **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so that a timeout can end the CLI and every process it started
        )
        try:
            out, err = proc.communicate(prompt.encode(), timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"{self.name} did not finish within {RUN_TIMEOUT} s:\n{err.decode()[-3000:]}")
        return Run(proc.returncode, out.decode(), err.decode())


class Codex(AgentCli):
    """`codex exec` with a scripted Responses provider declared in `$CODEX_HOME/config.toml`.

    `sandbox` is `bypass` (no sandbox: commands run as the test user), or one of Codex's modes (`read-only`,
    `workspace-write`). Tests pass `bypass_hook_trust=True` to run hooks no user has trusted yet (X1).
    """

    name = "codex"
    model_class = ResponsesModel

    def __init__(
        self, machine: Machine, model: ScriptedModel, *, sandbox: str = "bypass", bypass_hook_trust: bool = True
    ) -> None:
        super().__init__(machine, model)
        self.sandbox = sandbox
        self.bypass_hook_trust = bypass_hook_trust
        self.home = Path(machine.env["CODEX_HOME"])
        self._declare_provider()

    def _declare_provider(self) -> None:
        """The user's own Codex configuration, written before agent-memory touches anything."""
        self.home.mkdir(parents=True, exist_ok=True)
        config = self.home / "config.toml"
        if config.exists():
            return
        config.write_text(
            "# the scripted stand-in model; an unknown model name gets classic function tools (X9)\n"
            'model = "gpt-5.1"\n'
            'model_provider = "scripted"\n\n'
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{self.model.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "SCRIPTED_MODEL_API_KEY"\n'
        )

    def env(self) -> dict[str, str]:
        return {**super().env(), "SCRIPTED_MODEL_API_KEY": "scripted-model-key"}

    def argv(self, cwd: Path, extra: Sequence[str]) -> list[str]:
        argv = [str(self.binary), "exec", "--skip-git-repo-check", "--color", "never", "-C", str(cwd), *extra]
        if self.sandbox == "bypass":
            argv.append("--dangerously-bypass-approvals-and-sandbox")
        else:
            argv += ["-s", self.sandbox]
        if self.bypass_hook_trust:
            argv.append("--dangerously-bypass-hook-trust")
        return [*argv, "-"]  # the prompt on stdin

    def resume(self, session: str, prompt: str, *, cwd: Path | None = None) -> Run:
        """`codex exec resume SESSION` with `prompt`: the session goes on, its earlier context kept. It takes no
        `-C` or `-s`: the folder is the process's own, the sandbox a setting."""
        argv = [str(self.binary), "exec", "resume", session, "--skip-git-repo-check"]
        if self.sandbox == "bypass":
            argv.append("--dangerously-bypass-approvals-and-sandbox")
        else:
            argv += ["-c", f'sandbox_mode="{self.sandbox}"']
        if self.bypass_hook_trust:
            argv.append("--dangerously-bypass-hook-trust")
        return self._run([*argv, "-"], prompt, cwd or self.machine.work, None)

    @staticmethod
    def session_id(run: Run) -> str:
        """The id of the session a run started (Codex prints it on stderr)."""
        return run.err.split("session id: ", 1)[1].split()[0]


class CodexAppServer:
    """`codex app-server` on one machine: Codex's own view of the hooks it found and whether it trusts them (X2).

    JSON-RPC on stdio, one object a line. `hooks(cwd)` is `hooks/list`: each hook's `key`
    (`<hooks.json>:<event>:<group>:<handler>`), `command`, `currentHash` and `trustStatus`. `trust(hook)` writes
    `[hooks.state."<key>"] trusted_hash` into config.toml through `config/batchWrite`, as trusting it in /hooks does.
    """

    def __init__(self, machine: Machine, env: dict[str, str] | None = None) -> None:
        require_agent_clis()
        env = {
            "PATH": SYSTEM_PATH,
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            **machine.own_env,
            **(env or {}),
        }
        self.proc = subprocess.Popen(
            [str(AGENT_BIN / "codex"), "app-server"],
            cwd=machine.work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.request("initialize", {"clientInfo": {"name": "agent-memory-tests", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    def __enter__(self) -> CodexAppServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def request(self, method: str, params: dict) -> dict:
        """One request's result; fails the test on an error answer or no answer within a minute."""
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            try:
                message = json.loads(self.lines.get(timeout=60))
            except queue.Empty:
                pytest.fail(f"codex app-server did not answer {method} within 60 s")
            if message.get("id") == self.next_id:
                if "error" in message:
                    pytest.fail(f"codex app-server refused {method}: {message['error']}")
                return message["result"]

    def hooks(self, cwd: Path) -> list[dict]:
        """The hooks Codex finds for a session in `cwd`, after checking it reported no warning or error."""
        (found,) = self.request("hooks/list", {"cwds": [str(cwd)]})["data"]
        assert found["warnings"] == [] and found["errors"] == [], found
        return found["hooks"]

    def turn(self, cwd: Path, prompt: str) -> list[dict]:
        """Run one turn of a new thread in `cwd` (no sandbox, no approvals) and return the hook runs Codex reported
        to its client (`hook/completed`), each with the `entries` a user interface shows."""
        return self.go_on(self.thread(cwd), prompt)

    def thread(self, cwd: Path) -> str:
        """A new thread (a session) in `cwd`, with no sandbox and no approvals: its id."""
        params = {"cwd": str(cwd), "approvalPolicy": "never", "sandbox": "danger-full-access"}
        return self.request("thread/start", params)["thread"]["id"]

    def go_on(self, thread: str, prompt: str) -> list[dict]:
        """Run one turn of `thread` with `prompt`; the hook runs Codex reported, as `turn` returns them."""
        self.request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": prompt}]})
        return self._until_turn_completed()

    def compact(self, thread: str) -> None:
        """Compact `thread` now (`thread/compact/start`, the manual compaction the app-server offers its clients);
        Codex runs it as a turn of its own, and SessionStart (`source: compact`) comes with the next turn."""
        self.request("thread/compact/start", {"threadId": thread})
        self._until_turn_completed()

    def _until_turn_completed(self) -> list[dict]:
        runs = []
        while True:
            try:
                message = json.loads(self.lines.get(timeout=RUN_TIMEOUT))
            except queue.Empty:
                pytest.fail(f"codex app-server did not finish the turn within {RUN_TIMEOUT} s")
            if message.get("method") == "hook/completed":
                runs.append(message["params"]["run"])
            if message.get("method") == "turn/completed":
                assert message["params"]["turn"]["status"] == "completed", message
                return runs

    def trust(self, hook: dict) -> None:
        """Trust `hook` (an entry of `hooks`) as it is now."""
        value = {hook["key"]: {"trusted_hash": hook["currentHash"]}}
        edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": value}
        assert self.request("config/batchWrite", {"edits": [edit]})["status"] == "ok"

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)


class Claude(AgentCli):
    """`claude -p` against a scripted Messages API; as root only `--allowedTools Bash` lets commands run (C1)."""

    name = "claude"
    model_class = AnthropicModel

    def env(self) -> dict[str, str]:
        return {
            **super().env(),
            "ANTHROPIC_BASE_URL": self.model.url,
            "ANTHROPIC_API_KEY": "scripted-model-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def argv(self, cwd: Path, extra: Sequence[str]) -> list[str]:
        # the prompt goes on stdin: --allowedTools is variadic and would swallow it
        return [str(self.binary), "-p", "--output-format", "json", *extra, "--allowedTools", "Bash"]

    def resume(self, session: str, prompt: str, *, cwd: Path | None = None) -> Run:
        """`claude -p --resume SESSION` with `prompt`."""
        return self.run(prompt, cwd=cwd, args=["--resume", session])

    @staticmethod
    def session_id(run: Run) -> str:
        """The id of the session a run started (in its JSON result)."""
        return json.loads(run.out)["session_id"]


CLIS: dict[str, type[AgentCli]] = {"codex": Codex, "claude": Claude}
