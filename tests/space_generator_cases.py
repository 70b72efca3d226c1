"""The generator's test cases, as plain data: the CPython tests and the Pyodide run (tests/space_pyodide.mjs)
both use this module, so the two interpreters answer exactly the same requests.

Standard library only: Pyodide loads this file next to the generator's own files.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

HELPER = {
    "url": "https://huggingface.co/spaces/alice/agent-memory/resolve/0123456789abcdef0123456789abcdef01234567/"
    "helper/agent_memory-0.1.0-py3-none-any.whl",
    "sha256": "3f" * 32,
    "version": "0.1.0",
    "revision": "0123456789abcdef0123456789abcdef01234567",
}
SYSTEMS = ("linux", "macos", "windows")
INSTALLERS = ("uv", "pipx", "venv")
AGENTS = ("both", "codex", "claude")
BUCKETS = ("", "alice/memory", "hf://buckets/team-x/shared.memory", "file:///srv/agent memory/store")
CANARY = "canary"  # hostile inputs try to create this file in the current folder

# (field, value, expected): "refused"; "accepted" (then the value must reach the helper unchanged, which the
# CPython tests check by running the bash commands and by parsing the PowerShell ones); or "unix" (accepted on
# Linux and macOS, refused on Windows, whose paths cannot contain < > : " | ? *).
HOSTILE: list[tuple[str, object, str]] = [
    ("project", "; rm -rf ~", "refused"),
    ("project", f"demo; touch {CANARY}", "refused"),
    ("project", f"$(touch {CANARY})", "refused"),
    ("project", f"`touch {CANARY}`", "refused"),
    ("project", f"demo'; touch {CANARY}; '", "refused"),
    ("project", f'demo"; touch {CANARY}; "', "refused"),
    ("project", f"demo\ntouch {CANARY}", "refused"),
    ("project", f"demo\r\ntouch {CANARY}", "refused"),
    ("project", "-rf", "refused"),
    ("project", "..", "refused"),
    ("project", "ｄｅｍｏ", "refused"),  # fullwidth letters
    ("project", f"demo；touch {CANARY}", "refused"),  # fullwidth semicolon
    ("project", "dem\u043e", "refused"),  # Cyrillic o
    ("project", "demo\u200b", "refused"),  # zero-width space
    ("project", "demo\u2019", "refused"),  # right single quotation mark
    ("project", "", "refused"),
    ("project", "  demo  ", "accepted"),  # pasted with spaces: trimmed, like the helper trims a bucket
    ("bucket", f"alice/memory; touch {CANARY}", "refused"),
    ("bucket", f"alice/$(touch {CANARY})", "refused"),
    ("bucket", f"alice/memory\ntouch {CANARY}", "refused"),
    ("bucket", f"hf://buckets/alice/memory`touch {CANARY}`", "refused"),
    ("bucket", "https://example.com/alice/memory", "refused"),
    ("bucket", "file://relative/path", "refused"),
    ("bucket", f"file:///tmp/store\ntouch {CANARY}", "refused"),
    ("bucket", f"file:///tmp/store\u2028touch {CANARY}", "refused"),  # line separator
    ("bucket", "file:///tmp/store\u202egnp.exe", "refused"),  # right-to-left override
    ("bucket", "file:///tmp/it!!s", "refused"),  # history expansion in bash and zsh
    # percent-escapes are decoded into the script: what they decode to is checked like typed characters
    ("bucket", "file:///tmp/store%E2%80%AEgnp.exe", "refused"),  # right-to-left override
    ("bucket", "file:///tmp/store%E2%81%A6x", "refused"),  # left-to-right isolate
    ("bucket", "file:///tmp/store%D8%9Cx", "refused"),  # Arabic letter mark
    ("bucket", "file:///tmp/store%E2%80%8Fx", "refused"),  # right-to-left mark
    ("bucket", "file:///tmp/store%C2%9B31m", "refused"),  # C1 control sequence introducer
    ("bucket", f"file:///tmp/store%C2%85touch {CANARY}", "refused"),  # next line
    ("bucket", f"file:///tmp/store%E2%80%A8touch {CANARY}", "refused"),  # line separator
    ("bucket", f"file:///tmp/store%0Atouch {CANARY}", "refused"),
    ("bucket", "file:///tmp/store%7F", "refused"),
    ("bucket", "file:///tmp/store%E2%80%8Bx", "refused"),  # zero-width space
    ("bucket", "file:///tmp/it%21%21s", "refused"),  # history expansion, once decoded
    ("bucket", "file:///tmp/store\u0085x", "refused"),  # next line, typed
    ("bucket", "file:///tmp/store\u200ex", "refused"),  # left-to-right mark, typed
    ("bucket", "file:///tmp/agent%20memory/caf%C3%A9", "accepted"),  # decoded to a space and an accent
    ("bucket", f"file:///tmp/store; touch {CANARY}", "accepted"),
    ("bucket", f"file:///tmp/$(touch {CANARY})", "accepted"),
    ("bucket", f"file:///tmp/`touch {CANARY}`", "accepted"),
    ("bucket", f"file:///tmp/it's'; touch {CANARY}; '", "accepted"),
    ("bucket", f'file:///tmp/"; touch {CANARY}; "', "unix"),
    ("bucket", f"file:///tmp/\u2019; touch {CANARY}; \u2018", "accepted"),  # PowerShell quotes
    ("bucket", f"file:///tmp/\u201a\u201b; touch {CANARY}", "accepted"),
    ("bucket", f"file:///tmp/${{HOME}}/$HOME/%USERPROFILE%/@(touch {CANARY})/$({CANARY})", "accepted"),
    ("bucket", f"file:///tmp/$env:TEMP/{CANARY}", "unix"),
    ("bucket", "file:///tmp/ａｇｅｎｔ／ｍｅｍｏｒｙ", "accepted"),  # look-alikes are just characters in a path
    ("bucket", f"file:///tmp/a\\b & touch {CANARY} & exit", "accepted"),
    ("bucket", f"file:///tmp/a | touch {CANARY} > x < y", "unix"),
    ("bucket", "file:///C:/Users/me/agent memory", "accepted"),
    ("bucket", "  alice/memory\n", "accepted"),
    ("skills", f"tools@r1; touch {CANARY}", "refused"),
    ("skills", f"tools@$(touch {CANARY})", "refused"),
    ("skills", f"tools@`touch {CANARY}`", "refused"),
    ("skills", f"tools@r1 ; touch {CANARY}", "refused"),
    ("skills", "tools", "refused"),
    ("skills", "agent-memory@r1", "refused"),  # the reserved core skill
    ("skills", "Tools@r1", "refused"),
    ("skills", "tools@r1\nlinter@r2,notes@2026-11-30.1", "accepted"),
    ("skills", "tools@r1\u202e", "refused"),
    ("project", "demo\u2066", "refused"),
    ("os", "linux; rm -rf ~", "refused"),
    ("installer", "pip", "refused"),
    ("agent", "all", "refused"),
    ("hooks", "yes", "refused"),
    ("codex_sandbox", "yes", "refused"),
    ("codex_sandbox", 1, "refused"),
    ("sync", "yes", "refused"),
]


def form(system: str = "linux", installer: str = "venv", agent: str = "both", **fields: object) -> dict[str, object]:
    """A complete form with sensible defaults."""
    return {"os": system, "installer": installer, "agent": agent, "project": "demo", "bucket": "", "hooks": False,
            "skills": "", "codex_sandbox": False, "sync": False, **fields}  # fmt: skip


def matrix() -> dict[str, dict[str, object]]:
    """Every operating system x installer x agent, with the other fields varied along the way."""
    cases = {}
    for index, (system, installer, agent) in enumerate(itertools.product(SYSTEMS, INSTALLERS, AGENTS)):
        cases[f"{system}-{installer}-{agent}"] = form(
            system,
            installer,
            agent,
            project=("demo", "my.project_2", "X")[index % 3],
            bucket=BUCKETS[index % len(BUCKETS)],
            hooks=index % 2 == 0,
            skills=("", "tools@r1", "tools@r1 linter@2026-11-30.abc")[index % 3],
            codex_sandbox=agent != "claude" and index % 4 < 2,  # the consent is Codex's: never with Claude Code alone
            sync=index % 3 == 1,
        )
    return cases


def hostile() -> dict[str, tuple[str, str, str, dict[str, object]]]:
    """Each hostile value in its field, for every operating system: id -> (field, value, expected, form)."""
    cases = {}
    for index, (field, value, expected) in enumerate(HOSTILE):
        for system in SYSTEMS:
            if field == "os":
                system = value
            cases[f"hostile-{index}-{system}"] = (field, value, expected, form(system, **{field: value}))
            if field == "os":
                break
    return cases


def requests() -> dict[str, str]:
    """Every request the tests send to `from_form`, by case id."""
    forms = {**matrix(), **{case: entry[3] for case, entry in hostile().items()}}
    return {case: json.dumps({"helper": HELPER, "form": data}) for case, data in forms.items()}


def run_all(from_form: Callable[[str], str]) -> dict[str, str]:
    """The generator's answer to every request, by case id."""
    return {case: from_form(request) for case, request in requests().items()}
