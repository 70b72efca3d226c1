"""Shared fixtures: every test gets its own HOME, agent-memory home, agent config folders and, when asked
for, its own Hub emulator. Nothing touches the real home, the real Hub, the network or real credentials.

Commands run as real processes (`python -m agent_memory`), as an agent would call them.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent))  # the Space's own code (space/) beside build.py

import followers  # noqa: E402
import in_process  # noqa: E402
import tools  # noqa: E402
from file_order import FileTimes  # noqa: E402
from hub_emulator import HubEmulator  # noqa: E402
from isolation import machine_env  # noqa: E402

OWNER = "alice"
TOKEN = "hf_" + "a" * 34  # emulator-only token: never a real credential
BUCKET = f"{OWNER}/memory"

# variables of the real environment that would leak the developer's setup into a test
_SCRUBBED = (
    "HF_TOKEN",
    "HF_ENDPOINT",
    "HUGGING_FACE_HUB_TOKEN",
    "AGENT_MEMORY_AGENT",
    "AGENT_MEMORY_HOME",
    "AGENT_MEMORY_DEBUG",
    "CODEX_THREAD_ID",
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
)


# what a new user's login shell reads on most Linux systems (Debian's /etc/skel/.profile says the same): the user's
# own command folder is on PATH once it exists, so `agent-memory`, linked there by bootstrap, is found
NEW_USER_PROFILE = 'if [ -d "$HOME/.local/bin" ]; then\n    PATH="$HOME/.local/bin:$PATH"\nfi\n'


@dataclass
class Result:
    """What a command did: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def json(self) -> dict:
        return json.loads(self.out)


