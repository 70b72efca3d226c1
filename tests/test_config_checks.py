"""A configuration file that is not what agent-memory writes is an error that names the file, the key and the
repair, from every command that reads it; and a bucket that cannot be shown as itself is never configured."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import tools
from agent_memory import paths
from agent_memory.config import settings as config
from agent_memory.errors import AgentMemoryError

# name -> (the file's bytes, what the error says, what its Next: says)
SHAPES: dict[str, tuple[bytes, str, str]] = {
    "not-json": (
        b'{"bucket": "hf://buckets/alice/memory", ',
        "is not valid JSON",
        "fix or remove",
    ),
    "not-utf8": (b'{"bucket": "\xff\xfe"}', "is not valid JSON", "fix or remove"),
    "nested-too-deep": (b"[" * 200_000, "is not valid JSON", "fix or remove"),
    "a-list": (b"[1, 2]", "does not hold a JSON object (it holds a list of 2 items)", "fix or remove"),
    "a-string": (b'"oops"', 'does not hold a JSON object (it holds "oops")', "fix or remove"),
    "null": (b"null", "does not hold a JSON object (it holds null)", "fix or remove"),
    "bucket-number": (b'{"bucket": 5}', 'its "bucket" is 5, not a bucket URI', "agent-memory config set bucket"),
    "bucket-list": (b'{"bucket": ["a/b"]}', 'its "bucket" is a list of 1 item', "agent-memory config set bucket"),
    "bucket-null": (b'{"bucket": null}', 'its "bucket" is null', "agent-memory config set bucket"),
    "bucket-not-a-uri": (b'{"bucket": "alice/memory"}', 'its "bucket" is "alice/memory"', "config set bucket"),
    "bucket-relative-folder": (b'{"bucket": "file://store"}', '"bucket" is "file://store"', "config set bucket"),
    "bucket-bidi": (b'{"bucket": "file:///tmp/a\\u202eb"}', '"file:///tmp/a\\u202eb"', "config set bucket"),
    "bucket-newline": (b'{"bucket": "hf://buckets/alice/me\\nmory"}', '"bucket" is "hf://', "config set bucket"),
    "projects-string": (b'{"projects": "oops"}', 'its "projects" is "oops", not an object', "project map NAME DIR"),
    "projects-list": (b'{"projects": ["/w"]}', 'its "projects" is a list of 1 item', 'remove "projects"'),
    "projects-relative": (
        b'{"projects": {"work/x": "demo"}}',
        '"work/x" in its "projects" is not an absolute',
        '"work/x"',
    ),
    "projects-empty-key": (b'{"projects": {"": "demo"}}', 'the folder "" in its "projects"', 'entry "" of "projects"'),
    "projects-bad-name": (b'{"projects": {"/w": "../up"}}', 'maps to "../up", which is not a project', 'entry "/w"'),
    "projects-number": (b'{"projects": {"/w": 7}}', "maps to 7, which is not a project name", 'entry "/w"'),
    "core-skill-string": (b'{"core_skill": "0.1"}', 'its "core_skill" is not the record', 'remove "core_skill"'),
    "core-skill-version": (b'{"core_skill": {"version": 1}}', '"core_skill" is not the record', 'remove "core_skill"'),
    "instructions-string": (b'{"instructions_created": "x"}', '"instructions_created" is "x"', "remove"),
    "instructions-null": (b'{"instructions_created": [null]}', '"instructions_created" holds null', "remove"),
}


def write_config(machine, data: bytes) -> Path:
    file = machine.state / "config" / "config.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    return file


def assert_refused(machine, result, file: Path, data: bytes, said: str, next_step: str) -> None:
    tools.exited(result, 1)
    assert result.err.startswith(f"Error: The configuration file {file} ")
    assert said in result.err, result.err
    assert "Unexpected" not in result.err and "Traceback" not in result.err
    (next_line,) = [line for line in result.err.splitlines() if line.startswith("Next: ")]
    assert next_step in next_line, next_line
    assert file.read_bytes() == data  # nothing was changed, not even rewritten


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_damaged_configuration_stops_status_and_save_with_the_repair(machine, shape):
    data, said, next_step = SHAPES[shape]
    file = write_config(machine, data)
    for args, stdin in ((("status",), None), (("save", "--title", "t"), "a note\n")):
        result = machine.run(*args, input=stdin)
        assert_refused(machine, result, file, data, said, next_step)
    as_json = machine.run("status", "--json")
    tools.exited(as_json, 1)
    assert set(as_json.json) == {"error", "next", "exit_code"}
    assert as_json.json["exit_code"] == 1 and said in as_json.json["error"]
    assert not (machine.state / "state" / "outbox").exists() or not list((machine.state / "state" / "outbox").iterdir())


@pytest.mark.parametrize("shape", ["projects-string", "bucket-number", "a-list"])
def test_every_command_that_reads_the_configuration_reports_the_damage(machine, folder_store, shape):
    data, said, next_step = SHAPES[shape]
    file = write_config(machine, data)
    commands = [
        ("search", "query"),
        ("search", "query", "--offline"),
        ("project", "show"),
        ("project", "map", "demo"),
        ("config", "show"),
        ("read", "20260101-000000-000000-0123456789"),
        ("bootstrap", "--project", "demo", "--bucket", folder_store, "--no-hooks"),
    ]
    for args in commands:
        result = machine.run(*args)
        assert_refused(machine, result, file, data, said, next_step)
    assert not (machine.home / ".agents").exists() and not (machine.home / ".claude").exists()  # bootstrap did nothing


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_load_raises_the_one_user_error_type_for_every_shape(tmp_path, monkeypatch, shape):
    """What the SessionStart hook relies on to report the damage into the agent's context."""
    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "state"))
    file = paths.config_file()
    file.parent.mkdir(parents=True)
    file.write_bytes(SHAPES[shape][0])
    with pytest.raises(AgentMemoryError) as caught:
        config.load()
    assert type(caught.value) is AgentMemoryError and caught.value.next_step
    assert str(file) in caught.value.message


