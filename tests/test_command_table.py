"""The table of commands is the one list of them: each command's module declares exactly the ACTIONs the table
names, every command line a message names is built from the table, and the help lists what the table holds."""

from __future__ import annotations

import argparse
import importlib

import pytest

import tools
from agent_memory import commands
from agent_memory.cli.parsing import Parser


def declared_actions(name: str) -> tuple[str, ...]:
    """The ACTION words the module of command `name` declares on its parser."""
    parser = Parser(prog=f"agent-memory {name}")
    importlib.import_module(commands.TABLE[name].module).declare(parser)
    found = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return tuple(found[0].choices) if found else ()


@pytest.mark.parametrize("name", list(commands.TABLE))
def test_each_module_declares_the_actions_the_table_names(name):
    assert declared_actions(name) == commands.TABLE[name].actions


def test_a_command_line_is_built_from_the_table_or_refused():
    assert commands.line("pending", "retry", "20260101-000000-000000-0123456789") == (
        "agent-memory pending retry 20260101-000000-000000-0123456789"
    )
    assert commands.line("project", "map", "NAME", "/tmp/a folder") == "agent-memory project map NAME '/tmp/a folder'"
    assert commands.line("hook", "stop", "--agent", "codex") == "agent-memory hook stop --agent codex"
    with pytest.raises(ValueError, match="no command"):
        commands.line("pendng")
    with pytest.raises(ValueError, match="no ACTION 'retyr'"):
        commands.line("pending", "retyr")


def test_the_help_is_the_table(machine):
    shown = machine.run("--help")
    tools.exited(shown)
    for name, command in commands.TABLE.items():
        if " " not in name:
            assert name in shown.out and command.summary.split()[0] in shown.out
    events = machine.run("hook", "--help")
    tools.exited(events)
    assert all(name.split()[1] in events.out for name in commands.family("hook"))
    unknown = machine.run("bogus")
    tools.exited(unknown, 2)
    assert "invalid choice: 'bogus'" in unknown.err and "Next: agent-memory --help" in unknown.err


def test_a_hook_never_fails_even_on_arguments_it_cannot_read(machine):
    for argv in (["hook"], ["hook", "pre-tool-use", "--agent", "codex"], ["hook", "stop", "--agent", "cursor"]):
        result = machine.run(*argv, input="{}")
        tools.exited(result, about=argv)
        assert result.out == "", argv
        assert len(result.err.splitlines()) == 1 and result.err.startswith("agent-memory hook: "), result.err
