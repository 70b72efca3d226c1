"""The Space's setup commands for one machine: the form's answers, validated and quoted for the target shell.

Standard library only (plus `agent_memory.names`, `errors` and `agents`, which are too): the Space's page
runs this same file under Pyodide, so the form refuses what the helper refuses (and, on top, what would not
survive a paste into a terminal), and the tests run it under both CPython and Pyodide. The commands download
the helper pinned by URL and SHA-256, check the hash before installing anything, never ask for a Hugging Face
token, and end with `agent-memory bootstrap`.
"""

from __future__ import annotations

import json
import re
import shlex
import unicodedata
from dataclasses import dataclass
from typing import Any

# guard: `names.given` loads it when the project name is checked, so the page must carry it too
from agent_memory import agents, guard, names  # noqa: F401
from agent_memory.errors import AgentMemoryError, UsageError

OPERATING_SYSTEMS = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}
INSTALLERS = {"uv": "uv tool", "pipx": "pipx", "venv": "venv + pip"}
AGENTS = {choice: agents.label(choice) for choice in ("both", *agents.RUNTIMES)}  # the form lists "both" first

# The files the page loads into Pyodide: this module and everything it imports from the helper, by the path
# the page imports them from (under its module root), with the file of this repository that each one is.
RUNTIME_FILES = {
    "agent_memory/__init__.py": "helper/agent_memory/__init__.py",
    "agent_memory/agents/__init__.py": "helper/agent_memory/agents/__init__.py",
    "agent_memory/agents/claude.py": "helper/agent_memory/agents/claude.py",
    "agent_memory/agents/codex.py": "helper/agent_memory/agents/codex.py",
    "agent_memory/errors.py": "helper/agent_memory/errors.py",
    "agent_memory/guard.py": "helper/agent_memory/guard.py",
    "agent_memory/names.py": "helper/agent_memory/names.py",
    "space/__init__.py": "space/__init__.py",
    "space/generator.py": "space/generator.py",
}

HEREDOC = "AGENT_MEMORY_SETUP"
# PowerShell ends a single-quoted string at any of these, not only at the ASCII quote.
_PS_QUOTES = "'\u2018\u2019\u201a\u201b"
_WINDOWS_PATH_FORBIDDEN = set('<>:"|?*')
_WINDOWS_DRIVE = re.compile(r"/[A-Za-z]:")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_WHEEL = re.compile(r"[A-Za-z0-9_.+-]+\.whl")
_PS_BARE = re.compile(r"--[a-z][a-z-]*|[A-Za-z0-9][A-Za-z0-9._-]*")  # no sigil, operator or quote
_VERSION = re.compile(r"[0-9A-Za-z.+-]+")
_URL = re.compile(r"https?://[#-&(-~]+")  # printable ASCII without space, quotes or "!"


class InvalidInput(UsageError):
    """A form field whose value the helper would refuse; `field` names it for the page."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, next_step="correct the field and generate the commands again")
        self.field = field


@dataclass(frozen=True)
class Helper:
    """The helper distribution the commands install: its pinned URL, SHA-256, version and Space revision."""

    url: str
    sha256: str
    version: str
    revision: str

    def __post_init__(self) -> None:
        # These come from the Space's build, never from the form: a failure is the build's to fix.
        problem = (
            (not names.is_id(self.revision) and f"The Space revision {self.revision!r} is not a revision.")
            or (not (_URL.fullmatch(self.url) and _WHEEL.fullmatch(self.filename))
                and f"The helper URL {self.url!r} is not an http(s) URL of a wheel file.")
            or (not _VERSION.fullmatch(self.version) and f"The helper version {self.version!r} is not a version.")
            or (not _SHA256.fullmatch(self.sha256) and f"The helper SHA-256 {self.sha256!r} is not 64 hex digits.")
        )  # fmt: skip
        if problem:
            raise UsageError(problem, next_step="build the Space again with a plain http(s) --base-url")

    @property
    def filename(self) -> str:
        """The wheel's file name (pip needs it to install the file)."""
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Choices:
    """What the form asked, validated."""

    os: str
    installer: str
    agent: str
    project: str
    bucket: str | None  # None: bootstrap's default (the configured bucket, else <user>/agent-memory)
    hooks: bool
    skills: tuple[str, ...]
    codex_sandbox: bool = False  # the owner's consent for Codex's workspace-write sandbox
    sync: bool = False  # sync the agents' own memory (Claude Code's auto memory, Codex's memories) through the bucket

    @property
    def needs_hub_login(self) -> bool:
        """Whether bootstrap will talk to the Hub (every bucket but a folder store)."""
        return self.bucket is None or not self.bucket.startswith(names.FILE_SCHEME)


