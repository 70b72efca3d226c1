"""`agent-memory` on the user's PATH: a link in `~/.local/bin` to the helper that runs, and, when a new login shell
does not look there, the one line that makes it look.

A new login shell is what a new terminal (and Codex) starts, so that is what is asked: `$SHELL -l`, from a PATH
that holds only the system's defaults (an activated virtual environment must not make the answer yes). Nothing
of the user's is ever replaced: a link to a helper that is gone is repaired, anything else in the way is named.
On Windows the setup commands put the command on the PATH; nothing is done here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..fsutil import make_dirs

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import Final

    from ..config.shape import Config
    from ..contract import CommandLink

NAME = "agent-memory"
EXPORT = 'export PATH="$HOME/.local/bin:$PATH"'


def bin_dir() -> Path:
    """The user's own command folder: the one uv, pipx and most Linux distributions' `~/.profile` use."""
    return Path.home() / ".local" / "bin"


def put_on_path() -> CommandLink | None:
    """Make a new login shell's `agent-memory` this helper; `{"path", "target", "state", "was", "found",
    "warning"}`, or None where there is nothing to link (Windows, or a helper run as `python -m`).

    `state`: "on path" (a login shell already finds this helper), "linked", "replaced" (a link to a helper that
    is gone), "unchanged" (our link was there) or "other" (something else is in the way, left as it is).
    """
    helper = Path(sys.executable).parent / NAME
    if os.name == "nt" or not (helper.is_file() and os.access(helper, os.X_OK)):
        return None
    link = bin_dir() / NAME
    result: CommandLink = {
        "path": str(link),
        "target": str(helper),
        "was": None,
        "warning": None,
        "state": "",  # each return below says which
        "found": None,
    }
    found = login_lookup()
    if found is not None and _same(found, helper):
        return {**result, "path": found, "state": "on path", "found": found}
    if link.is_symlink() and not link.exists():  # a link to a helper that was deleted (an old clone): repaired
        result["was"] = os.readlink(link)
        link.unlink()
    if link.is_symlink() or link.exists():
        if not _same(str(link), helper):
            result["warning"] = (
                f"{link} is another agent-memory ({os.path.realpath(link)}), so the command `agent-memory` does not "
                f"run this one ({helper}); it was left as it is. To use this one: ln -sf {helper} {link}"
            )
            return {**result, "state": "other", "found": found}
        state = "unchanged"
    else:
        make_dirs(link.parent)
        os.symlink(helper, link)
        state = "replaced" if result["was"] else "linked"
    found = login_lookup()
    if found is None:
        result["warning"] = (
            f"New terminals do not look in {link.parent}, so they cannot find `agent-memory` there (it is linked to "
            f"{helper}). To add that folder to their PATH, run: echo '{EXPORT}' >> {_profile()}"
        )
    elif not _same(found, helper):
        result["warning"] = (
            f"New terminals find another agent-memory first ({found}), so `agent-memory` does not run this one "
            f"({helper}). Remove that one, or put {link.parent} first on their PATH: echo '{EXPORT}' >> {_profile()}"
        )
    return {**result, "state": state, "found": found}


def login_shell() -> str:
    """The user's shell: `$SHELL`, else `/bin/sh`."""
    return os.environ.get("SHELL") or "/bin/sh"


def in_login_shell(command: str, *, fresh: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `command` in a new login shell of the user (`$SHELL -lc`), as a new terminal and Codex run commands; with
    `fresh`, from a PATH that holds only the system's defaults, as a new terminal starts before its profiles. OSError
    if it could not be run or did not end within 30 s."""
    env = {**os.environ, "PATH": os.defpath} if fresh else None
    try:
        return subprocess.run(
            [login_shell(), "-lc", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError(f"it did not end within {exc.timeout:g} s") from exc


def login_lookup() -> str | None:
    """Where a new login shell of the user finds `agent-memory`, or None."""
    try:
        proc = in_login_shell(f"command -v {NAME}", fresh=True)
    except OSError:
        return None
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if proc.returncode == 0 and lines and lines[-1].startswith("/") else None


def in_this_shell(path: Path) -> bool:
    """Whether the PATH this command was started with holds `path`'s folder."""
    return str(path.parent) in os.environ.get("PATH", "").split(os.pathsep)


def _same(found: str, helper: Path) -> bool:
    return os.path.realpath(found) == os.path.realpath(helper)


def _profile() -> str:
    """The file a login shell of the user's kind reads, as the user would type it."""
    shell = Path(login_shell()).name
    if shell == "zsh":
        return "~/.zprofile"
    if shell == "bash":
        for name in (".bash_profile", ".bash_login"):  # bash reads the first that exists, and not ~/.profile then
            if (Path.home() / name).exists():
                return f"~/{name}"
    return "~/.profile"


LINKED: Final = "command_link"  # configuration key: the link bootstrap made (`uninstall` takes out only that one)


def record_link(config: Config, made: CommandLink | None) -> None:
    """Note in `config` (being edited) the link `put_on_path` has just made: a link that pipx or uv made to the
    same helper is theirs, and only this record tells the two apart."""
    if made is not None and made["state"] in ("linked", "replaced"):
        config[LINKED] = made["path"]


def remove_link(config: Config) -> dict[str, str] | None:
    """Take out the link bootstrap made (recorded in `config`, being edited): `{"path", "target", "state":
    "removed"|"other"}`, or None when bootstrap made none. A link there to another helper (a later install of the
    user's) is theirs, and stays."""
    recorded = config.pop(LINKED, None)
    link = bin_dir() / NAME
    if recorded != str(link) or not link.is_symlink():
        return None
    target = os.readlink(link)
    helper = Path(sys.executable).parent / NAME
    if link.exists() and not _same(str(link), helper):
        return {"path": str(link), "target": target, "state": "other"}
    link.unlink()
    return {"path": str(link), "target": target, "state": "removed"}
