"""The real Codex CLI's trust in the user's own hooks survives `hooks install` and `hooks remove` (X2, X3).

Codex keys a hook's trust by its group's position in hooks.json and by the handler's content, so these tests ask
Codex itself (`codex app-server`'s `hooks/list`) which hooks it finds and trusts, and run `codex exec` without
`--dangerously-bypass-hook-trust` to see that a trusted hook of the user's still runs.
"""

from __future__ import annotations

import json
import shlex

import pytest

import tools
from agent_clis import Codex, CodexAppServer
from model_servers import Say

pytestmark = pytest.mark.slow
SNAKE = {"SessionStart": "session_start", "Stop": "stop"}  # Codex's event labels in hook keys


def test_the_users_trusted_hooks_after_ours_keep_their_keys_and_still_run_after_remove(machine):
    hooks_json = machine.home / ".codex" / "hooks.json"
    ran = machine.root / "ran"
    with Codex.model_class() as model:
        cli = Codex(machine, model, bypass_hook_trust=False)  # first: it writes the user's config.toml
        tools.exited(machine.run("hooks", "install", "--agent", "codex"))
        theirs = {event: f"printf '{event}\\n' >> {shlex.quote(str(ran))}" for event in ("SessionStart", "Stop")}
        settings = json.loads(hooks_json.read_text())
        for event, command in theirs.items():  # the user adds hooks of their own, after ours
            settings["hooks"][event].append({"hooks": [{"type": "command", "command": command}]})
        hooks_json.write_text(json.dumps(settings, indent=2) + "\n")

        with CodexAppServer(machine) as codex:
            found = {hook["command"]: hook for hook in codex.hooks(machine.work)}
            for event, command in theirs.items():
                assert found[command]["key"] == f"{hooks_json}:{SNAKE[event]}:1:0"  # right behind ours
                codex.trust(found[command])  # the user reviews and trusts their own hooks in /hooks
            trusted = {h["key"]: h["command"] for h in codex.hooks(machine.work) if h["trustStatus"] == "trusted"}
            assert sorted(trusted.values()) == sorted(theirs.values())

            removed = machine.run("hooks", "remove", "--agent", "codex")
            tools.exited(removed)
            after = codex.hooks(machine.work)
            # ours are gone, and each of the user's hooks has the key it was trusted under, and is trusted still
            assert {h["key"]: h["command"] for h in after} == trusted
            assert {h["trustStatus"] for h in after} == {"trusted"}

            # what the placeholder prevents: without it, the same hooks move to index 0 and lose their trust (X3)
            placeholders = hooks_json.read_text()
            for groups in settings["hooks"].values():
                del groups[0]
            hooks_json.write_text(json.dumps(settings, indent=2) + "\n")
            assert {h["trustStatus"] for h in codex.hooks(machine.work)} == {"untrusted"}
            hooks_json.write_text(placeholders)

            # installed again: ours go back into the placeholders, under the keys they had, and no empty group stays
            tools.exited(machine.run("hooks", "install", "--agent", "codex"))
            again = {h["key"]: h for h in codex.hooks(machine.work)}
            for event in theirs:
                assert "hook " in again[f"{hooks_json}:{SNAKE[event]}:0:0"]["command"]
                assert again[f"{hooks_json}:{SNAKE[event]}:1:0"]["trustStatus"] == "trusted"
            assert all(
                group["hooks"] for groups in json.loads(hooks_json.read_text())["hooks"].values() for group in groups
            )
            tools.exited(machine.run("hooks", "remove", "--agent", "codex"))
            assert hooks_json.read_text() == placeholders

        model.script(Say("Hello."))
        run = cli.run("Hello?")
        model.assert_played()
    tools.exited(run)
    assert ran.read_text() == "SessionStart\nStop\n"  # trusted, so Codex ran them without the bypass flag