@dataclass(frozen=True)
class Step:
    """One step of the setup: a one-line explanation and its commands."""

    why: str
    commands: str


def choices(form: dict[str, Any]) -> Choices:
    """Validate the form's answers with the helper's own rules; InvalidInput names the first bad field."""
    system = _one_of("os", form.get("os"), OPERATING_SYSTEMS)
    installer = _one_of("installer", form.get("installer"), INSTALLERS)
    agent = _one_of("agent", form.get("agent", "both"), AGENTS)
    project = _text("project", form.get("project"))
    if not project:
        raise InvalidInput("project", "Enter the project name this checkout belongs to (for example my-project).")
    _check_pasteable("project", project)
    _check("project", names.project, project)
    bucket = _text("bucket", form.get("bucket")) or None
    if bucket is not None:
        _check_pasteable("bucket", bucket)  # before parsing: urlsplit silently drops tabs and newlines
        bucket = _check("bucket", names.bucket, bucket)
        _check_pasteable("bucket", bucket)  # and after: a folder's percent-escapes are decoded into the script
        if system == "windows" and bucket.startswith(names.FILE_SCHEME):
            _check_windows_path(bucket[len(names.FILE_SCHEME) :])
    hooks = form.get("hooks", False)
    if not isinstance(hooks, bool):
        raise InvalidInput("hooks", "Hooks must be on or off.")
    codex_sandbox = form.get("codex_sandbox", False)
    if not isinstance(codex_sandbox, bool):
        raise InvalidInput("codex_sandbox", "Codex's sandbox consent must be on or off.")
    if codex_sandbox and agent == "claude":
        raise InvalidInput("codex_sandbox", "This consent is for Codex: choose Codex, or both, as the agent.")
    sync = form.get("sync", False)
    if not isinstance(sync, bool):
        raise InvalidInput("sync", "Sync of the agents' own memory must be on or off.")
    skills = tuple(spec for spec in re.split(r"[\s,]+", _text("skills", form.get("skills"))) if spec)
    for spec in skills:
        _check_pasteable("skills", spec)
        _check("skills", names.skill_spec, spec)
    return Choices(system, installer, agent, project, bucket, hooks, skills, codex_sandbox, sync)


def warnings(chosen: Choices) -> list[tuple[str, str]]:
    """What the owner should know about these answers, though the commands will run: `(field, message)`."""
    folder = chosen.bucket[len(names.FILE_SCHEME) :] if chosen.bucket and chosen.bucket.startswith("file:") else None
    if chosen.os != "windows" or folder is None or _WINDOWS_DRIVE.match(folder):
        return []
    # a POSIX path is a folder of the current drive on Windows: valid, but rarely what was meant
    shown = folder.replace("/", "\\")
    return [
        (
            "bucket",
            f"On Windows, {chosen.bucket} is the folder {shown} of the current drive. A Windows folder is written "
            "with its drive, as in file:///C:/Users/you/agent-memory-store.",
        )
    ]


