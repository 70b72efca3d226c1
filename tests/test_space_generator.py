"""The Space's setup-command generator under CPython: every OS x installer x agent, hostile input, quoting.

bash scripts are checked by bash itself (`bash -n`, shellcheck, and by running the bootstrap line with a stub
that prints its arguments); PowerShell scripts, which cannot run here, by a tokenizer that follows
PowerShell's documented rules for single-quoted strings (where U+2018 to U+201B also end a string).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import space_generator_cases as cases

import tools
from agent_memory import agents, names
from agent_memory.errors import UsageError
from space import generator
from tools import available

HELPER = generator.Helper(**cases.HELPER)
PS_QUOTES = "'\u2018\u2019\u201a\u201b"
PS_DOUBLE_QUOTES = '"\u201c\u201d\u201e'
PS_BOOTSTRAP = "& (Join-Path $envDir 'Scripts\\agent-memory.exe') "
BASH_BOOTSTRAP = '"$env_dir/bin/agent-memory" '


def answer(data: dict[str, object]) -> dict:
    return json.loads(generator.from_form(json.dumps({"helper": cases.HELPER, "form": data})))


def heredoc_body(block: str) -> str:
    lines = block.splitlines()
    assert lines[0] == f"bash <<'{generator.HEREDOC}'" and lines[-1] == generator.HEREDOC
    return "\n".join(lines[1:-1]) + "\n"


def bash_check(block: str, tmp_path: Path) -> None:
    """The block and the script inside it parse, shellcheck finds nothing, and nothing in it can be expanded
    by an interactive shell's history when pasted. Inside single quotes, what shellcheck reports as SC2016 (no
    expansion) and SC1112 (a unicode quote) is exactly the point: the value stays literal."""
    for text in (block, heredoc_body(block)):
        proc = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        tools.exited(proc)
    if available("zsh"):
        proc = subprocess.run(["zsh", "-n"], input=block, capture_output=True, text=True)
        tools.exited(proc)
    if available("shellcheck"):
        script = tmp_path / "setup.sh"
        script.write_text("#!/bin/bash\n" + heredoc_body(block))
        proc = subprocess.run(
            ["shellcheck", "--severity=style", "--exclude=SC2016,SC1112", str(script)], capture_output=True, text=True
        )
        tools.exited(proc)
    assert "!" not in block


def run_bash_bootstrap_line(block: str, tmp_path: Path) -> list[str]:
    """Run the script's bootstrap line with a stub helper that prints its arguments; return them."""
    (line,) = [line for line in heredoc_body(block).splitlines() if line.startswith(BASH_BOOTSTRAP)]
    stub = tmp_path / "env" / "bin" / "agent-memory"
    stub.parent.mkdir(parents=True, exist_ok=True)
    stub.write_text("#!/bin/sh\nprintf '%s\\0' \"$@\"\n")
    stub.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    script = f"env_dir={tmp_path / 'env'}\n{line}\n"
    proc = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, env={**os.environ, "HOME": str(work)})
    tools.exited(proc)
    assert not list(work.iterdir()), "the bootstrap line created files"
    return proc.stdout.decode().split("\0")[:-1]


def ps_string(text: str, start: int) -> tuple[str, int]:
    """A single-quoted PowerShell string starting at `start`: (its value, the index after it)."""
    value, i = [], start + 1
    while i < len(text):
        if text[i] in PS_QUOTES:
            if i + 1 < len(text) and text[i + 1] in PS_QUOTES:
                value.append(text[i + 1])  # a doubled quote is one literal quote (the second character)
                i += 2
                continue
            return "".join(value), i + 1
        value.append(text[i])
        i += 1
    raise ValueError(f"unterminated string at {start}")


def ps_native_args(text: str) -> list[str]:
    """The arguments PowerShell passes to a native command for `text`: bare words or single-quoted strings,
    and nothing PowerShell could evaluate (ValueError otherwise)."""
    args, i = [], 0
    while i < len(text):
        if text[i] == " ":
            i += 1
        elif text[i] in PS_QUOTES:
            value, i = ps_string(text, i)
            if i < len(text) and text[i] != " ":
                raise ValueError(f"text glued to a string at {i}")
            args.append(value)
        else:
            word = re.match(r"(?:--[a-z][a-z-]*|[A-Za-z0-9][A-Za-z0-9._-]*)(?= |$)", text[i:])
            if word is None:
                raise ValueError(f"PowerShell could evaluate {text[i:]!r}")
            args.append(word.group())
            i += word.end()
    return args


def ps_structure(script: str) -> None:
    """Braces and parentheses balance outside strings and comments, no string is left open, and every native
    command is followed by a check of its exit code."""
    depth, i = [], 0
    pairs = {"}": "{", ")": "("}
    while i < len(script):
        char = script[i]
        if char in PS_QUOTES:
            _, i = ps_string(script, i)
            continue
        if char in PS_DOUBLE_QUOTES:
            end = i + 1
            while script[end] not in PS_DOUBLE_QUOTES or script[end - 1] == "`":
                end += 1
            i = end + 1
            continue
        if char == "#":
            i = script.index("\n", i)
            continue
        if char in "{(":
            depth.append(char)
        elif char in "})":
            assert depth and depth.pop() == pairs[char], f"unbalanced {char} at {i}"
        i += 1
    assert not depth, f"unclosed {depth}"
    lines = script.splitlines()
    for index, line in enumerate(lines):
        if re.match(r"(py -3|uv tool install|pipx install|& \(Join-Path)", line):
            assert lines[index + 1].startswith("if ($LASTEXITCODE -ne 0) { Fail "), line


