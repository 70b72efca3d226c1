"""`agent-memory import`: the memories a user already has, in each tool's real layout, become notes of the project.

Claude Code's folder is checked against the real Claude Code from node_modules: its system prompt names the auto
memory folder it uses, which must be the one import reads. Notes go through the outbox to a folder store and to
the Hub emulator (real huggingface_hub and hf_xet).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from agent_clis import Claude
from conftest import BUCKET, Machine
from model_servers import Say

SECRET = "hf_" + "Q" * 34  # looks like a Hugging Face token to the guard; never a real one


@pytest.fixture(params=["folder", "hub"])
def store(request, machine: Machine, tmp_path: Path):
    """Machine A set up on a folder store or on the Hub emulator; `.objects()` reads every note stored."""
    if request.param == "folder":
        root = tmp_path / "store"
        root.mkdir(mode=0o700)
        machine.setup(f"file://{root}")

        def objects() -> dict[str, bytes]:
            return {
                str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*.md") if "/notes/" in str(path)
            }
    else:
        hub = request.getfixturevalue("hub")
        machine.setup(BUCKET)

        def objects() -> dict[str, bytes]:
            return {p: hub.read_file(BUCKET, p) for p in hub.list_paths(BUCKET) if p.startswith("projects/")}

    machine.objects = objects
    return machine


def claude_memory(machine: Machine, checkout: Path | None = None) -> Path:
    """Claude Code's auto memory folder for `checkout` as the bundle names it (`-` for every other character)."""
    key = re.sub(r"[^a-zA-Z0-9]", "-", str(checkout or machine.work))
    folder = machine.home / ".claude" / "projects" / key / "memory"
    folder.mkdir(parents=True)
    return folder


def write_claude_layout(folder: Path) -> None:
    """What Claude Code 2.1.328 writes: an index, and one file per memory with its own frontmatter."""
    (folder / "MEMORY.md").write_text(
        "- [Run only the touched tests](feedback_tests.md) — the suite is slow\n- [Pin hub](project_pin.md)\n"
    )
    (folder / "feedback_tests.md").write_text(
        "---\nname: feedback-tests\ndescription: run only the touched tests\nmetadata:\n  type: feedback\n---\n\n"
        "Run only the test files you touch.\n**Why:** two cores for five people.\n"
    )
    (folder / "project_pin.md").write_text(
        "---\nname: project-pin\ndescription: hub pin\nmetadata:\n  type: project\n---\n\n# Pin huggingface_hub\n\n"
        "We pin huggingface_hub to 2.4.0.\n"
    )
    (folder / "team").mkdir()  # team memory, shared with the project's other users
    (folder / "team" / "reference_dashboard.md").write_text("The latency dashboard is grafana/d/api.\n")


def write_codex_layout(machine: Machine) -> Path:
    """Codex 0.169's memories folder: the summary, the index, raw memories, rollout summaries, ad hoc notes."""
    folder = machine.home / ".codex" / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    (folder / "extensions" / "ad_hoc" / "notes").mkdir(parents=True)
    (folder / "memory_summary.md").write_text("## User preferences\n\n- Prefers small commits.\n")
    (folder / "MEMORY.md").write_text("# Task group: parser\n\nrollout_path: rollout_summaries/a.md\n")
    (folder / "raw_memories.md").write_text("# Raw Memories\n\n- the parser is recursive\n")
    (folder / "rollout_summaries" / "2026-02-17T21-23-02-LN3m-parser.md").write_text("# Parser rewrite\n\nDone.\n")
    (folder / "extensions" / "ad_hoc" / "notes" / "note.md").write_text("Remember the bench numbers.\n")
    (folder / "state.json").write_text("{}")  # not Markdown: never read
    return folder


def write_cline_layout(machine: Machine) -> Path:
    """Cline's memory bank in the checkout: its core files."""
    folder = machine.work / "memory-bank"
    folder.mkdir()
    for name, text in {
        "projectbrief.md": "# Project brief\n\nPortable memory for agents.\n",
        "activeContext.md": "# Active context\n\nWorking on import.\n",
        "progress.md": "# Progress\n\nSearch works.\n",
    }.items():
        (folder / name).write_text(text)
    return folder