class Machine:
    """One simulated machine: its own HOME and agent-memory state, and a checkout to work in."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.home = root / "home"
        self.state = root / "agent-memory"
        self.work = root / "work" / "checkout"
        for folder in (self.home, self.state, self.work):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / ".profile").write_text(NEW_USER_PROFILE)
        self.base_env = env  # shared with the fixtures: a Hub emulator started later adds its variables
        self.own_env = machine_env(self.home, self.state)

    @property
    def env(self) -> dict[str, str]:
        """The environment of this machine's commands."""
        return {**self.base_env, **self.own_env}

    def run(
        self,
        *args: str,
        input: str | bytes | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        process: bool = False,
    ) -> Result:
        """Run `agent-memory ARGS...` on this machine: inside the test process (see `in_process`), or as a real
        process when `process` is set or the command needs one."""
        data = input.encode() if isinstance(input, str) else input
        if not (process or in_process.needs_process(args, env or {})):
            code, out, err = in_process.run(args, data or b"", cwd or self.work, {**self.env, **(env or {})})
            return Result(code, out.decode(), err.decode())
        proc = subprocess.run(
            [sys.executable, "-m", "agent_memory", *args],
            input=data if data is not None else b"",
            capture_output=True,
            cwd=cwd or self.work,
            env={**self.env, **(env or {})},
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    def popen(self, *args: str, input: bytes = b"", env: dict[str, str] | None = None) -> subprocess.Popen:
        """Start `agent-memory ARGS...` without waiting (for concurrency and kill tests)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_memory", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.work,
            env={**self.env, **(env or {})},
        )
        assert proc.stdin is not None
        proc.stdin.write(input)
        proc.stdin.close()
        proc.stdin = None  # already closed: communicate() must not flush it
        return proc

    def setup(self, bucket: str, project: str = "demo") -> Machine:
        """Configure the bucket and map the checkout to `project`."""
        tools.exited(self.run("config", "set", "bucket", bucket))
        tools.exited(self.run("project", "map", project))
        return self

    def save(self, body: str, *args: str, env: dict[str, str] | None = None) -> Result:
        """`agent-memory save --json ARGS` with `body` on stdin."""
        return self.run("save", "--json", *args, input=body, env=env)

    @property
    def backoff(self) -> Path:
        """The hooks' wait after a failed retry (`outbox/backoff.py`)."""
        return self.state / "state" / "retry-backoff.json"

    @property
    def outage(self) -> Path:
        """The bucket's outage, which makes every command answer from what is local (`store/outage.py`)."""
        return self.state / "state" / "outage.json"

    def wait_over(self) -> None:
        """As if the hooks' wait had passed, and the outage's, if one was recorded: their ends moved to the past,
        their counts of failures kept."""
        for file in (self.backoff, self.outage):
            if file.exists() or file == self.backoff:
                record = json.loads(file.read_text())
                file.write_text(json.dumps({**record, "until": time.time() - 1}))


_file_times: FileTimes | None = None  # the main process's (a parallel worker only runs what it is handed)


def pytest_configure(config: pytest.Config) -> None:
    """The helper compiled once, before any test (by the main process, not by each parallel worker): the commands
    that the tests start as processes run with PYTHONDONTWRITEBYTECODE (`base_env`), so on a clean clone each of
    them would compile from source every module it loads that no test had imported in-process yet.

    The files go to the parallel workers in the order `pytest_collection_modifyitems` gives them (`file_order`):
    pytest-xdist would otherwise hand out the files with the most tests first (its `--loadscope-reorder`), which
    left the longest files, that hold few tests, to the end of the run."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(__file__).parent.parent / "helper" / "agent_memory", quiet=1)
        global _file_times
        _file_times = FileTimes(config)
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="after a whole run that passes, write each file's time to tests/durations.json (the order a fresh clone "
        "starts from)",
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (the README's command): one process more than the cores. Most tests spend part of their time waiting
    (for a command, a hung Hub's budget, a browser) rather than computing: with one process per core a core idled
    through each wait. Measured on the two-core development machine, shared, its load average about 6 from other
    work: four of the longest files in 155 s with three processes where two took 213 s; the whole suite in 589 s
    with three (and the longest files first) where two had taken 805 s earlier that day."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first, as measured (`file_order`): the parallel run then ends on short files."""
    if _file_times is not None:
        _file_times.order(items)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test's time, as the main process hears of it (from every parallel worker)."""
    if _file_times is not None:
        _file_times.add(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _file_times is not None:
        _file_times.finish(session, exitstatus)


@pytest.fixture(autouse=True)
def base_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment with nothing of the real machine's agent, Hub or agent-memory setup."""
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _SCRUBBED and not key.startswith(("HF_", "AGENT_MEMORY_"))
    }
    env.update(
        {
            "NO_COLOR": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            # a command's network budget: 20 s on an idle machine, more on a loaded one (a budget spent by waiting
            # for a core would turn a save pending, and the test's verdict would depend on the machine's load)
            "AGENT_MEMORY_TIMEOUT": f"{tools.scaled(20):.0f}",
            # and a hook's (its own 5 s by default) likewise: on a loaded machine the Stop hook's push spent its 5 s
            # starting up and asking the Hub what changed, and the upload was left pending for a later turn
            "AGENT_MEMORY_HOOK_BUDGET": f"{tools.scaled(5):.0f}",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    monkeypatch.setenv("HOME", str(tmp_path / "pytest-home"))
    return env


@pytest.fixture
def folder_store(tmp_path: Path) -> str:
    """A `file://` store URI (the folder exists, owner-only)."""
    store = tmp_path / "store"
    store.mkdir(mode=0o700)
    return f"file://{store}"


@pytest.fixture
def machine(request: pytest.FixtureRequest, tmp_path: Path, base_env: dict[str, str]) -> Iterator[Machine]:
    """A machine with nothing configured (in /var/tmp for a test marked `outside_tmp`)."""
    yield from _machine(request, tmp_path / "machine-a", base_env)


@pytest.fixture
def machine_b(request: pytest.FixtureRequest, tmp_path: Path, base_env: dict[str, str]) -> Iterator[Machine]:
    """A second machine with nothing configured (in /var/tmp for a test marked `outside_tmp`)."""
    yield from _machine(request, tmp_path / "machine-b", base_env)


def _machine(request: pytest.FixtureRequest, root: Path, base_env: dict[str, str]) -> Iterator[Machine]:
    if request.node.get_closest_marker("outside_tmp") is None:
        made = Machine(root, base_env)
        yield made
        followers.stop(made.state)  # its Hub emulator is stopped by now: each ends by itself within a moment
    else:
        yield from outside_tmp(base_env)


@pytest.fixture
def hub(tmp_path: Path, base_env: dict[str, str]):
    """A running Hub emulator with user alice (write token TOKEN) owning the private bucket alice/memory."""
    emulator = HubEmulator(tmp_path / "hub").start()
    emulator.add_user(OWNER, TOKEN)
    emulator.create_bucket(BUCKET, private=True)
    base_env.update({"HF_ENDPOINT": emulator.url, "HF_TOKEN": TOKEN})
    yield emulator
    emulator.stop()


@pytest.fixture(params=["folder", "hub"])
def bucket(request, tmp_path, base_env) -> str:
    """The two stores: a folder store, and the Hub emulator's private bucket."""
    if request.param == "folder":
        return request.getfixturevalue("folder_store")
    request.getfixturevalue("hub")
    return BUCKET


@pytest.fixture
def alice(machine: Machine, hub) -> Machine:
    """Machine A set up on the emulated bucket alice/memory."""
    return machine.setup(BUCKET)


@pytest.fixture
def bob(machine_b: Machine, hub) -> Machine:
    """Machine B set up on the same bucket."""
    return machine_b.setup(BUCKET)


@pytest.fixture
def ready(machine: Machine, folder_store: str) -> Machine:
    """Machine A set up on a `file://` folder store."""
    return machine.setup(folder_store)


@pytest.fixture
def machine_outside_tmp(base_env):
    """A machine outside /tmp, which Codex's workspace-write sandbox leaves writable (see outside_tmp).

    The Hub emulator stays under the test's temporary folder: hf_xet writes uploads straight into its local CAS
    folder, where the real Hub would take them over the network.
    """
    yield from outside_tmp(base_env)


def outside_tmp(base_env: dict[str, str]) -> Iterator[Machine]:
    """A machine whose HOME, state and checkout are in /var/tmp, removed after the test.

    Codex's workspace-write sandbox leaves /tmp writable. And while it runs a command, it mounts a read-only
    `/tmp/.git` over a folder it makes on the real disk (to protect a repository there), so for that moment every
    folder under /tmp lies in a "git repository" rooted at /tmp. Claude Code then keys its auto memory by /tmp, and
    so does the helper, which follows Claude Code's rules: a test that computes the memory folder of a checkout in
    no repository is marked `outside_tmp` (a parallel sandbox test once moved machine B's pulled memory files, and
    machine A's files to push, into `~/.claude/projects/-tmp/memory`, 2026-12-03).
    """
    root = Path(tempfile.mkdtemp(prefix="agent-memory-test-", dir="/var/tmp"))
    made = Machine(root, base_env)
    yield made
    followers.stop(made.state)
    shutil.rmtree(root, ignore_errors=True)
