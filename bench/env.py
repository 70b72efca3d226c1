"""Isolated machines for the benchmarks: their own HOME and agent-memory state, and the Hub emulator.

Nothing touches the real home, the real Hub or real credentials (the same rules as the tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the Hub emulator and the machine isolation of the test suite
sys.path.insert(1, str(REPO))  # the Space's own code (space/)

from isolation import machine_env  # noqa: E402

BIN = Path(sys.executable).parent
AGENT_MEMORY = str(BIN / "agent-memory")
HF = str(BIN / "hf")
OWNER = "alice"
TOKEN = "hf_" + "b" * 34  # emulator-only token: never a real credential
BUCKET = f"{OWNER}/memory"

# variables of the real environment that would leak the developer's setup into a run
_SCRUBBED_PREFIXES = ("HF_", "HUGGING_FACE_", "AGENT_MEMORY_", "XDG_", "CODEX_", "CLAUDE")
_SCRUBBED = ("AI_AGENT", "AGENT")  # agent detection (hf switches its output format when it sees an agent)


def base_env() -> dict[str, str]:
    """The caller's environment without Hub, agent or agent-memory settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_SCRUBBED_PREFIXES) and key not in _SCRUBBED
    }
    env.update({"NO_COLOR": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
    # hf checks PyPI for a newer version once a day: never from a benchmark (no real network, steady state)
    env["HF_HUB_DISABLE_UPDATE_CHECK"] = "1"
    return env


class Machine:
    """One simulated machine: HOME, AGENT_MEMORY_HOME, Hugging Face caches, and a checkout to work in."""

    def __init__(self, root: Path, extra_env: dict[str, str] | None = None) -> None:
        self.root = root
        self.home = root / "home"
        self.state = root / "agent-memory"
        self.work = root / "checkout"
        for folder in (self.home, self.state, self.work):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = {**base_env(), **machine_env(self.home, self.state), **(extra_env or {})}
        # hf caches the Hub's list of agent harnesses for a day; the emulator does not serve it, and without a
        # cached copy every hf command would ask again: seed an empty one, as after the first call of the day
        harnesses = Path(self.env["HF_HOME"]) / ".agent_harnesses.json"
        harnesses.parent.mkdir(parents=True, exist_ok=True)
        harnesses.write_text('{"standardEnvVars": [], "harnesses": {}}')

    def argv(self, *args: str) -> list[str]:
        """The command line of `agent-memory ARGS...`."""
        return [AGENT_MEMORY, *args]

    def run(
        self, argv: list[str], *, ok: tuple[int, ...] = (0,), env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run a command on this machine (in its checkout), with `env` added; fail loudly on an unexpected exit
        code."""
        environment = {**self.env, **(env or {})}
        proc = subprocess.run(argv, cwd=self.work, env=environment, capture_output=True, stdin=subprocess.DEVNULL)
        if proc.returncode not in ok:
            raise RuntimeError(
                f"{' '.join(argv)} exited {proc.returncode}\nstdout: {proc.stdout.decode()[-2000:]}\n"
                f"stderr: {proc.stderr.decode()[-2000:]}"
            )
        return proc

    def agent_memory(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """Run `agent-memory ARGS...` and require success."""
        return self.run(self.argv(*args))

    def setup(self, bucket: str, project: str) -> Machine:
        """Configure the bucket and map the checkout to `project`."""
        self.agent_memory("config", "set", "bucket", bucket)
        self.agent_memory("project", "map", project)
        return self

    def cached_notes(self, project: str) -> Path:
        """The cache folder holding this machine's copies of the project's notes."""
        found = sorted(self.state.glob(f"cache/*/projects/{project}/notes"))
        if len(found) != 1:
            raise RuntimeError(f"expected one cache of project {project}, found {found}")
        return found[0]


def write_folder(root: Path, files: dict[str, bytes]) -> None:
    """Write `{relative path: bytes}` below `root`."""
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def start_emulator(root: Path):
    """A running Hub emulator (in this process) with user alice owning the private bucket alice/memory."""
    # hf_xet picks its log folder when first imported: keep it inside the run's folder
    os.environ["HF_XET_CACHE"] = str(root / "xet-cache")
    os.environ["HF_HOME"] = str(root / "hf-home")
    from hub_emulator import HubEmulator

    emulator = HubEmulator(root / "hub").start()
    emulator.add_user(OWNER, TOKEN)
    emulator.create_bucket(BUCKET, private=True)
    return emulator


def hub_env(emulator) -> dict[str, str]:
    """The variables that point a machine at the emulator."""
    return {"HF_ENDPOINT": emulator.url, "HF_TOKEN": TOKEN}