def notes_of(objects: dict[str, bytes]) -> dict[str, str]:
    return {path: data.decode() for path, data in objects.items()}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


# -- where Claude Code keeps its memory: the real Claude Code says ------------------------------------------


def memory_folder_claude_uses(machine: Machine, cwd: Path) -> str:
    """The auto memory folder named in the real Claude Code's system prompt for a session in `cwd`."""
    with Claude.model_class() as model:
        model.script(Say("Hi."))
        run = Claude(machine, model).run("Hello?", cwd=cwd)
        assert run.code == 0, run.err[-2000:]
        found = re.search(r"persistent file-based memory at `([^`]+)`", model.text(0))
    assert found, "Claude Code no longer names its memory folder in its system prompt"
    return found.group(1).rstrip("/")


@pytest.mark.parametrize("case", ["checkout", "worktree", "long path", "setting"])
def test_claude_memory_folder_is_the_one_claude_code_uses(case, machine, tmp_path):
    checkout = machine.work
    if case == "long path":
        checkout = machine.root / ("a-very-long-folder-name-" * 5) / ("and.another_one " * 6).strip()
        checkout.mkdir(parents=True)
        assert len(str(checkout)) > 200
    git("init", "-q", ".", cwd=checkout)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "first", cwd=checkout)
    here = checkout
    if case == "worktree":  # outside the checkout, as Codex and Claude Code place theirs
        here = tmp_path / "worktrees" / "feature"
        git("worktree", "add", "-q", str(here), cwd=checkout)
    if case == "setting":
        settings = machine.home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/claude-memory"}))
    (tmp_path / "store").mkdir(mode=0o700)
    machine.setup(f"file://{tmp_path / 'store'}")
    assert machine.run("project", "map", "demo", str(here)).code == 0

    expected = memory_folder_claude_uses(machine, here)  # which Claude Code creates, empty
    planned = machine.run("import", "--from", "claude", "--dry-run", "--json", cwd=here).json
    assert planned["sources"] == [{"tool": "claude", "path": expected, "found": True, "files": 0}]
    if case == "worktree":  # keyed by the main checkout, not by the worktree
        assert expected.endswith(re.sub(r"[^a-zA-Z0-9]", "-", str(checkout)) + "/memory")
    if case == "setting":
        assert expected == str(machine.home / "notes" / "claude-memory")

    (Path(expected) / "fact.md").write_text("# A fact\n\nClaude Code wrote this.\n")
    imported = machine.run("import", "--from", "claude", "--json", cwd=here)
    assert imported.code == 0, imported.err
    assert [row["title"] for row in imported.json["files"]] == ["A fact"]


# -- importing each layout --------------------------------------------------------------------------------


def test_every_source_imported_once_then_nothing_new(store):
    write_claude_layout(claude_memory(store))
    write_codex_layout(store)
    write_cline_layout(store)

    first = store.run("import", "--json")
    assert first.code == 0, first.err
    result = first.json
    assert set(result) == {"project", "dry_run", "sources", "files", "counts", "sync"}
    assert [(s["tool"], s["found"], s["files"]) for s in result["sources"]] == [
        ("claude", True, 4),
        ("codex", True, 5),
        ("cline", True, 3),
    ]
    assert result["counts"] == {"new": 12, "correction": 0, "unchanged": 0, "refused": 0, "empty": 0, "pending": 0}
    assert set(result["files"][0]) == {
        "path", "source", "tool", "title", "action", "id", "corrects", "status", "reason", "findings",
    }  # fmt: skip
    titles = {row["source"].split("/")[-1]: row["title"] for row in result["files"]}
    assert titles["reference_dashboard.md"] == "reference_dashboard"  # in team/: imported too
    assert titles["project_pin.md"] == "Pin huggingface_hub"  # the heading, past the file's own frontmatter
    assert titles["feedback_tests.md"] == "feedback_tests"  # no heading: the file's name
    assert titles["activeContext.md"] == "Active context"
    stored = notes_of(store.objects())
    assert len(stored) == 12
    pin = next(text for text in stored.values() if "title: Pin huggingface_hub" in text)
    source = str(store.home / ".claude" / "projects")
    assert f"sources:\n- {source}" in pin and "tags:\n- imported\n- claude\n" in pin and "agent: claude\n" in pin
    # the file's bytes are the note's body, its own frontmatter included
    assert pin.endswith("\n\n---\nname: project-pin\ndescription: hub pin\nmetadata:\n  type: project\n---\n\n"
                        "# Pin huggingface_hub\n\nWe pin huggingface_hub to 2.4.0.\n")  # fmt: skip
    brief = next(text for text in stored.values() if "title: Project brief" in text)
    assert "sources:\n- memory-bank/projectbrief.md\n" in brief  # inside the checkout: relative, as in every clone
    assert "tags:\n- imported\n- cline\n" in brief

    again = store.run("import", "--json")
    assert again.code == 0, again.err
    assert again.json["counts"]["unchanged"] == 12 and again.json["counts"]["new"] == 0
    assert {row["id"] for row in again.json["files"]} == {row["id"] for row in result["files"]}
    assert notes_of(store.objects()) == stored

    text = store.run("import")
    assert "Imported into project demo: 0 new notes, 0 corrections, 12 unchanged, 0 refused." in text.out


