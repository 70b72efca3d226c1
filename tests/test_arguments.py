"""Arguments from outside: `--agent codex|claude|both` everywhere, text that is not UTF-8, and names that end in
a newline. Each is refused as a usage error (exit 2) with a Next line, and changes nothing."""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path

import pytest

import tools
from agent_memory.cli.parsing import Parser, subcommands
from agent_memory.errors import UsageError

REVISION = "20260101-000000-000000-0123456789"
NOTE_ID = "20260101-000000-000000-abcdefabcd"


def snapshot(machine) -> dict[str, bytes]:
    """Every file of the machine (its state, home and checkout), to prove that a refusal changed nothing."""
    return {str(p): p.read_bytes() for p in sorted(machine.root.rglob("*")) if p.is_file()}


def assert_usage(result, fragment: str) -> None:
    tools.exited(result, 2)
    assert "Traceback" not in result.err and "Unexpected" not in result.err
    assert fragment in result.err, result.err
    assert "\nNext: " in result.err


# -- --agent -----------------------------------------------------------------------------------------------------


AGENT_COMMANDS = [
    ("install-skill", "x", "--revision", REVISION),
    ("bootstrap",),
    ("instructions", "remove"),
    ("hooks", "install"),
    ("hooks", "remove"),
    ("hooks", "status"),
]


@pytest.mark.parametrize(
    "command", [command[:2] if command[0] != "install-skill" else command[:1] for command in AGENT_COMMANDS]
)
def test_help_offers_codex_claude_both(machine, command):
    shown = machine.run(*command, "--help")
    tools.exited(shown)
    assert "--agent {codex,claude,both}" in shown.out and "all}" not in shown.out


def test_agent_both_and_its_old_alias_all_on_every_command(machine, folder_store, tmp_path):
    skill = tmp_path / "src" / "x-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: x-skill\ndescription: Does x.\n---\nbody\n")
    boot = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--agent", "both", "--json")
    tools.exited(boot)
    assert boot.json["agents"] == ["codex", "claude"]
    revision = machine.run("publish-skill", str(skill), "--json").json["revision"]
    codex_skill = machine.home / ".agents" / "skills" / "x-skill"
    claude_skill = machine.home / ".claude" / "skills" / "x-skill"
    for value in ("both", "all"):
        installed = machine.run("install-skill", "x-skill", "--revision", revision, "--agent", value, "--json")
        tools.exited(installed)
        assert installed.json["installed"] == [str(codex_skill), str(claude_skill)]
    removed = machine.run("instructions", "remove", "--agent", "all", "--json")
    tools.exited(removed)
    assert len(removed.json["removed"]) == 2
    assert machine.run("bootstrap", "--project", "demo", "--agent", "all", "--json").json["agents"] == [
        "codex",
        "claude",
    ]
    assert machine.run("instructions", "remove", "--agent", "both", "--json").json["removed"] == [
        str(machine.home / ".codex" / "AGENTS.md"),
        str(machine.home / ".claude" / "CLAUDE.md"),
    ]
    for value in ("both", "all"):
        shown = machine.run("hooks", "status", "--agent", value, "--json")
        tools.exited(shown)
        assert [entry["agent"] for entry in shown.json["agents"]] == ["codex", "claude"]


@pytest.mark.parametrize("command", AGENT_COMMANDS)
def test_an_unknown_agent_is_a_usage_error(machine, command):
    before = snapshot(machine)
    assert_usage(machine.run(*command, "--agent", "cursor"), "invalid choice: 'cursor'")
    assert snapshot(machine) == before


@pytest.mark.parametrize(
    ("command", "own"),
    [
        (("hooks", "install", "--agent", "codex"), "hooks install"),
        (("sync", "status"), "sync status"),
        (("pending", "retry"), "pending retry"),
        (("project", "show"), "project show"),
        (("status",), "status"),
    ],
)
def test_an_unknown_argument_names_the_help_of_the_command_it_was_given_to(machine, command, own):
    before = snapshot(machine)
    result = machine.run(*command, "--bogus")
    assert_usage(result, "unrecognized arguments: --bogus.")
    assert result.err.endswith(f"\nNext: agent-memory {own} --help\n")
    assert snapshot(machine) == before


