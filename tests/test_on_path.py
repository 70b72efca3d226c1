"""`agent-memory` on the PATH after bootstrap: linked in ~/.local/bin, found by a new login shell (what a new
terminal and Codex start), and where that shell does not look there, the exact line that makes it look. Nothing
of the user's in the way is replaced."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tools
from agent_memory import __version__
from tools import available

HELPER = Path(sys.executable).parent / "agent-memory"


def login_shell(machine, command: str, shell: str = "sh") -> subprocess.CompletedProcess:
    """`SHELL -lc COMMAND` as a new terminal of this machine's user would run it: only the system's PATH to start."""
    return subprocess.run(
        [shell, "-lc", command],
        env={"HOME": str(machine.home), "PATH": os.defpath, "SHELL": f"/bin/{shell}"},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def test_bootstrap_links_the_helper_where_a_login_shell_finds_it(machine, folder_store):
    assert login_shell(machine, "agent-memory --version").returncode != 0
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json")
    tools.exited(result)
    link = machine.home / ".local" / "bin" / "agent-memory"
    assert result.json["command"] == {
        "path": str(link),
        "target": str(HELPER),
        "was": None,
        "warning": None,
        "state": "linked",
        "found": str(link),
    }
    assert os.readlink(link) == str(HELPER)
    found = login_shell(machine, "agent-memory --version")
    tools.exited(found)
    assert found.stdout.strip() == f"agent-memory {__version__}", found.stderr
    shown = [line for line in machine.run("bootstrap", "--project", "demo").out.splitlines() if "command:" in line]
    assert shown == [
        f"command: agent-memory -> {HELPER} (found on a login shell's PATH, unchanged); in a terminal opened before, "
        'run first: export PATH="$HOME/.local/bin:$PATH"'  # this test's own PATH does not have it
    ]


@pytest.mark.parametrize("shell, profile", [("sh", "~/.profile"), ("bash", "~/.profile"), ("zsh", "~/.zprofile")])
def test_without_a_profile_that_looks_there_the_warning_gives_the_line_that_works(
    machine, folder_store, shell, profile
):
    if shell == "zsh" and not available("zsh"):
        return
    (machine.home / ".profile").unlink()  # a HOME without the distribution's profile: nothing adds ~/.local/bin
    result = machine.run(
        "bootstrap", "--project", "demo", "--bucket", folder_store, "--json", env={"SHELL": f"/bin/{shell}"}
    )
    tools.exited(result)
    command = result.json["command"]
    assert command["state"] == "linked" and command["found"] is None
    warning = command["warning"]
    assert warning in result.json["warnings"]
    line = re.search(r"run: (echo .*)$", warning).group(1)
    assert line == f"echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> {profile}"
    assert login_shell(machine, "agent-memory --version", shell).returncode != 0
    subprocess.run([shell, "-c", line], env={"HOME": str(machine.home), "PATH": os.defpath}, check=True)
    found = login_shell(machine, "agent-memory --version", shell)
    tools.exited(found)
    assert found.stdout.strip() == f"agent-memory {__version__}", found.stderr
    again = machine.run("bootstrap", "--project", "demo", "--json", env={"SHELL": f"/bin/{shell}"})
    assert again.json["command"]["warning"] is None and again.json["command"]["state"] == "on path"


def test_another_agent_memory_in_the_way_is_left_as_it_is(machine, folder_store):
    link = machine.home / ".local" / "bin" / "agent-memory"
    link.parent.mkdir(parents=True)
    link.write_text("#!/bin/sh\necho mine\n")
    link.chmod(0o755)
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json")
    tools.exited(result)
    assert result.json["command"]["state"] == "other"
    assert result.json["command"]["warning"].endswith(f"To use this one: ln -sf {HELPER} {link}")
    assert link.read_text() == "#!/bin/sh\necho mine\n" and not link.is_symlink()


def test_a_link_to_a_helper_that_is_gone_is_repaired(machine, folder_store, tmp_path):
    link = machine.home / ".local" / "bin" / "agent-memory"
    link.parent.mkdir(parents=True)
    gone = tmp_path / "deleted-clone" / ".venv" / "bin" / "agent-memory"
    link.symlink_to(gone)
    result = machine.run("bootstrap", "--project", "demo", "--bucket", folder_store)
    tools.exited(result)
    assert f"command: agent-memory -> {HELPER} (linked in {link}, was {gone});" in result.out
    assert os.readlink(link) == str(HELPER)
