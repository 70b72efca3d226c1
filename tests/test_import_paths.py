"""Each hot command loads only its declared path: the helper's modules listed here for it, and none of the write path
(the outbox's delivery, the refresh, the store SDK) nor PyYAML. A command that loads one module more fails here: add
it to its list only if that command really needs it (and say why in the commit), else import it where it is used.

Measured in a real process (`sys.modules` when it ends), the way the agents and their hooks run the command.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tools

# what no hot command may load: the write path, and the heavy libraries behind it
FORBIDDEN = {
    "huggingface_hub",
    "hf_xet",
    "httpx2",
    "yaml",
    "agent_memory.outbox.delivery",
    "agent_memory.outbox.writing",
    "agent_memory.memory.refresh",
    "agent_memory.memory.saving",
    "agent_memory.memory.frontmatter",
    "agent_memory.store.hub",
    "agent_memory.store.local",
    "agent_memory.cli.failures",
    "agent_memory.contract",  # the results' declarations, for the type checker and the tests (it loads typing)
    "jinja2",  # the page of `view` and its Markdown: that command's alone
    "markdown_it",
    "markupsafe",
    "mdurl",
}

# what the first module answers alone, with os-level calls: a bare --version, and the Stop hook after a turn that
# left nothing to do (`idle`)
FIRST = {"", "start", "idle", "roots"}
# every other command: the entry, the table, the parser and the renderer, the Context (configuration, project, stores)
BASE = {
    "",
    "agents",
    "agents.claude",
    "agents.codex",
    "cli",
    "cli.parsing",
    "cli.render",
    "commands",
    "config",
    "config.context",
    "config.projects",
    "config.repository",
    "config.settings",
    "display",
    "entry",
    "errors",
    "fsutil",
    "idle",
    "names",
    "paths",
    "roots",
    "start",
    "store",
    "store.base",
    "store.bucket",
    "store.budget",
    "store.outage",
}
# reading the notes of the cache and those pending here
NOTES = {
    "contents",
    "memory",
    "memory.cache",
    "memory.checksums",
    "memory.finding",
    "memory.notes",
    "memory.pack",
    "memory.pending",
    "outbox",
    "outbox.kinds",
    "outbox.listing",
    "outbox.plans",
}
SKILL_FILES = {"skills", "skills.catalog", "skills.layout"}  # `search --skills` and `read --skill`, same commands
USAGE = {"report", "report.usage"}  # the receipts of use: one line appended per command (no query, no content)
SYNC_SETTING = {"sync", "sync.settings"}  # whether the runtime's own memory is synced: one look at the configuration

PATHS = {
    "--version": FIRST,
    "--version --json": BASE,  # the parser's --version, among other arguments
    "search --offline": BASE | NOTES | USAGE | {"cli.search", "memory.search"},  # the skills' catalog: --skills only
    "read": BASE | NOTES | SKILL_FILES | USAGE | {"cli.read", "memory.reading"},
    "status": BASE
    | NOTES
    | USAGE
    | {"cli.status", "report.status", "hooks"}
    | {"hooks.reminded", "outbox.backoff", "skills.catalog"}  # their records checked for damage (`damaged_state`)
    | {"setup", "setup.agent_files_read", "setup.sandbox_consent_read", "setup.command", "setup.hook_config_read"}
    | {"skills", "skills.install_read", "skills.layout"}
    | {"store.bounded", "store.detached"}  # the folder store's folder is asked, in a child that a hung mount cannot
    # hold (`store_check`), which keeps none of the command's descriptors (`detached.close_all_but`)
    | SYNC_SETTING,  # the sync's records and the kinds of upload: only where there are some (below)
    "hook session-start": BASE
    | NOTES
    | USAGE
    | {"cli.hook_start", "clock", "hooks", "hooks.reminded", "hooks.reminder", "setup", "setup.command"}
    | {"hooks.checkpoint", "memory.origin", "memory.search", "guard"}  # after a compaction only: its checkpoint
    | {"hooks.forks"}  # a fork's start or a compaction: which sessions it came from
    | SYNC_SETTING,
    "hook stop": FIRST,
    # the whole Stop hook with nothing to do (here because its command line is not the hook files': --json)
    "hook stop --json": BASE | {"cli.hook_stop", "contents", "outbox", "outbox.plans"} | SYNC_SETTING,
}

RUNS = {  # the module that shows that each command really ran
    "--version": "start",
    "--version --json": "entry",
    "search --offline": "cli.search",
    "read": "cli.read",
    "status": "cli.status",
    "hook session-start": "cli.hook_start",
    "hook stop": "idle",
    "hook stop --json": "cli.hook_stop",
}

# run the command as its console script would, and write the modules it loaded to a file when it ends
RUNNER = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from agent_memory.start import main
sys.exit(main())
"""