def steps(chosen: Choices, helper: Helper) -> list[Step]:
    """The setup steps for `chosen`, in the order they run."""
    shell = _shell(chosen)
    found = [
        Step(f"Check the tools this needs: {_tools(chosen)}", shell.check(chosen)),
        Step(
            f"Download agent-memory {helper.version}, pinned at Space revision {helper.revision}",
            shell.download(helper),
        ),
        Step("Check its SHA-256 before installing anything (stop if it differs)", shell.verify(helper)),
        Step(f"Install it with {INSTALLERS[chosen.installer]}", shell.install(chosen.installer)),
    ]
    if isinstance(shell, _PowerShell):  # on Linux and macOS, bootstrap links it into ~/.local/bin itself
        found.append(Step("Put agent-memory on your PATH", shell.on_path(chosen.installer)))
    if chosen.needs_hub_login:
        found.append(
            Step(
                "Check for your Hugging Face login (made by you, outside this script: it never asks for a token)",
                shell.login_check(),
            )
        )
    consent = ", let Codex save from its sandbox (your consent)" if chosen.codex_sandbox else ""
    consent += ", sync the agents' own memory through the bucket" if chosen.sync else ""
    found.append(
        Step(
            "Set up the bucket, map this folder to the project, install the memory skill and the agent instructions"
            f"{consent}, then verify that saving, reading and searching work",
            shell.bootstrap(bootstrap_args(chosen, helper)),
        )
    )
    return found


def bootstrap_args(chosen: Choices, helper: Helper) -> list[str]:
    """The arguments of `agent-memory bootstrap` for these choices."""
    args = ["bootstrap", "--project", chosen.project]
    if chosen.bucket is not None:
        args += ["--bucket", chosen.bucket]
    args += ["--agent", chosen.agent]
    for spec in chosen.skills:
        args += ["--skill", spec]
    args += ["--hooks" if chosen.hooks else "--no-hooks"]
    if chosen.codex_sandbox:
        args.append("--codex-sandbox")
    if chosen.sync:
        args.append("--sync")
    return args + ["--space-revision", helper.revision]


def script(chosen: Choices, helper: Helper) -> str:
    """The block the owner pastes into a terminal: every step, each with its explanation."""
    return _shell(chosen).wrap(steps(chosen, helper), helper)


def from_form(request: str) -> str:
    """The page's entry point: the form's answers and the helper as JSON in, the commands (or the error) out."""
    try:
        data = json.loads(request)
        helper = Helper(**data["helper"])
        chosen = choices(data["form"])
    except InvalidInput as exc:
        return json.dumps({"ok": False, "field": exc.field, "message": exc.message})
    except AgentMemoryError as exc:
        return json.dumps({"ok": False, "field": None, "message": exc.message})
    except (ValueError, KeyError, TypeError) as exc:
        return json.dumps({"ok": False, "field": None, "message": f"Malformed request: {exc}"})
    return json.dumps(
        {
            "ok": True,
            "shell": "powershell" if chosen.os == "windows" else "bash",
            "script": script(chosen, helper),
            "warnings": [{"field": field, "message": message} for field, message in warnings(chosen)],
        }
    )


# -- validation ---------------------------------------------------------------------------------------------


def _one_of(field: str, value: Any, allowed: dict[str, str]) -> str:
    if value not in allowed:
        raise InvalidInput(field, f"Choose one of: {', '.join(allowed.values())}.")
    return value