@pytest.mark.parametrize("argparse_calls_the_actions_parser", [True, False])
def test_the_actions_help_is_named_whichever_parser_argparse_asks(monkeypatch, argparse_calls_the_actions_parser):
    """Python 3.10 to 3.13 parse an ACTION's arguments with that action's own `parse_known_args`, which refuses what
    is left; an argparse that did not would leave it to the command's parser, which names the same --help."""
    parser = Parser(prog="agent-memory hooks")
    install = subcommands(parser).add_parser("install")
    install.add_argument("--agent")
    if not argparse_calls_the_actions_parser:  # as argparse's own method, which refuses nothing
        plain = functools.partial(argparse.ArgumentParser.parse_known_args, install)
        monkeypatch.setattr(install, "parse_known_args", plain)
    with pytest.raises(UsageError) as refused:
        parser.parse_args(["install", "--agent", "codex", "--bogus"])
    assert (refused.value.message, refused.value.next_step) == (
        "unrecognized arguments: --bogus.",
        "agent-memory hooks install --help",
    )
    assert parser.parse_args(["install", "--agent", "codex"]).agent == "codex"


# -- text that is not UTF-8 --------------------------------------------------------------------------------------

LATIN1 = os.fsdecode(b"caf\xe9")  # what Python makes of the bytes: 'caf\udce9'


@pytest.mark.parametrize(
    "args",
    [
        ("save", "--title", LATIN1),
        ("save", "--title", "ok", "--tag", LATIN1),
        ("save", "--title", "ok", "--source", LATIN1),
        ("save", "--title", "ok", "--agent", LATIN1),
        ("save", "--file", LATIN1),
        ("search", LATIN1),
        ("read", LATIN1),
        ("project", "map", LATIN1),
        ("config", "set", "bucket", "file:///tmp/" + LATIN1),
        ("publish-skill", LATIN1),
        ("install-skill", LATIN1, "--revision", REVISION),
        ("bootstrap", "--project", LATIN1),
        ("pending", "export", LATIN1, "--to", "x"),
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(machine, folder_store, args):
    machine.setup(folder_store)
    before = snapshot(machine)
    result = machine.run(*args, "--json", input="Body of a note.\n")
    assert_usage(result, "is not valid UTF-8 text")
    assert "caf\\xe9" in result.err  # the bytes, as they were given
    assert json.loads(result.out)["exit_code"] == 2
    assert snapshot(machine) == before


def test_an_agent_name_from_the_environment_that_is_not_utf8(machine, folder_store):
    machine.setup(folder_store)
    result = machine.save("Body.", env={"AGENT_MEMORY_AGENT": LATIN1})
    assert_usage(result, "The agent name is not valid UTF-8 text.")
    assert machine.run("pending", "--json").json["notes"] == []


def test_a_directory_whose_name_is_not_utf8_cannot_be_mapped(machine, tmp_path):
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9"))
    folder.mkdir()
    result = machine.run("project", "map", "demo", cwd=folder)
    assert_usage(result, "is not valid UTF-8, so it cannot be mapped")
    assert not (machine.state / "config" / "config.json").exists()
    # unmapped there: the next step is the rename, never a `project map` of a path that would be refused
    shown = machine.run("project", "show", cwd=folder)
    tools.exited(shown, 3)
    assert (
        shown.err.splitlines()[-1]
        == "Next: rename the folder to a UTF-8 name, then run in it: agent-memory project map NAME"
    )


def test_titles_and_tags_with_control_characters_are_refused(machine, folder_store):
    machine.setup(folder_store)
    assert_usage(machine.run("save", "--title", "a\x1b[31mred", input="Body."), "title contains control characters")
    assert_usage(machine.run("save", "--tag", "x\x7f", input="Body."), "tag contains control characters")
    assert machine.run("pending", "--json").json["notes"] == []


def test_utf8_text_is_kept_exactly(machine, folder_store):
    machine.setup(folder_store)
    saved = machine.save("Body.", "--title", "café — été", "--tag", "naïve")
    tools.exited(saved)
    text = machine.run("read", saved.json["id"]).out
    assert "title: café — été\n" in text and "- naïve\n" in text


# -- names that end in a newline ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("project", "map", "demo\n"), "Invalid project name 'demo\\n'"),
        (("bootstrap", "--project", "demo\n"), "Invalid project name 'demo\\n'"),
        (("read", NOTE_ID + "\n"), "Invalid note id"),
        (("save", "--retry", NOTE_ID + "\n"), "Invalid note id"),
        (("save", "--corrects", NOTE_ID + "\n"), "Invalid note id"),
        (("install-skill", "x-skill\n", "--revision", REVISION), "Invalid skill name 'x-skill\\n'"),
        (("install-skill", "x-skill", "--revision", REVISION + "\n"), "Invalid revision"),
        (("read", "--skill", "x-skill\n", "--revision", REVISION), "Invalid skill name"),
        (("read", "--skill", "x-skill", "--revision", REVISION + "\n"), "Invalid revision"),
        (("publish-skill", "--retry", REVISION + "\n"), "Invalid revision"),
        (("bootstrap", "--project", "demo", "--skill", f"x-skill@{REVISION}\n"), "Invalid revision"),
        (("bootstrap", "--project", "demo", "--skill", f"x-skill\n@{REVISION}"), "Invalid skill name"),
    ],
)
def test_a_name_ending_in_a_newline_is_a_usage_error(machine, folder_store, args, fragment):
    machine.setup(folder_store)
    store = Path(folder_store[len("file://") :])
    before, stored = snapshot(machine), tree(store)
    result = machine.run(*args, input="Body of a note.\n")
    assert_usage(result, fragment)
    assert snapshot(machine) == before and tree(store) == stored