def loaded(machine, tmp_path, *args: str, stdin: str = "") -> set[str]:
    """The modules a real process of `agent-memory ARGS` had loaded when it ended."""
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(out), *args],
        input=stdin.encode(),
        capture_output=True,
        cwd=machine.work,
        env=machine.env,
        timeout=120,
    )
    tools.exited(proc)
    return set(json.loads(out.read_text()))


def own(modules: set[str]) -> set[str]:
    return {m.removeprefix("agent_memory").removeprefix(".") for m in modules if m.split(".")[0] == "agent_memory"}


@pytest.mark.parametrize("command", list(PATHS))
def test_each_hot_command_loads_only_its_declared_path(ready, tmp_path, command):
    note = ready.save("# The hot path\n\nSomething worth keeping.", "--kind", "checkpoint").json["id"]
    args = {"search --offline": ("search", "--offline", "hot"), "read": ("read", note)}.get(command, command.split())
    if command.startswith("hook"):
        args = (*args, "--agent", "codex")
    # after a compaction the reminder also points at the newest checkpoint: its longest path
    modules = loaded(ready, tmp_path, *args, stdin=json.dumps({"cwd": str(ready.work), "source": "compact"}))
    assert RUNS[command] in own(modules)  # the command really ran
    assert own(modules) - PATHS[command] == set(), f"{command} loads more than its declared path"
    assert not {m for m in modules if m.split(".")[0] in FORBIDDEN or m in FORBIDDEN}, command


def test_the_declared_paths_are_not_stale(ready, tmp_path):
    """Each list is what its command loads today: a module it no longer loads is taken off its list."""
    ready.save("# The hot path\n\nSomething worth keeping.")
    assert own(loaded(ready, tmp_path, "--version")) == PATHS["--version"]
    assert own(loaded(ready, tmp_path, "hook", "stop", "--agent", "codex", stdin="{}")) == PATHS["hook stop"]


def test_the_newest_checkpoint_is_looked_for_after_a_compaction_only(ready, tmp_path):
    """The SessionStart pointer to the newest checkpoint (a search of the cache, the machine's name, checked by the
    secret guard) is loaded after a compaction, and only then: a session that starts or resumes loads none of it."""
    ready.save("# The hot path\n\nSomething worth keeping.", "--kind", "checkpoint")
    after = {"hooks.checkpoint", "memory.search", "memory.origin", "guard"}
    for source, expected in (("startup", set()), ("resume", set()), ("compact", after)):
        event = json.dumps({"cwd": str(ready.work), "source": source})
        modules = own(loaded(ready, tmp_path, "hook", "session-start", "--agent", "codex", stdin=event))
        assert "hooks.reminder" in modules, source  # the reminder was made
        assert modules & after == expected, source


def test_a_search_loads_the_skills_catalog_for_skills_only(ready, tmp_path):
    """`search --skills` loads the catalog of skills (with the layout's Unicode tables); a search of notes does not."""
    notes = loaded(ready, tmp_path, "search", "--offline", "hot")
    skills = loaded(ready, tmp_path, "search", "--offline", "--skills", "hot")
    assert not (SKILL_FILES & own(notes)) and "unicodedata" not in notes
    assert own(skills) >= SKILL_FILES and "unicodedata" in skills


def test_the_simd_search_is_loaded_by_a_large_scan_alone(ready, tmp_path):
    """StringZilla (a 15 MB extension, half a millisecond to load) is what a search scans a pack larger than 1 MiB
    with; a search of a small cache, `status` and a SessionStart hook do without it."""
    ready.save("# The hot path\n\nSomething worth keeping.")
    assert "stringzilla" not in loaded(ready, tmp_path, "search", "--offline", "hot")
    for index in range(3):  # a pack larger than 1 MiB
        ready.save(f"# Big {index}\n\n" + "lorem ipsum dolor sit amet " * 15_000)
    assert "stringzilla" in loaded(ready, tmp_path, "search", "--offline", "hot")
    assert "stringzilla" not in loaded(ready, tmp_path, "status")
    event = json.dumps({"cwd": str(ready.work), "source": "startup"})
    assert "stringzilla" not in loaded(ready, tmp_path, "hook", "session-start", "--agent", "codex", stdin=event)


