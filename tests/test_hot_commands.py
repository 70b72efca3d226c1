"""The hot commands (`search`, `status`) are parsed by hand, without argparse, and must mean exactly what
argparse would make of the same command line; whatever the hand parser does not take goes to argparse, so
help and usage errors are the same as ever."""

from __future__ import annotations

import pytest

from agent_memory import cli

SAME = [
    ["search"],
    ["search", "stale lockfile"],
    ["search", ""],
    ["search", "a=b", "--json"],
    ["search", "--json", "query", "--limit", "3", "--kind", "checkpoint"],
    ["search", "--limit=7", "--kind=note", "--offline", "--skills", "x"],
    ["search", "--limit", "2", "--limit", "5", "q"],
    ["search", "--limit", " 5", "q"],
    ["status"],
    ["status", "--json"],
    ["status", "--json", "--json"],
]
LEFT_TO_ARGPARSE = [
    ["search", "--help"],
    ["search", "-h"],
    ["search", "--lim", "3"],  # an abbreviation
    ["search", "--", "--json"],
    ["search", "-5"],
    ["search", "--limit", "-5"],
    ["search", "--limit", "x"],
    ["search", "--limit"],
    ["search", "--kind", "other"],
    ["search", "--json=yes"],
    ["search", "one", "two"],
    ["status", "extra"],
    ["status", "--jso"],
]


def _argparse(argv: list[str]) -> dict:
    values = vars(cli._build_parser(argv[0]).parse_args(argv))
    return {key: value for key, value in values.items() if key not in ("handler", "command")}


@pytest.mark.parametrize("argv", SAME, ids=" ".join)
def test_the_hand_parser_agrees_with_argparse(argv):
    parser, _handler = cli._HOT[argv[0]]
    parsed = parser.parse(argv[1:])
    assert parsed is not None
    assert vars(parsed) == _argparse(argv)


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=" ".join)
def test_what_the_hand_parser_does_not_take_goes_to_argparse(argv):
    parser, _handler = cli._HOT[argv[0]]
    assert parser.parse(argv[1:]) is None


def test_hot_commands_do_not_load_argparse_and_the_rest_still_works(machine, folder_store):
    ready = machine.setup(folder_store)
    note = ready.save("the hot path").json
    for args in (("search", "hot", "--offline"), ("search", "hot"), ("status",)):
        result = ready.run(*args, "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert result.code == 0, result.err
        assert "agent_memory.cli" in result.err  # the import log is really there
        assert "argparse" not in result.err, args
    assert [r["id"] for r in ready.run("search", "--off", "hot", "--json").json["results"]] == [note["id"]]

    shown = ready.run("search", "--help")
    assert shown.code == 0 and shown.out.startswith("usage: agent-memory search [-h] [--json]")
    assert "--offline" in shown.out and "literal text, case-insensitive" in shown.out
    wrong = ready.run("search", "--limit", "x")
    assert wrong.code == 2
    assert wrong.err == "Error: argument --limit: invalid int value: 'x'.\nNext: agent-memory search --help\n"
    extra = ready.run("status", "--bogus", "--json")
    assert extra.code == 2 and extra.json["error"] == "unrecognized arguments: --bogus."
    assert ready.run("search", "--limit", "0").err.startswith("Error: --limit must be between 1 and 1000.")