def test_a_changed_file_corrects_its_note(store):
    bank = write_cline_layout(store)
    first = {row["source"]: row["id"] for row in store.run("import", "--json").json["files"]}
    (bank / "activeContext.md").write_text("# Active context\n\nImport is done; now the README.\n")

    second = store.run("import", "--json")
    assert second.code == 0, second.err
    rows = {row["source"]: row for row in second.json["files"]}
    changed = rows["memory-bank/activeContext.md"]
    assert changed["action"] == "correction" and changed["corrects"] == first["memory-bank/activeContext.md"]
    assert [row["action"] for row in rows.values()].count("unchanged") == 2
    stored = notes_of(store.objects())
    assert len(stored) == 4  # the earlier note stays: a correction is a new note
    correction = stored[f"projects/demo/notes/{changed['id']}.md"]
    assert f"corrects: {first['memory-bank/activeContext.md']}" in correction and "now the README" in correction

    third = store.run("import", "--json").json  # the correction is now the file's note
    assert third["counts"]["unchanged"] == 3
    assert {row["source"]: row["id"] for row in third["files"]}["memory-bank/activeContext.md"] == changed["id"]
    (bank / "activeContext.md").write_text("# Active context\n\nWorking on import.\n")  # back to the first text
    fourth = {row["source"]: row for row in store.run("import", "--json").json["files"]}
    assert fourth["memory-bank/activeContext.md"]["corrects"] == changed["id"]  # corrects the newest, not the first


def test_a_file_with_a_secret_is_refused_alone(store):
    bank = write_cline_layout(store)
    (bank / "techContext.md").write_text(f"# Tech\n\nThe Hub is reached with\n\nHF_TOKEN={SECRET}\n")

    refused = store.run("import", "--json")
    assert refused.code == 5
    rows = {row["source"]: row for row in refused.json["files"]}
    tech = rows["memory-bank/techContext.md"]
    assert tech["action"] == "refused" and tech["id"] is None
    assert tech["findings"] == [{"line": 5, "rule": "hf-token", "label": "Hugging Face token"}]
    assert refused.json["counts"]["new"] == 3 and refused.json["counts"]["refused"] == 1
    assert SECRET not in refused.out + refused.err
    assert "Error: 1 file was not imported" in refused.err and "Next: remove the secret" in refused.err
    stored = notes_of(store.objects())
    assert len(stored) == 3 and not any("Tech" in text for text in stored.values())

    text = store.run("import")
    assert text.code == 5
    assert "refused     memory-bank/techContext.md: looks like it contains a credential (line 5: Hugging Face token " \
        "(rule hf-token))" in text.out  # fmt: skip