def test_a_stop_with_something_pending_loads_the_retry(ready, tmp_path, folder_store):
    """The write path is there when it is needed: with a note pending, the Stop hook delivers it."""
    store = Path(folder_store.removeprefix("file://"))
    store.rename(store.with_name("unmounted"))  # its drive is gone: the save stays pending
    tools.exited(ready.save("Pending for now."), 75)
    store.with_name("unmounted").rename(store)
    modules = loaded(ready, tmp_path, "hook", "stop", "--agent", "codex", stdin="{}")
    assert {"agent_memory.outbox.delivery", "agent_memory.hooks.retry"} <= modules
    assert ready.run("pending", "--json").json["notes"] == []  # delivered by that Stop


def test_status_loads_the_kinds_of_upload_where_one_waits(ready, tmp_path, folder_store):
    """With the outbox empty, status loads none of the kinds of upload; with a note pending, it lists it with them."""
    assert not {"uploads", "skills.pending", "sync.uploads"} & own(loaded(ready, tmp_path, "status"))
    store = Path(folder_store.removeprefix("file://"))
    store.rename(store.with_name("unmounted"))  # its drive is gone: the save stays pending
    note = ready.save("Pending for now.")
    tools.exited(note, 75)
    store.with_name("unmounted").rename(store)
    assert {"uploads", "skills.pending", "sync.uploads"} <= own(loaded(ready, tmp_path, "status"))
    assert [entry["id"] for entry in ready.run("status", "--json").json["pending"]] == [note.json["id"]]


def test_status_parses_no_codex_config_that_cannot_turn_the_hooks_off(ready, tmp_path):
    """With Codex's hooks installed, status looks in config.toml for the setting that turns them off: a config.toml
    that cannot hold it (no such key, no escape) is not parsed, and `tomllib` (with `typing`) is not loaded."""
    tools.exited(ready.run("hooks", "install", "--agent", "codex"))
    (ready.home / ".codex" / "config.toml").write_text('model = "o3"\n\n[tui]\nnotifications = true\n')
    modules = loaded(ready, tmp_path, "status")
    assert not {"tomllib", "typing"} & modules
    assert "hooks (codex): installed" in ready.run("status").out


def test_status_tells_the_consent_allow_wrote_without_parsing_it(ready, tmp_path):
    """The consent block for Codex's sandbox, exactly as `allow` writes it for the folders needed now, is told
    allowed without parsing config.toml (tomllib, with typing); a block that differs from it is parsed."""
    tools.exited(ready.run("codex-sandbox", "allow"))
    assert not {"tomllib", "typing"} & loaded(ready, tmp_path, "status")
    assert ready.run("status", "--json").json["codex_sandbox"]["state"] == "allowed"
    config = ready.home / ".codex" / "config.toml"
    config.write_text(config.read_text().replace("network_access = true", "network_access  =  true"))
    assert "tomllib" in loaded(ready, tmp_path, "status")
    assert ready.run("status", "--json").json["codex_sandbox"]["state"] == "allowed"


def test_the_collector_is_on_for_the_commands_work(ready, tmp_path):
    """`start` turns the garbage collector off while a command's modules load (they live as long as the process),
    and `entry` turns it on again before the command runs, with what was loaded set aside: a long command (a refresh
    of thousands of notes, a sync) is collected as any program is."""
    out = tmp_path / "collector.json"
    runner = RUNNER.replace("json.dumps(sorted(sys.modules))", "json.dumps([gc.isenabled(), gc.get_freeze_count()])")
    proc = subprocess.run(
        [sys.executable, "-c", "import gc\n" + runner, str(out), "search", "--offline", "anything"],
        capture_output=True,
        cwd=ready.work,
        env=ready.env,
        timeout=120,
    )
    tools.exited(proc)
    enabled, frozen = json.loads(out.read_text())
    assert enabled and frozen > 0  # on again, and the modules' objects set aside


