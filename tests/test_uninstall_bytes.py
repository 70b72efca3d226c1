"""Install then uninstall gives back every byte of the JSON and TOML files we edit (Claude Code's settings.json,
Codex's hooks.json and config.toml), however the user's file was spelled: a container install created goes, one
that was there before stays, with its own spacing. What the user changed in between stays too.

Property-style: each case of the corpus is a user's file (missing, empty, empty containers, other keys, comments,
odd spacing, CRLF, a BOM, with or without the final newline) put through the real commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tools
from conftest import Machine

JSON_CORPUS = [
    None,  # no file at all
    "",
    "\n",
    "  \n\n",
    "{}",
    "{}\n",
    "{ }\n",
    "{\n}\n",
    "{\r\n}\r\n",
    '{"hooks": {}}',
    '{"hooks": {}}\n',
    '{ "hooks" : { } }\n',
    '{\n\t"hooks": {\n\t}\n}\n',
    '{"hooks":{}}',
    '{"hooks": {"Stop": []}}\n',
    '{"hooks": {"Stop": [ ]}, "model": "x"}',
    '{\n  "hooks": {\n    "Stop": [\n    ]\n  }\n}',
    '{"model": "opus"}',
    '{\n    "model": "opus"\n}\n',
    '{"model":"opus","hooks":{}}',
    '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}\n',
    '{\r\n  "hooks": {},\r\n  "model": "opus"\r\n}\r\n',
    '{\n  "hooks": {\n    "SessionStart": [],\n    "Stop": [ ]\n  },\n  "env": {}\n}\n',
    '{"hoo\\u006bs": {"St\\u006fp": [ ]}}\n',  # keys spelled with escapes
    '{"hooks": {"Stop": [1]}, "hooks": { }}',  # a duplicate key: the last one counts, as Codex reads it
]
TOML_CORPUS = [
    None,
    "",
    "\n",
    "\ufeff",
    "# only a comment\n",
    'model = "o3"',
    '# mine\r\nmodel = "o3"\r\n',
    '\ufeffmodel = "o3"\n',
    "[features]\nweb_search = true\n\n# trailing comment\n",
    '  key  =  "odd spacing"   # c\n\n\n',
    "[projects]\n",
    "\n\n[features]\nhooks = true\n",
    "\ufeff\n",
    '"quoted key" = 1\r\n[t]\r\nx = 2',
    'a = """\n# agent-memory:begin codex-sandbox\n"""\n',
]
FILES = {"codex": ".codex/hooks.json", "claude": ".claude/settings.json"}
CONFIG = ".codex/config.toml"


def put(machine: Machine, name: str, text: str | None) -> Path:
    path = machine.home / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(text.encode())
    return path


def read(path: Path) -> str | None:
    return path.read_bytes().decode() if path.exists() else None


def install(machine: Machine) -> None:
    tools.exited(machine.run("hooks", "install", "--json"))
    tools.exited(machine.run("codex-sandbox", "allow", "--json"))


def uninstall(machine: Machine) -> None:
    tools.exited(machine.run("uninstall", "--json"))


@pytest.mark.parametrize("text", JSON_CORPUS, ids=repr)
def test_hook_files_come_back_byte_for_byte(machine, folder_store, text):
    machine.setup(folder_store)
    paths = {runtime: put(machine, name, text) for runtime, name in FILES.items()}
    install(machine)
    assert all(read(path) != text for path in paths.values())
    uninstall(machine)
    for runtime, path in paths.items():
        assert read(path) == text, runtime
    install(machine)  # and again: the second round trip is the same as the first
    uninstall(machine)
    assert [read(path) for path in paths.values()] == [text, text]


@pytest.mark.parametrize("text", JSON_CORPUS, ids=repr)
def test_a_key_the_user_added_meanwhile_stays(machine, folder_store, text):
    machine.setup(folder_store)
    paths = {runtime: put(machine, name, text) for runtime, name in FILES.items()}
    install(machine)
    for path in paths.values():  # the user's edit, by hand: a key of theirs first in the file
        installed = read(path) or ""
        at = installed.index("{") + 1
        path.write_bytes((installed[:at] + '"mine": true, ' + installed[at:]).encode())
    uninstall(machine)
    value = json.loads(text) if text and text.strip() else {}
    for runtime, path in paths.items():
        after = read(path)
        assert after is not None and json.loads(after) == {"mine": True, **value}, runtime
        if value:  # the user's object was there: their bytes and their edit, and nothing else
            assert text is not None
            at = text.index("{") + 1
            assert after == text[:at] + '"mine": true, ' + text[at:], runtime