def test_a_configuration_file_that_is_too_large_or_unreadable_is_refused(machine):
    file = write_config(machine, b'{"projects": {}' + b" " * config.MAX_BYTES + b"}")
    result = machine.run("status")
    tools.exited(result, 1)
    assert "is larger than 4 MiB" in result.err and "Next: fix or remove" in result.err
    file.unlink()
    file.mkdir()
    result = machine.run("status")
    tools.exited(result, 1)
    assert f"The configuration file {file} cannot be read" in result.err
    assert "Next: " in result.err and "Unexpected" not in result.err


def test_a_configuration_cut_short_is_reported_not_overwritten(ready):
    file = ready.state / "config" / "config.json"
    whole = file.read_bytes()
    file.write_bytes(whole[: len(whole) // 2])
    result = ready.run("project", "map", "other")
    tools.exited(result, 1)
    assert "is not valid JSON" in result.err
    assert file.read_bytes() == whole[: len(whole) // 2]


def test_config_set_bucket_repairs_a_damaged_bucket_and_keeps_the_rest(ready, folder_store):
    file = ready.state / "config" / "config.json"
    values = json.loads(file.read_text())
    values.update(bucket=["not", "a", "bucket"], future_key={"from": "a newer helper"})
    file.write_text(json.dumps(values))
    tools.exited(ready.run("status"), 1)
    repaired = ready.run("config", "set", "bucket", folder_store, "--json")
    tools.exited(repaired)
    after = json.loads(file.read_text())
    assert after == {**values, "bucket": folder_store}  # the mappings and the unknown key are kept
    tools.exited(ready.run("status"))
    tools.exited(ready.save("# Works again\n"))


def test_config_set_bucket_does_not_paper_over_other_damage(ready, folder_store):
    file = ready.state / "config" / "config.json"
    values = {**json.loads(file.read_text()), "projects": "oops"}
    file.write_text(json.dumps(values))
    before = file.read_bytes()
    result = ready.run("config", "set", "bucket", folder_store)
    tools.exited(result, 1)
    assert 'its "projects" is "oops"' in result.err
    assert file.read_bytes() == before


def test_keys_agent_memory_does_not_know_are_kept(ready):
    file = ready.state / "config" / "config.json"
    file.write_text(json.dumps({**json.loads(file.read_text()), "later": [1, {"x": None}]}))
    tools.exited(ready.run("status"))
    tools.exited(ready.run("project", "map", "second", str(ready.root)))
    assert json.loads(file.read_text())["later"] == [1, {"x": None}]


# -- buckets that cannot be shown as themselves --------------------------------------------------------------

UNSHOWABLE = {
    "file:///tmp/store%E2%80%AEgnp.exe": "U+202E",  # right-to-left override, percent-encoded
    "file:///tmp/store%C2%9B31m": "U+009B",  # C1 control sequence introducer
    "file:///tmp/store%E2%80%A8x": "U+2028",  # line separator
    "file:///tmp/store%C2%85x": "U+0085",  # next line
    "file:///tmp/store%D8%9Cx": "U+061C",  # Arabic letter mark
    "file:///tmp/store%E2%81%A9x": "U+2069",  # pop directional isolate
    "file:///tmp/store%E2%80%8Ex": "U+200E",  # left-to-right mark
    "file:///tmp/store%0Ax": "U+000A",
    "file:///tmp/store\u202ex": "U+202E",  # typed, not encoded
    "file:///tmp/store\x9bx": "U+009B",
    "alice/mem\u2066ory": "U+2066",
}


@pytest.mark.parametrize("value", sorted(UNSHOWABLE), ids=lambda value: UNSHOWABLE[value])
def test_config_set_bucket_refuses_what_cannot_be_shown_even_percent_encoded(machine, value):
    result = machine.run("config", "set", "bucket", value)
    tools.exited(result, 2)
    assert f"Malformed bucket {value!r}" in result.err and UNSHOWABLE[value] in result.err
    assert "\nNext: agent-memory config set bucket " in result.err
    assert not any(char in result.err for char in "\u202e\u2066\x9b\x85\u2028")  # shown escaped, never raw
    assert not (machine.state / "config" / "config.json").exists()


@pytest.mark.parametrize("value", sorted(UNSHOWABLE), ids=lambda value: UNSHOWABLE[value])
def test_bootstrap_refuses_what_cannot_be_shown_and_sets_up_nothing(machine, value):
    result = machine.run("bootstrap", "--project", "demo", "--bucket", value, "--no-hooks")
    tools.exited(result, 2)
    assert UNSHOWABLE[value] in result.err and "\nNext: " in result.err
    assert not (machine.state / "config" / "config.json").exists()
    assert not (machine.home / ".agents").exists() and not (machine.home / ".claude").exists()


def test_a_folder_with_percent_escapes_that_decode_to_plain_characters_is_accepted(machine, tmp_path):
    folder = tmp_path / "agent memory" / "café"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    result = machine.run("config", "set", "bucket", f"file://{tmp_path}/agent%20memory/caf%C3%A9", "--json")
    tools.exited(result)
    assert result.json == {"bucket": f"file://{folder}", "created": False, "was": None, "unchanged": False}
