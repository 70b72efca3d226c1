"""The commands the page produces, copied with its Copy button and run for real on a fresh "machine" (a
temporary HOME): the helper is downloaded from the locally served Space, its hash checked, installed in a
virtual environment, and bootstrap verifies a note in a folder store, then in the Hub emulator. A tampered
helper stops the commands before anything is installed.

The helper's dependencies come from a wheelhouse that pip downloads once per module (the only use of the
network here: the package index, through pip, as a real install would; marked `registry`, and skipped with pip's
reason where the index is out of reach); the commands themselves run unchanged and offline, with PIP_NO_INDEX
and PIP_FIND_LINKS in their environment (uv: UV_OFFLINE and UV_FIND_LINKS), as behind a company mirror.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import space_site
from space_browser import chromium_fixture, fill_form, open_page, served_fixture, wait_until_settled  # noqa: F401

import tools
from conftest import BUCKET, NEW_USER_PROFILE, OWNER, TOKEN

pytestmark = [pytest.mark.slow, pytest.mark.registry]

VENV = Path(".local/share/agent-memory/venv")  # where the venv installer puts the helper, under HOME


# the installers the form offers besides a venv, at the versions the test extra pins (pyproject.toml), installed
# with the tests' own packages: nothing is downloaded while the tests run
INSTALLERS = ("uv", "pipx")


@pytest.fixture(scope="module")
def wheelhouse(served, tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, report = served
    folder = tmp_path_factory.mktemp("wheelhouse")
    wheel = Path(report["site"]) / "helper" / report["wheel"]
    # pip too: pipx brings its shared environment's pip up to date from the index it is given
    download = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", str(folder)]
    proc = subprocess.run([*download, "--retries", "2", str(wheel), "pip"], capture_output=True, text=True)
    if proc.returncode != 0:
        reason = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        tools.missing(f"pip could not download the helper's dependencies from the package index: {reason[0]}")
    (folder / report["wheel"]).unlink()  # the helper itself must come from the Space, checked
    return folder


@pytest.fixture(scope="module")
def installers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that holds only uv and pipx (as a user's package manager would have put them on the PATH)."""
    folder = tmp_path_factory.mktemp("installers")
    for name in INSTALLERS:
        installed = Path(sys.executable).parent / name
        if not installed.exists():
            tools.missing(f"{name} is not installed beside the tests: pip install -e '.[test]'")
        (folder / name).symlink_to(installed)
    return folder


def new_user_home(machine: Path) -> Path:
    """A new user's HOME: the login profile most Linux systems give one (Debian's /etc/skel/.profile says the same)."""
    home = machine / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".profile").write_text(NEW_USER_PROFILE)
    return home


def login_shell(home: Path, command: str) -> subprocess.CompletedProcess:
    """`sh -lc COMMAND` as a new terminal of that user runs it: from the system's PATH, through the profiles."""
    return subprocess.run(
        ["sh", "-lc", command], env={"HOME": str(home), "PATH": os.defpath}, capture_output=True, text=True
    )


def copied_commands(browser: object, url: str, form: dict[str, object]) -> str:
    """Fill the page's form and press Copy: what the owner would paste."""
    page, traffic = open_page(browser, url, permissions=["clipboard-read", "clipboard-write"])
    assert wait_until_settled(page) == "ready"
    shown = fill_form(page, form)
    page.get_by_role("button", name="Copy").click()
    page.wait_for_function("document.getElementById('copy-status').textContent.startsWith('Copied')")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == shown and traffic.blocked == []
    page.context.close()
    return copied


def paste(commands: str, machine: Path, env: dict[str, str], shell: str = "bash") -> subprocess.CompletedProcess:
    """Run `commands` as a terminal would after a paste: the shell reads them from its input, in the project."""
    project = machine / "project"
    project.mkdir(parents=True, exist_ok=True)
    (machine / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [shell],
        input=commands,
        cwd=project,
        env={**env, "HOME": str(machine / "home")},
        capture_output=True,
        text=True,
        timeout=600,
    )