# -- the matrix ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(cases.matrix()))
def test_every_os_installer_and_agent_gives_a_script_its_shell_accepts(case: str, tmp_path: Path) -> None:
    data = cases.matrix()[case]
    result = answer(data)
    assert result["ok"], result
    script = result["script"]
    chosen = generator.choices(data)
    expected = generator.bootstrap_args(chosen, HELPER)
    if data["os"] == "windows":
        assert result["shell"] == "powershell"
        ps_structure(script)
        (line,) = [line for line in script.splitlines() if line.startswith(PS_BOOTSTRAP)]
        assert ps_native_args(line[len(PS_BOOTSTRAP) :]) == expected
        hash_check = script.index("Get-FileHash -Algorithm SHA256")
    else:
        assert result["shell"] == "bash"
        bash_check(script, tmp_path)
        assert run_bash_bootstrap_line(script, tmp_path) == expected
        hash_check = script.index("sha256sum" if data["os"] == "linux" else "shasum -a 256")
    # the pinned helper: its URL, its hash checked before anything is installed, its revision recorded
    assert HELPER.url in script and HELPER.sha256 in script
    install = {"uv": "uv tool install", "pipx": "pipx install", "venv": "-m venv"}[data["installer"]]
    assert script.index(HELPER.url) < hash_check < script.index(install) < script.index("bootstrap")
    assert expected[-2:] == ["--space-revision", HELPER.revision]
    assert ["--agent", data["agent"]] == expected[expected.index("--agent") : expected.index("--agent") + 2]
    assert ("--hooks" if data["hooks"] else "--no-hooks") in expected
    assert ("--codex-sandbox" in expected) == data["codex_sandbox"]
    assert ("--sync" in expected) == data["sync"]
    if data["os"] == "windows":  # bootstrap links it on Linux and macOS; on Windows the commands put it on PATH
        assert "Step '5/" in script and "Put agent-memory on your PATH" in script
        assert script.index("Put agent-memory on your PATH") < script.index(PS_BOOTSTRAP)
    # the login is checked, never asked for: no prompt, no token on a command line
    assert ("auth login" in script) == (not str(data["bucket"]).startswith("file:"))
    assert not re.search(r"(^|[;&|{(]\s*)read\s", script, re.M), "a prompt"
    assert "Read-Host" not in script and "--token" not in script and "HF_TOKEN=" not in script


def test_the_matrix_covers_every_combination() -> None:
    combos = {(d["os"], d["installer"], d["agent"]) for d in cases.matrix().values()}
    assert len(combos) == len(generator.OPERATING_SYSTEMS) * len(generator.INSTALLERS) * len(generator.AGENTS)
    assert set(generator.AGENTS) == set(agents.CHOICES)  # the form offers exactly what --agent accepts


# -- hostile input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(cases.hostile()))
def test_hostile_input_is_refused_or_reaches_the_helper_unchanged(case: str, tmp_path: Path) -> None:
    field, value, expected, data = cases.hostile()[case]
    result = answer(data)
    accepted = expected == "accepted" or (expected == "unix" and data["os"] != "windows")
    if not accepted:
        assert not result["ok"] and result["field"] == field, result
        assert result["message"]
        return
    assert result["ok"], result
    chosen = generator.choices(data)
    args = generator.bootstrap_args(chosen, HELPER)
    if field == "bucket":
        assert args[args.index("--bucket") + 1] == names.bucket(value)  # the helper's own reading of the input
    if field == "project":
        assert args[args.index("--project") + 1] == value.strip()
    if data["os"] == "windows":
        ps_structure(result["script"])
        (line,) = [line for line in result["script"].splitlines() if line.startswith(PS_BOOTSTRAP)]
        assert ps_native_args(line[len(PS_BOOTSTRAP) :]) == args
    else:
        bash_check(result["script"], tmp_path)
        assert run_bash_bootstrap_line(result["script"], tmp_path) == args


def test_the_powershell_quoting_round_trips_every_quote_character() -> None:
    for text in ["", "'", "''", "a'b", "\u2018x\u2019", "\u201a\u201b'", '$(x) `y` "z" @(w)', "'" * 7]:
        quoted = generator._PowerShell.quote(text)
        value, end = ps_string(quoted, 0)
        assert (value, end) == (text, len(quoted))


def test_a_refused_field_is_named_with_the_helpers_own_message() -> None:
    result = answer(cases.form(project="bad name"))
    with pytest.raises(UsageError) as helper_error:
        names.project("bad name")
    assert result == {"ok": False, "field": "project", "message": helper_error.value.message}