def test_a_container_of_the_user_emptied_meanwhile_is_kept(machine, folder_store):
    """Their group in Stop, taken out by them after install: the Stop that was theirs stays, empty."""
    machine.setup(folder_store)
    mine = {"hooks": [{"type": "command", "command": "echo mine"}]}
    path = put(machine, FILES["claude"], json.dumps({"hooks": {"Stop": [mine]}}) + "\n")
    install(machine)
    installed = json.loads(path.read_text())
    installed["hooks"]["Stop"].remove(mine)
    path.write_text(json.dumps(installed, indent=2) + "\n")
    uninstall(machine)
    assert json.loads(path.read_text()) == {"hooks": {"Stop": []}}


@pytest.mark.parametrize("text", TOML_CORPUS, ids=repr)
def test_codex_config_comes_back_byte_for_byte_and_keeps_the_users_lines(machine, folder_store, text):
    machine.setup(folder_store)
    path = put(machine, CONFIG, text)
    install(machine)
    assert read(path) != text
    uninstall(machine)
    assert read(path) == text
    install(machine)
    added = "\n# added by the user\n"
    path.write_bytes((read(path) or "").encode() + added.encode())
    uninstall(machine)
    assert read(path) == (text or "") + added


@pytest.mark.parametrize("damage", [b"", b'{"file": ', b"[1, 2]", b'{"file": "/elsewhere", "containers": []}'])
def test_damaged_notes_fall_back_to_taking_out_what_only_held_ours(machine, folder_store, damage):
    """Notes cut short, or of another file: remove does what it did before notes were kept, and fails nothing."""
    machine.setup(folder_store)
    path = put(machine, FILES["codex"], '{"model": "o3"}\n')
    install(machine)
    (machine.state / "state" / "hook-files" / "codex.json").write_bytes(damage)
    uninstall(machine)
    assert read(path) == '{"model": "o3"}\n'
    assert not (machine.state / "state" / "hook-files" / "codex.json").exists()  # spent


SPACE = st.sampled_from(["", " ", "  ", "\n", "\n  ", "\n\t", "\r\n", "\r\n    ", "\n\n"])
USER_GROUP = '{"hooks": [{"type": "command", "command": "echo mine"}]}'


@st.composite
def spelled(draw, members: list[tuple[str, str]]) -> str:
    """A JSON object of `members` (key, value text), spelled with whitespace drawn anywhere JSON allows it."""
    if not members:
        return "{" + draw(SPACE) + "}"
    items = [json.dumps(key) + draw(SPACE) + ":" + draw(SPACE) + value for key, value in members]
    joined = "".join(
        item + (draw(SPACE) + "," if i < len(items) - 1 else "") + draw(SPACE) for i, item in enumerate(items)
    )
    return "{" + draw(SPACE) + joined + "}"


@st.composite
def hook_files(draw) -> str:
    """A user's hook file: other keys, maybe a `hooks` object, maybe events in it, empty or with a group of theirs."""
    events = draw(st.lists(st.sampled_from(["Stop", "SessionStart", "PreToolUse"]), unique=True, max_size=3))
    hooks = [(event, "[" + draw(SPACE) + draw(st.sampled_from(["", USER_GROUP])) + "]") for event in events]
    others = draw(st.lists(st.sampled_from(["model", "env"]), unique=True, max_size=2))
    members = [(key, '"opus"' if key == "model" else draw(spelled([]))) for key in others]
    if draw(st.booleans()):
        members.insert(draw(st.integers(0, len(members))), ("hooks", draw(spelled(hooks))))
    return draw(st.sampled_from(["", "\n"])) + draw(spelled(members)) + draw(st.sampled_from(["", "\n", "\r\n"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hook_files())
def test_any_spelling_of_a_hook_file_comes_back_byte_for_byte(machine, text):
    for name in FILES.values():
        put(machine, name, text)
    tools.exited(machine.run("hooks", "install", "--json"))
    tools.exited(machine.run("hooks", "remove", "--json"))
    for name in FILES.values():
        assert read(machine.home / name) == text, name