def _text(field: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(field, "Expected text.")
    return value.strip()


def _check(field: str, validate: Any, value: str) -> Any:
    try:
        return validate(value)
    except AgentMemoryError as exc:
        raise InvalidInput(field, exc.message) from exc


def _check_pasteable(field: str, value: str) -> None:
    """Refuse what would make a pasted command differ from what it shows or from what the helper receives.

    Every value that reaches the script passes here, in the form it has there (a folder after decoding).
    """
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            raise InvalidInput(
                field, f"It contains the invisible or line-breaking character U+{ord(char):04X}: type it without."
            )
    if "!" in value:
        # bash and zsh expand `!` (history) in pasted lines, even inside quotes and here-documents
        raise InvalidInput(field, "It contains '!', which bash and zsh replace in pasted commands: rename it.")


def _check_windows_path(path: str) -> None:
    # PowerShell 5.1 mangles double quotes in native arguments; Windows forbids them in paths anyway.
    rest = path[3:] if _WINDOWS_DRIVE.match(path) else path
    if _WINDOWS_PATH_FORBIDDEN & set(rest):
        raise InvalidInput("bucket", f'{path!r} cannot be a Windows path: it contains one of < > : " | ? *.')


def _tools(chosen: Choices) -> str:
    tool = {"uv": "uv", "pipx": "pipx", "venv": "Python 3.10 or newer"}[chosen.installer]
    return tool if chosen.os == "windows" else f"curl and {tool}"


# -- shells -------------------------------------------------------------------------------------------------


def _shell(chosen: Choices) -> _Bash | _PowerShell:
    return _PowerShell() if chosen.os == "windows" else _Bash(chosen.os)


class _Bash:
    """bash, which also runs the block on macOS: pasted into zsh, the heredoc hands it to bash unchanged."""

    def __init__(self, system: str) -> None:
        self.system = system

    @staticmethod
    def quote(value: str) -> str:
        return shlex.quote(value)

    def wrap(self, found: list[Step], helper: Helper) -> str:
        # One `bash` process runs everything: `exit` and `set -e` stop the setup, never the owner's own shell,
        # and comments work even in an interactive zsh (which otherwise runs `#` as a command). bash reads the
        # script from stdin, so the commands that could read input get /dev/null instead of the rest of it.
        lines = [
            f"bash <<'{HEREDOC}'",
            f"# agent-memory {helper.version} setup for {OPERATING_SYSTEMS[self.system]}, "
            f"from the Space at revision {helper.revision}",
            "set -euo pipefail",
            "step() { printf '\\n==> %s\\n' \"$1\"; }",
            'fail() { printf \'Error: %s\\nNext: %s\\n\' "$1" "$2" >&2; exit 1; }',
        ]
        for number, step in enumerate(found, 1):
            lines += ["", f"step {self.quote(f'{number}/{len(found)} {step.why}')}", step.commands]
        lines += ["", HEREDOC]
        return "\n".join(lines) + "\n"

    def check(self, chosen: Choices) -> str:
        lines = [_need("curl", "install curl with your package manager")]
        if chosen.installer == "venv":
            lines.append(_need("python3", "install Python 3.10 or newer"))
            lines.append(
                "python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' "
                "|| fail 'python3 is older than 3.10.' 'install Python 3.10 or newer, then run this again'"
            )
        elif chosen.installer == "uv":
            lines.append(_need("uv", "install uv (https://docs.astral.sh/uv/), then run this again"))
        else:
            lines.append(_need("pipx", "install pipx (https://pipx.pypa.io/), then run this again"))
        return "\n".join(lines)

    def download(self, helper: Helper) -> str:
        return "\n".join(
            [
                "tmp=$(mktemp -d)",
                "trap 'rm -rf \"$tmp\"' EXIT",
                f'wheel="$tmp/{helper.filename}"',
                f'curl -fsSL --retry 2 -o "$wheel" {self.quote(helper.url)} ||',
                "  fail 'could not download the helper.' 'check the network (curl said why), then run this again'",
            ]
        )

    def verify(self, helper: Helper) -> str:
        digest = "sha256sum" if self.system == "linux" else "shasum -a 256"
        return "\n".join(
            [
                f'actual=$({digest} "$wheel" | cut -d " " -f 1)',
                f'[ "$actual" = {helper.sha256} ] ||',
                f'  fail "the SHA-256 of the download is $actual, not {helper.sha256}; nothing was installed." '
                "'do not install it; reload the Space page and try again'",
            ]
        )

    def install(self, installer: str) -> str:
        tool = {"uv": "uv", "pipx": "pipx", "venv": "pip"}[installer]
        failed = f"  fail '{tool} could not install the helper.' 'read its messages above, then run this again'"
        if installer == "uv":
            lines = ['uv tool install --force --reinstall "$wheel" </dev/null ||', failed]
            lines.append('env_dir="$(uv tool dir)/agent-memory"')
        elif installer == "pipx":
            lines = ['pipx install --force "$wheel" </dev/null ||', failed]
            lines.append('env_dir="$(pipx environment --value PIPX_LOCAL_VENVS)/agent-memory"')
        else:
            lines = [
                'env_dir="${XDG_DATA_HOME:-$HOME/.local/share}/agent-memory/venv"',
                '{ python3 -m venv --clear "$env_dir" &&',
                '  "$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" </dev/null; } ||',
                failed,
            ]
        return "\n".join(lines)

    def login_check(self) -> str:
        return "\n".join(
            [
                'token_file="${HF_TOKEN_PATH:-${HF_HOME:-$HOME/.cache/huggingface}/token}"',
                '{ [ -n "${HF_TOKEN:-}" ] || [ -s "$token_file" ]; } ||',
                "  fail 'this machine has no Hugging Face login (HF_TOKEN or hf auth login).' "
                '"run \\"$env_dir/bin/hf\\" auth login yourself in this terminal, then run this again"',
            ]
        )

    def bootstrap(self, args: list[str]) -> str:
        return '"$env_dir/bin/agent-memory" ' + " ".join(self.quote(arg) for arg in args) + " </dev/null"


def _need(tool: str, next_step: str) -> str:
    return f"command -v {tool} >/dev/null || fail {shlex.quote(f'{tool} is not installed.')} {shlex.quote(next_step)}"


class _PowerShell:
    """Windows PowerShell 5.1 and PowerShell 7: user values only ever appear inside single-quoted literals."""

    @staticmethod
    def quote(value: str) -> str:
        return "'" + "".join(char * 2 if char in _PS_QUOTES else char for char in value) + "'"

    @classmethod
    def argument(cls, value: str) -> str:
        """A native command's argument: bare when PowerShell cannot read it as anything else, else quoted."""
        return value if _PS_BARE.fullmatch(value) else cls.quote(value)

    def wrap(self, found: list[Step], helper: Helper) -> str:
        # A script block: `return` and errors stop the setup, never close the owner's window.
        lines = [
            "& {",
            f"# agent-memory {helper.version} setup for Windows, from the Space at revision {helper.revision}",
            "$ErrorActionPreference = 'Stop'",
            "$ProgressPreference = 'SilentlyContinue'",
            "function Step([string]$Text) { Write-Host ''; Write-Host ('==> ' + $Text) }",
            "function Fail([string]$What, [string]$Next) {",
            "  [Console]::Error.WriteLine('Error: ' + $What)",
            "  [Console]::Error.WriteLine('Next: ' + $Next)",
            "  throw 'agent-memory setup stopped.'",
            "}",
            "$tmp = Join-Path ([IO.Path]::GetTempPath()) ([Guid]::NewGuid().ToString())",
            "New-Item -ItemType Directory -Path $tmp | Out-Null",
            "try {",
        ]
        for number, step in enumerate(found, 1):
            lines += ["", f"Step {self.quote(f'{number}/{len(found)} {step.why}')}", step.commands]
        lines += [
            "",
            "} finally {",
            "  Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue",
            "}",
            "}",
        ]
        return "\n".join(lines) + "\n"

    def check(self, chosen: Choices) -> str:
        tool, next_step = {
            "venv": ("py", "install Python 3.10 or newer from python.org (it includes the py launcher)"),
            "uv": ("uv", "install uv (https://docs.astral.sh/uv/), then run this again"),
            "pipx": ("pipx", "install pipx (https://pipx.pypa.io/), then run this again"),
        }[chosen.installer]
        lines = [
            f"if (-not (Get-Command {tool} -ErrorAction SilentlyContinue)) "
            f"{{ Fail {self.quote(f'{tool} is not installed.')} {self.quote(next_step)} }}"
        ]
        if chosen.installer == "venv":
            lines += [
                "py -3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'",
                "if ($LASTEXITCODE -ne 0) { Fail 'Python 3 is older than 3.10.' "
                "'install Python 3.10 or newer, then run this again' }",
            ]
        return "\n".join(lines)

    def download(self, helper: Helper) -> str:
        return "\n".join(
            [
                f"$wheel = Join-Path $tmp {self.quote(helper.filename)}",
                f"try {{ Invoke-WebRequest -UseBasicParsing -Uri {self.quote(helper.url)} -OutFile $wheel }}",
                "catch { Fail ('could not download the helper: ' + $_.Exception.Message) "
                "'check the network, then run this again' }",
            ]
        )

    def verify(self, helper: Helper) -> str:
        return "\n".join(
            [
                "$actual = (Get-FileHash -Algorithm SHA256 -LiteralPath $wheel).Hash.ToLowerInvariant()",
                f"if ($actual -ne {self.quote(helper.sha256)}) {{",
                "  Fail ('the SHA-256 of the download is ' + $actual + "
                f"{self.quote(f', not {helper.sha256}; nothing was installed.')}) "
                "'do not install it; reload the Space page and try again'",
                "}",
            ]
        )

    def install(self, installer: str) -> str:
        if installer == "uv":
            lines = [
                "uv tool install --force --reinstall $wheel",
                "if ($LASTEXITCODE -ne 0) { Fail 'uv could not install the helper.' 'read the messages above' }",
                "$envDir = Join-Path (uv tool dir) 'agent-memory'",
            ]
        elif installer == "pipx":
            lines = [
                "pipx install --force $wheel",
                "if ($LASTEXITCODE -ne 0) { Fail 'pipx could not install the helper.' 'read the messages above' }",
                "$envDir = Join-Path (pipx environment --value PIPX_LOCAL_VENVS) 'agent-memory'",
            ]
        else:
            lines = [
                "$envDir = Join-Path $env:LOCALAPPDATA 'agent-memory\\venv'",
                "py -3 -m venv --clear $envDir",
                "if ($LASTEXITCODE -ne 0) { Fail 'Python could not create the virtual environment.' "
                "'read the messages above' }",
                "& (Join-Path $envDir 'Scripts\\python.exe') -m pip install --quiet --disable-pip-version-check $wheel",
                "if ($LASTEXITCODE -ne 0) { Fail 'pip could not install the helper.' 'read the messages above' }",
            ]
        return "\n".join(lines)

    def on_path(self, installer: str) -> str:
        # uv and pipx put their commands in their own folder (~\.local\bin by default); for a venv, a copy of its
        # launcher goes there too (it names the venv's python by absolute path, so a copy runs the same)
        lines = {
            "uv": ["$binDir = (uv tool dir --bin)"],
            "pipx": ["$binDir = (pipx environment --value PIPX_BIN_DIR)"],
            "venv": [
                "$binDir = Join-Path $HOME '.local\\bin'",
                "New-Item -ItemType Directory -Force -Path $binDir | Out-Null",
                "Copy-Item -Force -LiteralPath (Join-Path $envDir 'Scripts\\agent-memory.exe') -Destination $binDir",
            ],
        }[installer]
        return "\n".join(
            [
                *lines,
                "$userPath = [Environment]::GetEnvironmentVariable('Path', 'User')",
                "if (@($userPath -split ';' | ForEach-Object { $_.TrimEnd('\\') }) -contains $binDir.TrimEnd('\\')) {",
                "  Write-Host ('agent-memory is on your PATH: ' + (Join-Path $binDir 'agent-memory.exe'))",
                "} else {",
                "  Write-Host ('agent-memory is in ' + $binDir + ', which is not on your PATH yet. To add it, run this "
                "line, then open a new window:')",
                "  Write-Host (\"[Environment]::SetEnvironmentVariable('Path', '\" + $binDir.Replace(\"'\", \"''\") "
                "+ \";' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')\")",
                "}",
            ]
        )

    def login_check(self) -> str:
        return "\n".join(
            [
                "$hfHome = if ($env:HF_HOME) { $env:HF_HOME } else { Join-Path $HOME '.cache\\huggingface' }",
                "$tokenFile = if ($env:HF_TOKEN_PATH) { $env:HF_TOKEN_PATH } else { Join-Path $hfHome 'token' }",
                "if (-not $env:HF_TOKEN -and -not (Test-Path -LiteralPath $tokenFile)) {",
                "  Fail 'this machine has no Hugging Face login (HF_TOKEN or hf auth login).' "
                "('run & ''' + (Join-Path $envDir 'Scripts\\hf.exe') + ''' auth login yourself in this window, "
                "then run this again')",
                "}",
            ]
        )

    def bootstrap(self, args: list[str]) -> str:
        return "\n".join(
            [
                "& (Join-Path $envDir 'Scripts\\agent-memory.exe') " + " ".join(self.argument(arg) for arg in args),
                "if ($LASTEXITCODE -ne 0) { Fail ('bootstrap stopped with exit code ' + $LASTEXITCODE + '.') "
                "'read its message above, fix what it names, then run this again' }",
            ]
        )