def install_env(base_env: dict[str, str], wheelhouse: Path) -> dict[str, str]:
    env = {k: v for k, v in base_env.items() if not k.startswith(("HF_", "AGENT_MEMORY_", "PIP_"))}
    return {**env, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


_TAMPERED = "agent_memory/cli/__init__.py"  # the wheel member given one extra line
FORM = {"Operating system": "Linux", "Installer": "venv + pip", "Agent": "Codex and Claude Code", "Hooks": False}


def test_the_copied_linux_commands_install_the_helper_and_verify_a_folder_store(
    chromium, served, wheelhouse: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    url, report = served
    store = tmp_path / "store"
    form = {**FORM, "Project": "demo", "Bucket": f"file://{store}", "Let Codex save from its sandbox": True}
    commands = copied_commands(chromium, url, form)
    home = new_user_home(tmp_path)
    assert login_shell(home, "agent-memory --version").returncode != 0
    proc = paste(commands, tmp_path, install_env(base_env, wheelhouse))
    tools.exited(proc)
    assert "==> 3/5 Check its SHA-256 before installing anything" in proc.stdout
    assert "verification: verified" in proc.stdout
    helper = tmp_path / "home" / VENV / "bin" / "agent-memory"
    # on the PATH of every new terminal, and the output says where it came from
    found = login_shell(home, "agent-memory --version")
    tools.exited(found)
    assert found.stdout.strip() == f"agent-memory {report['version']}", found.stderr
    assert f"command: agent-memory -> {helper} (linked in {home / '.local' / 'bin' / 'agent-memory'}" in proc.stdout
    # the consent box was ticked: Codex's config.toml has the consent, for exactly this helper's folders
    consent = (home / ".codex" / "config.toml").read_text()
    assert (
        "# agent-memory:begin codex-sandbox" in consent and "sandbox_workspace_write.network_access = true" in consent
    )
    assert str(home / ".local" / "state" / "agent-memory") in consent
    assert "codex sandbox: allowed in " in proc.stdout and "In Codex's usual workspace-write" not in proc.stderr
    assert (
        subprocess.run([helper, "--version"], capture_output=True, text=True).stdout.strip().endswith(report["version"])
    )
    notes = list((store / "projects" / "demo" / "notes").glob("setup-*.md"))
    assert len(notes) == 1
    config = json.loads((tmp_path / "home" / ".config" / "agent-memory" / "config.json").read_text())
    assert config["core_skill"]["space_revision"] == "local"
    assert config["projects"] == {str(tmp_path / "project"): "demo"}
    assert str(helper) in (tmp_path / "home" / ".codex" / "AGENTS.md").read_text()
    assert (tmp_path / "home" / ".claude" / "skills" / "agent-memory" / "SKILL.md").is_file()
    # the installed helper is the pinned wheel's code, file for file
    installed = subprocess.run(
        [tmp_path / "home" / VENV / "bin" / "python", "-c", "import agent_memory, sys; print(agent_memory.__file__)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    names = Path(installed).parent / "names.py"
    assert names.read_bytes() == (space_site.REPO / "helper/agent_memory/names.py").read_bytes()

    # pasting the same commands again is safe: a fresh install, the same verified note
    again = paste(commands, tmp_path, install_env(base_env, wheelhouse))
    tools.exited(again)
    assert list((store / "projects" / "demo" / "notes").glob("setup-*.md")) == notes


def test_the_copied_commands_check_the_login_then_verify_a_note_in_the_hub(
    chromium, served, wheelhouse: Path, base_env: dict[str, str], hub, tmp_path: Path
) -> None:
    url, _ = served
    shell = "zsh" if shutil.which("zsh") else "bash"  # pasted into macOS's default shell when it is here
    commands = copied_commands(chromium, url, {**FORM, "Project": "demo", "Bucket": BUCKET})
    env = install_env(base_env, wheelhouse)

    no_login = paste(commands, tmp_path, env, shell)
    tools.exited(no_login, 1)
    hf = tmp_path / "home" / VENV / "bin" / "hf"
    assert "Error: this machine has no Hugging Face login (HF_TOKEN or hf auth login)." in no_login.stderr
    assert f'Next: run "{hf}" auth login yourself in this terminal, then run this again' in no_login.stderr
    assert hf.is_file() and not (tmp_path / "home" / ".config" / "agent-memory").exists()  # bootstrap never ran
    assert TOKEN not in no_login.stdout + no_login.stderr

    logged_in = paste(commands, tmp_path, {**env, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN}, shell)
    tools.exited(logged_in)
    assert f"bucket: hf://buckets/{OWNER}/memory" in logged_in.stdout and "verification: verified" in logged_in.stdout
    notes = [p for p in hub.list_paths(BUCKET) if p.startswith("projects/demo/notes/setup-")]
    assert len(notes) == 1
    assert TOKEN not in logged_in.stdout + logged_in.stderr
    assert TOKEN not in (tmp_path / "home" / ".config" / "agent-memory" / "config.json").read_text()


def test_a_tampered_helper_stops_the_commands_before_anything_is_installed(
    chromium, wheelhouse: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    server = space_site.build_module().listen(0)
    site = tmp_path / "site"
    report = space_site.built(site, "--base-url", f"http://127.0.0.1:{server.server_address[1]}/")
    # a valid wheel with one changed file: only its hash gives it away
    wheel = site / "helper" / report["wheel"]
    report_bytes = wheel.read_bytes()
    with zipfile.ZipFile(wheel) as original:
        members = [(info, original.read(info)) for info in original.infolist()]
    with zipfile.ZipFile(wheel, "w") as changed:
        for info, data in members:
            changed.writestr(info, data + b"\nimport os  # added\n" if info.filename == _TAMPERED else data)
    tampered = wheel.read_bytes()
    assert _TAMPERED in {info.filename for info, _ in members} and tampered != report_bytes
    with space_site.serving(site, server) as url:
        commands = copied_commands(chromium, url, {**FORM, "Project": "demo", "Bucket": f"file://{tmp_path}/store"})
        proc = paste(commands, tmp_path, install_env(base_env, wheelhouse))
    tools.exited(proc, 1)
    actual = hashlib.sha256(tampered).hexdigest()
    assert f"Error: the SHA-256 of the download is {actual}, not {report['sha256']}; nothing was installed." in (
        proc.stderr
    )
    assert "==> 4/" not in proc.stdout
    assert not (tmp_path / "home" / ".local").exists() and not (tmp_path / "store").exists()


@pytest.mark.parametrize("installer", ["uv tool", "pipx"])
def test_uv_and_pipx_put_the_helper_where_a_login_shell_finds_it(
    chromium, served, wheelhouse: Path, installers: Path, base_env: dict[str, str], tmp_path: Path, installer: str
) -> None:
    url, report = served
    store = tmp_path / "store"
    commands = copied_commands(
        chromium, url, {**FORM, "Installer": installer, "Project": "demo", "Bucket": f"file://{store}"}
    )
    home = new_user_home(tmp_path)
    env = install_env(base_env, wheelhouse)
    env.update(
        {
            "PATH": f"{installers}{os.pathsep}{os.defpath}",  # the installer, and the system's commands
            # uv reads no UV_NO_INDEX: its offline mode is what keeps it off the index (and any network)
            "UV_OFFLINE": "1",
            "UV_FIND_LINKS": str(wheelhouse),
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_NO_CONFIG": "1",
        }
    )
    proc = paste(commands, tmp_path, env)
    tools.exited(proc)
    assert "verification: verified" in proc.stdout
    found = login_shell(home, "agent-memory --version")
    tools.exited(found)
    assert found.stdout.strip() == f"agent-memory {report['version']}", found.stderr
    link = home / ".local" / "bin" / "agent-memory"
    assert link.exists()
    # the installer's own link was already there: bootstrap says so and leaves it
    assert "(found on a login shell's PATH, unchanged)" in proc.stdout, proc.stdout
    assert len(list((store / "projects" / "demo" / "notes").glob("setup-*.md"))) == 1
