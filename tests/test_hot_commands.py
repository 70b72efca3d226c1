"""The commands that agents and hooks run most (`search`, `status`, the hooks) stay light: they never load the
network or YAML libraries unless they use them, and their help and usage errors read like every other command's."""

from __future__ import annotations

import pytest

import tools

HEAVY = ("huggingface_hub", "hf_xet", "yaml", "httpx2")


@pytest.mark.parametrize(
    "args",
    [
        ("search", "hot", "--offline", "--json"),
        ("status", "--json"),
        ("hook", "session-start", "--agent", "claude"),
        ("hook", "stop", "--agent", "codex"),
    ],
    ids=" ".join,
)
def test_the_hot_commands_load_no_network_or_yaml_library(ready, args):
    ready.save("the hot path")
    result = ready.run(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})  # a real process: its own import log
    tools.exited(result)
    assert "agent_memory" in result.err  # the import log is really there
    loaded = {line.rsplit("|", 1)[-1].strip() for line in result.err.splitlines() if line.startswith("import time:")}
    assert not {name for name in loaded if name.split(".")[0] in HEAVY}, args


def test_search_help_and_usage_errors(ready):
    note = ready.save("the hot path").json
    assert [r["id"] for r in ready.run("search", "--off", "hot", "--json").json["results"]] == [note["id"]]
    shown = ready.run("search", "--help")
    tools.exited(shown)
    assert shown.out.startswith("usage: agent-memory search [-h] [--json]")
    assert "--offline" in shown.out and "literal text, case-insensitive" in shown.out
    wrong = ready.run("search", "--limit", "x")
    tools.exited(wrong, 2)
    assert wrong.err == "Error: argument --limit: invalid int value: 'x'.\nNext: agent-memory search --help\n"
    extra = ready.run("status", "--bogus", "--json")
    tools.exited(extra, 2)
    assert extra.json["error"] == "unrecognized arguments: --bogus."
    assert ready.run("search", "--limit", "0").err.startswith("Error: --limit must be between 1 and 1000.")