def test_dry_run_changes_nothing(store):
    write_cline_layout(store)
    write_codex_layout(store)
    before = store.objects()
    planned = store.run("import", "--dry-run", "--json")
    assert planned.code == 0, planned.err
    assert planned.json["dry_run"] is True
    assert {row["status"] for row in planned.json["files"]} == {"planned"}
    assert planned.json["counts"]["new"] == 8
    assert store.objects() == before
    assert store.run("pending", "--json").json == {"notes": [], "skills": [], "damaged": []}
    text = store.run("import", "--dry-run")
    assert "Dry run, nothing was saved. Importing into project demo would make: 8 new notes" in text.out
    assert store.objects() == before
    assert store.run("import", "--json").json["counts"]["new"] == 8  # and then it does


def test_a_second_machine_adds_nothing_for_the_same_files(store, machine_b):
    """What was imported is read from the notes, not from a record on the machine that imported them."""
    write_cline_layout(store)
    assert store.run("import").code == 0
    before = store.objects()
    bucket = json.loads(store.run("config", "show", "--json").out)["bucket"]
    machine_b.work = machine_b.root / "elsewhere" / "clone"  # another clone, another path
    machine_b.work.mkdir(parents=True)
    machine_b.setup(bucket)
    write_cline_layout(machine_b)
    again = machine_b.run("import", "--json")
    assert again.code == 0, again.err
    assert again.json["counts"]["unchanged"] == 3 and again.json["counts"]["new"] == 0
    assert store.objects() == before


# -- hostile input --------------------------------------------------------------------------------------------