# standard modules that cost a hot command a tenth of the interpreter's own start-up or more, each loaded where its
# rare case starts: `typing` (never: the contract that declares the results with it is for the type checker and the
# tests), `shutil` (a folder removed or copied: fsutil), `hashlib` (a digest made: contents.sha256), `tomllib`
# (Codex's config.toml parsed: setup.sandbox_consent_read), `_strptime` and `calendar` (no time is parsed with them:
# clock), `datetime` (its pure-Python module: clock takes its classes from the C module it re-exports), `contextlib`
# (its eighteen classes: the modules of the hot paths catch their errors themselves and make their own context managers)
COSTLY_STDLIB = {
    "typing",
    "shutil",
    "hashlib",
    "_hashlib",
    "tomllib",
    "_strptime",
    "calendar",
    "datetime",
    "contextlib",
}
# and `unicodedata` (the skills' layout) but where a command reads skills: status (the installed ones) and read (its
# --skill); a search loads it for `--skills` only
SKILLS_LAYOUT = {"status", "read"}


@pytest.mark.parametrize("command", list(PATHS))
def test_the_read_path_loads_no_costly_standard_module(ready, tmp_path, command):
    """With nothing pending and no Codex config.toml, no hot command loads what only a rare case of it needs (the
    SessionStart hook records the session it reminded, with the digest of nothing pending)."""
    note = ready.save("# The hot path\n\nSomething worth keeping.", "--kind", "checkpoint").json["id"]
    args = {"search --offline": ("search", "--offline", "hot"), "read": ("read", note)}.get(command, command.split())
    if command.startswith("hook"):
        args = (*args, "--agent", "codex")
    event = {"cwd": str(ready.work), "source": "compact", "session_id": "5f1c2a9e-hot-path"}
    modules = loaded(ready, tmp_path, *args, stdin=json.dumps(event))
    assert not COSTLY_STDLIB & modules, command
    assert command in SKILLS_LAYOUT or "unicodedata" not in modules, command


def test_only_the_view_loads_its_page_libraries(ready, tmp_path):
    """`view` renders with jinja2 and markdown-it-py (FORBIDDEN to every hot command above); it reads the local records
    only: none of the write path, the store SDK or PyYAML."""
    ready.save("# The page\n\nSomething worth seeing.")
    modules = loaded(ready, tmp_path, "view", "--out", str(tmp_path / "site"))
    assert "cli.view" in own(modules) and {"jinja2", "markdown_it"} <= modules
    page = {"jinja2", "markdown_it", "markupsafe", "mdurl"}
    assert not {m for m in modules if m.split(".")[0] in FORBIDDEN - page or m in FORBIDDEN - page}


# With the runtime's memory synced and nothing changed here, the whole Stop hook (a session's first, before any
# record of a quiet turn: `hooks.quiet`) looks at the folders and stops: none of the sync itself (the bucket, the
# merge, the outbox), and nothing of Codex's delivery for Claude Code
NOT_FOR_A_QUIET_PUSH = {
    "sync.running",
    "sync.engine",
    "sync.merging",
    "sync.codex_delivery",
    "sync.codex_migration",
    "hooks.memory_sync",
    "hooks.retry",
    "outbox.delivery",
    "outbox.writing",
    "importing.sources",
    "memory.cache",
}
CODEX_ONLY = {"sync.codex_delivery", "sync.codex_migration"}  # other machines' Codex memories, delivered


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_hooks_with_sync_on_and_nothing_changed_load_only_what_they_use(machine, bucket, tmp_path, agent):
    machine.setup(bucket)
    tools.exited(machine.run("sync", "enable", "--agent", agent))
    tools.exited(machine.run("sync", "now", "--json"))
    event = json.dumps({"cwd": str(machine.work), "session_id": "5f1c2a9e-quiet-push"})
    stop = loaded(machine, tmp_path, "hook", "stop", "--agent", agent, stdin=event)
    assert "cli.hook_stop" in own(stop) and "hooks.memory_push" in own(stop)  # the whole hook looked
    assert not own(stop) & NOT_FOR_A_QUIET_PUSH, agent
    assert not {m for m in stop if m.split(".")[0] in FORBIDDEN or m in FORBIDDEN}
    assert not {"tempfile", "shutil", "dataclasses", "inspect"} & stop
    start = own(loaded(machine, tmp_path, "hook", "session-start", "--agent", agent, stdin=event))
    assert "hooks.memory_sync" in start and "sync.running" in start  # the pull
    assert agent == "codex" or not start & CODEX_ONLY
    assert not start & {"hooks.retry", "importing.sources", "outbox.writing"}