def test_the_helper_description_is_checked() -> None:
    good = dict(cases.HELPER)
    for field, value in [
        ("sha256", "3F" * 32),
        ("sha256", "3f" * 31),
        ("url", "https://example.com/helper.tar.gz"),
        ("url", "https://example.com/it's/agent_memory-0.1.0-py3-none-any.whl"),
        ("url", "file:///tmp/agent_memory-0.1.0-py3-none-any.whl"),
        ("revision", "main; rm -rf ~"),
        ("version", "0.1.0 && x"),
    ]:
        with pytest.raises(UsageError):
            generator.Helper(**{**good, field: value})
    result = json.loads(generator.from_form(json.dumps({"helper": {**good, "sha256": "x"}, "form": cases.form()})))
    assert result["ok"] is False and result["field"] is None
    assert json.loads(generator.from_form("not json"))["ok"] is False


def test_the_generator_loads_only_the_standard_library_and_its_listed_files() -> None:
    """What the page loads into Pyodide (RUNTIME_FILES) is all the generator needs."""
    repo = Path(generator.__file__).parents[1]
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(repo)!r}, {str(repo / 'helper')!r}]\n"
        "before = set(sys.modules)\n"
        "import space.generator\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    tools.exited(proc)
    loaded = json.loads(proc.stdout)
    ours = {name for name in loaded if name.split(".")[0] in ("agent_memory", "space")}
    listed = {path.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for path in generator.RUNTIME_FILES}
    assert ours == listed
    others = {name.split(".")[0] for name in loaded} - {"agent_memory", "space"}
    assert others <= set(sys.stdlib_module_names) | {"_distutils_hack"}, others - set(sys.stdlib_module_names)


def test_a_failed_download_stops_the_commands_with_a_message(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    helper = generator.Helper(**{**cases.HELPER, "url": f"http://127.0.0.1:{port}/helper/{HELPER.filename}"})
    block = generator.script(generator.choices(cases.form(bucket=f"file://{tmp_path}/store")), helper)
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        ["bash"], input=block, capture_output=True, text=True, cwd=home, env={**os.environ, "HOME": str(home)}
    )
    tools.exited(proc, 1)
    assert "Error: could not download the helper.\nNext: check the network" in proc.stderr
    assert "==> 3/" not in proc.stdout and list(home.iterdir()) == []


# -- Codex's sandbox, Windows paths ---------------------------------------------------------------------------


def test_the_codex_sandbox_consent_is_passed_only_when_given_and_only_for_codex() -> None:
    given = answer(cases.form(agent="codex", codex_sandbox=True))
    assert given["ok"] and "--no-hooks --codex-sandbox --space-revision" in given["script"]
    assert "let Codex save from its sandbox (your consent)" in given["script"]
    assert "--codex-sandbox" not in answer(cases.form(agent="both"))["script"]  # off unless ticked
    refused = answer(cases.form(agent="claude", codex_sandbox=True))
    assert refused == {
        "ok": False,
        "field": "codex_sandbox",
        "message": "This consent is for Codex: choose Codex, or both, as the agent.",
    }


def test_a_posix_folder_on_windows_is_accepted_with_a_warning() -> None:
    warned = answer(cases.form(system="windows", bucket="file:///home/you/agent-memory-store"))
    assert warned["ok"] and "--bucket 'file:///home/you/agent-memory-store'" in warned["script"]
    assert warned["warnings"] == [
        {
            "field": "bucket",
            "message": "On Windows, file:///home/you/agent-memory-store is the folder \\home\\you\\agent-memory-store "
            "of the current drive. A Windows folder is written with its drive, as in "
            "file:///C:/Users/you/agent-memory-store.",
        }
    ]
    for quiet in (
        cases.form(system="windows", bucket="file:///C:/Users/you/store"),
        cases.form(system="linux", bucket="file:///home/you/store"),
        cases.form(system="windows", bucket="alice/memory"),
    ):
        assert answer(quiet)["warnings"] == []


def test_the_windows_path_step_prints_a_line_that_adds_the_folder() -> None:
    for installer, folder in (
        ("venv", "$binDir = Join-Path $HOME '.local\\bin'"),
        ("uv", "$binDir = (uv tool dir --bin)"),
        ("pipx", "$binDir = (pipx environment --value PIPX_BIN_DIR)"),
    ):
        script = answer(cases.form(system="windows", installer=installer))["script"]
        assert folder in script
        assert "[Environment]::GetEnvironmentVariable('Path', 'User')" in script
        assert "[Environment]::SetEnvironmentVariable('Path', '" in script  # the line it prints for the owner
    venv = answer(cases.form(system="windows", installer="venv"))["script"]
    assert "Copy-Item -Force -LiteralPath (Join-Path $envDir 'Scripts\\agent-memory.exe') -Destination $binDir" in venv


def test_a_project_name_that_looks_like_a_credential_is_refused_as_the_helper_refuses_it() -> None:
    token = "ghp_" + "k" * 36  # a GitHub token to the guard; never a real one
    with pytest.raises(generator.InvalidInput) as refused:
        generator.choices(cases.form(project=token))
    assert refused.value.field == "project" and token not in refused.value.message
    assert "looks like a credential (GitHub token (rule github-token))" in refused.value.message