def test_an_outbox_id_ending_in_a_newline_is_refused(machine, folder_store):
    """`pending export|discard` refuse the id as a usage error (exit 2), and never build a path from it."""
    machine.setup(folder_store)
    before = snapshot(machine)
    for args in (("pending", "export", NOTE_ID + "\n", "--to", "out.md"), ("pending", "discard", NOTE_ID + "\n")):
        result = machine.run(*args)
        tools.exited(result, 2)
        assert "Invalid id" in result.err and "\nNext: " in result.err
    assert snapshot(machine) == before


@pytest.mark.parametrize("value", ["alice/memory\n", " alice/memory \n", "hf://buckets/alice/memory\n"])
def test_a_bucket_with_a_trailing_newline_is_stored_without_it(machine, value):
    result = machine.run("config", "set", "bucket", value, "--json")
    tools.exited(result)
    assert result.json["bucket"] == "hf://buckets/alice/memory"
    config = json.loads((machine.state / "config" / "config.json").read_text())
    assert config["bucket"] == "hf://buckets/alice/memory"


def test_a_folder_store_with_a_trailing_newline_is_stored_without_it(machine, folder_store):
    result = machine.run("config", "set", "bucket", folder_store + "\n", "--json")
    tools.exited(result)
    assert result.json["bucket"] == folder_store


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "value", ["file:///tmp/store\ntouch x", "file:///tmp/st\tore", "file:///tmp/a%0Ab", "alice/me\x7fmory"]
)
def test_a_bucket_with_control_characters_inside_is_refused(machine, value):
    result = machine.run("config", "set", "bucket", value)
    tools.exited(result, 2)
    assert "Malformed" in result.err and "\nNext: " in result.err