def test_links_are_never_followed_out_of_the_folder(ready, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.md").write_text("# Private\n\nNot for the bucket.\n")
    folder = tmp_path / "old-notes"
    folder.mkdir()
    (folder / "kept.md").write_text("# Kept\n\nA note.\n")
    (folder / "link.md").symlink_to(outside / "private.md")
    (folder / "linked-folder").symlink_to(outside)
    os.link(outside / "private.md", folder / "hard.md")

    result = ready.run("import", str(folder), "--json")
    assert result.code == 5
    rows = {row["source"]: row for row in result.json["files"]}
    assert rows[str(folder / "kept.md")]["action"] == "new"
    for name in ("link.md", "linked-folder", "hard.md"):
        assert rows[str(folder / name)]["action"] == "refused", name
    assert "symbolic link" in rows[str(folder / "link.md")]["reason"]
    assert "hard links" in rows[str(folder / "hard.md")]["reason"]
    found = ready.run("search", "Not for the bucket", "--json").json
    assert found["results"] == []


def test_not_utf8_empty_control_characters_and_a_folder_of_its_own_tool(ready, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    (folder / "empty.md").write_text("\n\n")
    (folder / "evil\x1b[31m.md").write_text("# Title \x1b]0;owned\x07 here\n\nBody.\n")
    result = ready.run("import", str(folder), "--from", "codex", "--json")
    assert result.code == 5
    rows = {row["path"].rsplit("/", 1)[-1]: row for row in result.json["files"]}
    assert rows["latin1.md"]["action"] == "refused"
    assert rows["latin1.md"]["reason"] == "is not UTF-8 text (invalid byte at offset 5), so it was skipped"
    assert rows["empty.md"]["action"] == "empty"
    evil = rows["evil\\u001b[31m.md"]
    assert evil["action"] == "new" and evil["title"] == "Title \\u001b]0;owned\\u0007 here"
    text = ready.run("import", str(folder), "--from", "codex")
    assert "\x1b" not in text.out + text.err and "\x07" not in text.out + text.err
    note = ready.run("read", evil["id"]).out
    assert "tags:\n- imported\n- codex\n" in note


def test_progress_on_a_long_import_goes_to_stderr_only(ready, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(12):
        (folder / f"note-{number:02d}.md").write_text(f"# Note {number}\n\nText {number}.\n")
    text = ready.run("import", str(folder))
    assert text.code == 0, text.err
    assert "Importing 1/12: " in text.err and "Importing 12/12: " in text.err
    assert "Importing" not in text.out
    (folder / "note-00.md").write_text("# Note 0\n\nChanged first.\n")
    planned = ready.run("import", str(folder), "--dry-run")  # nothing is being saved: no progress
    assert planned.code == 0 and "Importing" not in planned.err
    (folder / "note-00.md").write_text("# Note 0\n\nChanged.\n")
    as_json = ready.run("import", str(folder), "--json")
    assert as_json.code == 0 and as_json.err == ""
    assert as_json.json["counts"]["correction"] == 1


def test_bad_input_changes_nothing_and_says_what_to_run(ready, machine, tmp_path):
    (tmp_path / "file.md").write_text("# One\n")
    cases = [
        (("import", str(tmp_path / "missing")), 2, "There is no folder", "agent-memory import DIR"),
        (("import", str(tmp_path / "file.md")), 2, "is a file", "agent-memory save --file"),
        (("import", "--from", "codex"), 1, "No Codex's memories to import", "agent-memory import"),
        (("import", "--from", "windsurf"), 2, "invalid choice", "agent-memory import --help"),
    ]
    for args, code, message, next_step in cases:
        result = ready.run(*args)
        assert result.code == code, (args, result.err)
        assert message in result.err and f"Next: {next_step}" in result.err, result.err
    big = tmp_path / "big"
    big.mkdir()
    (big / "huge.md").write_bytes(b"# Huge\n" + b"x" * (1024 * 1024))
    refused = ready.run("import", str(big), "--json")
    assert refused.code == 5 and "larger than 1048576 bytes" in refused.json["files"][0]["reason"]
    unmapped = ready.run("import", cwd=tmp_path)
    assert unmapped.code == 3 and "Next: agent-memory project map NAME" in unmapped.err
    assert ready.run("search", "", "--json").json["results"] == []


def test_too_many_files_imports_nothing(ready, tmp_path, monkeypatch):
    from agent_memory.memory import import_sources

    monkeypatch.setattr(import_sources, "FILES_MAX", 5)
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(6):
        (folder / f"{number}.md").write_text(f"# {number}\n")
    result = ready.run("import", str(folder))
    assert result.code == 2
    assert "more than 5 Markdown files" in result.err and "Next: agent-memory import DIR" in result.err
    assert ready.run("search", "", "--json").json["results"] == []


def test_imported_while_the_hub_fails_the_notes_wait_in_the_outbox(alice, hub):
    store = alice
    store.objects = lambda: {p: hub.read_file(BUCKET, p) for p in hub.list_paths(BUCKET) if p.startswith("projects/")}
    write_cline_layout(store)
    hub.fault("batch", "fail", status=500, times=0)
    waiting = store.run("import", "--json")
    assert waiting.code == 75, waiting.err
    assert waiting.json["counts"]["pending"] == 3 and {row["status"] for row in waiting.json["files"]} == {"pending"}
    assert store.objects() == {}
    assert len(store.run("pending", "--json").json["notes"]) == 3
    again = store.run("import", "--json")  # the pending notes count as imported: nothing is saved twice
    assert again.code == 0 and again.json["counts"]["unchanged"] == 3
    assert len(store.run("pending", "--json").json["notes"]) == 3
    hub.clear_faults()
    assert store.run("pending", "retry").code == 0
    assert len(store.objects()) == 3
    assert store.run("import", "--json").json["counts"]["unchanged"] == 3


def test_two_imports_at_once_save_each_file_once(ready, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for number in range(8):
        (folder / f"{number}.md").write_text(f"# Note {number}\n\nText {number}.\n")
    procs = [ready.popen("import", str(folder), "--json") for _ in range(2)]
    results = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    assert sorted(result["counts"]["new"] for result in results) == [0, 8]
    assert sorted(result["counts"]["unchanged"] for result in results) == [0, 8]
    found = ready.run("search", "", "--limit", "100", "--json").json["results"]
    assert len(found) == 8


def test_cline_memory_bank_found_from_a_subfolder(ready):
    write_cline_layout(ready)
    deep = ready.work / "src" / "pkg"
    deep.mkdir(parents=True)
    result = ready.run("import", "--from", "cline", "--json", cwd=deep)
    assert result.code == 0, result.err
    assert result.json["sources"] == [
        {"tool": "cline", "path": str(ready.work / "memory-bank"), "found": True, "files": 3}
    ]
    assert sorted(row["source"] for row in result.json["files"]) == [
        "memory-bank/activeContext.md",
        "memory-bank/progress.md",
        "memory-bank/projectbrief.md",
    ]
