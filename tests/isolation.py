"""The environment of a simulated machine, shared by the test fixtures and the benchmarks."""

from __future__ import annotations

from pathlib import Path


def machine_env(home: Path, state: Path) -> dict[str, str]:
    """Variables that give a machine its own HOME, agent-memory state, Hugging Face caches and agent folders."""
    return {
        "HOME": str(home),
        "AGENT_MEMORY_HOME": str(state),
        "HF_HOME": str(home / ".cache" / "huggingface"),
        "HF_XET_CACHE": str(home / ".cache" / "xet"),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }
