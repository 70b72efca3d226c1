"""The runtimes' user-level file locations, and the managed block in their instruction files (in-process)."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from agent_memory.agents import RUNTIMES, claude, codex
from agent_memory.errors import AgentMemoryError
from agent_memory.setup import agent_files_write, instructions
from agent_memory.setup.instructions import BEGIN, END, render_block

HELPER = "/usr/local/bin/agent-memory"
OTHER_HELPER = "/opt/agent-memory/bin/agent-memory"


def upsert(path: Path, helper: str) -> bool:
    """Whether `instructions.upsert` changed the file."""
    return instructions.upsert(path, helper, runtime="codex")["changed"]


def remove(path: Path, *, created: bool = False) -> bool:
    """Whether `instructions.remove` changed the file."""
    return instructions.remove(path, runtime="codex", created=created)["changed"]


def block(helper: str = HELPER, newline: str = "\n") -> str:
    return render_block(helper).replace("\n", newline)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def text_of(path: Path) -> str:
    """The file's exact text, line endings untranslated."""
    return path.read_bytes().decode("utf-8")


def age(path: Path) -> int:
    """Move the file's mtime into the past, so that any later write shows; returns that mtime."""
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    return path.stat().st_mtime_ns


# -- where each runtime keeps its files ---------------------------------------------------------------------


def test_codex_locations_default_to_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert codex.home() == tmp_path / "h" / ".codex"
    assert codex.instructions_file() == tmp_path / "h" / ".codex" / "AGENTS.md"
    assert codex.skills_dir() == tmp_path / "h" / ".agents" / "skills"


def test_codex_home_follows_the_variable_on_each_call_but_not_the_skills(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert codex.home() == tmp_path / "codex-home"
    assert codex.instructions_file() == tmp_path / "codex-home" / "AGENTS.md"
    assert codex.skills_dir() == tmp_path / "h" / ".agents" / "skills"  # CODEX_HOME does not move it
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    assert codex.instructions_file() == tmp_path / "elsewhere" / "AGENTS.md"


def test_claude_locations_default_to_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert claude.config_dir() == tmp_path / "h" / ".claude"
    assert claude.instructions_file() == tmp_path / "h" / ".claude" / "CLAUDE.md"
    assert claude.skills_dir() == tmp_path / "h" / ".claude" / "skills"


def test_claude_config_dir_moves_everything_and_is_read_on_each_call(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    assert claude.config_dir() == tmp_path / "cc"
    assert claude.instructions_file() == tmp_path / "cc" / "CLAUDE.md"
    assert claude.skills_dir() == tmp_path / "cc" / "skills"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert claude.skills_dir() == tmp_path / "h" / ".claude" / "skills"


def test_override_warning_only_for_a_non_empty_override(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    override = tmp_path / "codex" / "AGENTS.override.md"
    assert codex.instructions_warning(BEGIN) is None  # no override file
    write(override, "")
    assert codex.instructions_warning(BEGIN) is None
    write(override, " \n\r\n\t\n")
    assert codex.instructions_warning(BEGIN) is None  # blank: Codex skips it and reads AGENTS.md
    write(override, "# my rules\n")
    warning = codex.instructions_warning(BEGIN)
    assert warning is not None
    assert str(override) in warning and "AGENTS.md" in warning and "ignores" in warning
    assert "move" in warning and "delete" in warning and "agent-memory block" in warning
    assert "\n" not in warning


def test_override_warning_follows_codex_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    write(tmp_path / "h" / ".codex" / "AGENTS.override.md", "rules")
    assert codex.instructions_warning(BEGIN) is not None
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "other"))
    assert codex.instructions_warning(BEGIN) is None


def test_no_table_of_runtimes_outside_the_agents_package():
    """One registry: outside `agents/`, no collection lists the runtimes (a tuple of names, a dict keyed by them).

    A feature of one runtime (Codex's sandbox) may name it; a list of all of them belongs to `agents`. The tools
    whose memories `import` reads are another list, which names Cline too (not a runtime we set up). The one copy:
    `idle`, the Stop and SessionEnd hooks' fast path, answers before anything heavier than `os` is imported
    (`agents` loads pathlib), so it spells the hook's command lines out; they are checked against the registry here.
    """
    import ast

    from agent_memory import agents, idle

    written = {
        agents.runtime(name).hook_command("HELPER", event) for name in RUNTIMES for event in ("stop", "session-end")
    }
    assert {" ".join(("HELPER", *command)) for command in idle.STOP} == written
    package = Path(instructions.__file__).resolve().parent.parent
    names = set(RUNTIMES)
    found = []
    for file in sorted(package.rglob("*.py")):
        if file.parent.name == "agents" or file.name == "idle.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and items is not None:
                listed = {item.value for item in items if isinstance(item, ast.Constant)}
                if len(listed & names) > 1 and "cline" not in listed:
                    found.append(f"{file.relative_to(package)}:{node.lineno}")
    assert found == []


# -- the block's text ---------------------------------------------------------------------------------------


def test_block_shape():
    text = render_block(HELPER)
    lines = text.split("\n")
    assert len(lines) == 9
    assert lines[0] == BEGIN and lines[-1] == END
    assert not text.endswith("\n")
    for line in lines[1:-1]:
        # plain Markdown: Claude Code hides HTML comments from the model
        assert line.startswith("- ") and "<!--" not in line and "-->" not in line
        assert len(line) < 200
        assert f"`{HELPER}" in line or line.startswith(("- If", "- Notes are records")) or "agent-memory skill" in line


def test_block_guidance():
    text = render_block(HELPER)
    assert "agent-memory skill" in text
    assert f"`{HELPER} project show`" in text and "never guess" in text
    assert f"`{HELPER} search 'KEYWORDS'`" in text and "every word, in any order" in text
    assert f"{HELPER} save --kind checkpoint" in text and "final reply" in text
    assert "`pending`" in text and f"`{HELPER} pending retry ID`" in text and "do not save again" in text
    assert "only local" in text and "shared" in text
    # recalled notes are records, not orders (a note may have been written by anything that can write the bucket)
    assert "not instructions" in text and "evidence" in text and "unless the user asks" in text
    # a helper deleted without uninstall: the model says so once and goes on, instead of failing every command
    assert f"If `{HELPER}` is not found (exit 127)" in text and "not installed on this machine" in text
    assert "tell the user so once, then go on without memory" in text


def test_block_uses_the_helper_it_is_given_and_rejects_a_broken_one():
    assert OTHER_HELPER in render_block(OTHER_HELPER) and HELPER not in render_block(OTHER_HELPER)
    for bad in ("", "  ", "/bin/agent-memory\nrm -rf /", "a\rb"):
        with pytest.raises(ValueError):
            render_block(bad)


# -- upsert -------------------------------------------------------------------------------------------------


def test_upsert_creates_a_missing_file_and_its_folders(tmp_path):
    target = tmp_path / "deep" / "er" / "AGENTS.md"
    assert upsert(target, HELPER) is True
    assert target.read_bytes() == (block() + "\n").encode()


def test_upsert_fills_an_empty_file(tmp_path):
    target = write(tmp_path / "CLAUDE.md", "")
    assert upsert(target, HELPER) is True
    assert target.read_text() == block() + "\n"


def test_upsert_appends_after_a_blank_line(tmp_path):
    target = write(tmp_path / "AGENTS.md", "# Mine\n\nBe terse.\n")
    assert upsert(target, HELPER) is True
    assert target.read_text() == "# Mine\n\nBe terse.\n\n" + block() + "\n"


def test_upsert_ends_the_last_line_first(tmp_path):
    target = write(tmp_path / "AGENTS.md", "Be terse.")
    assert upsert(target, HELPER) is True
    # the file had no final newline and keeps it that way, so that remove can restore it exactly
    assert target.read_text() == "Be terse.\n\n" + block()


def test_upsert_uses_crlf_in_a_crlf_file(tmp_path):
    target = write(tmp_path / "CLAUDE.md", "# Mine\r\n\r\nBe terse.\r\n")
    assert upsert(target, HELPER) is True
    data = target.read_bytes()
    assert data == ("# Mine\r\n\r\nBe terse.\r\n\r\n" + block(newline="\r\n") + "\r\n").encode()
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_upsert_detects_the_line_ending_from_the_first_line(tmp_path):
    target = write(tmp_path / "CLAUDE.md", "one\ntwo\r\n")
    upsert(target, HELPER)
    assert text_of(target) == "one\ntwo\r\n\n" + block() + "\n"


def test_unchanged_block_means_no_write(tmp_path):
    target = write(tmp_path / "AGENTS.md", "mine\n")
    assert upsert(target, HELPER) is True
    mtime, inode = age(target), target.stat().st_ino
    assert upsert(target, HELPER) is False
    assert target.stat().st_mtime_ns == mtime and target.stat().st_ino == inode


def test_upsert_replaces_the_block_in_place(tmp_path):
    before, after = "# Top\r\nkeep  me \t\n\n", "\n\n## After\nmore text\nno final newline"
    target = write(tmp_path / "AGENTS.md", before + BEGIN + "\nold guidance\n\n" + END + after)
    assert upsert(target, OTHER_HELPER) is True
    # the first line ends in CRLF, so the new block does too; every byte around it is kept
    assert text_of(target) == before + block(OTHER_HELPER, "\r\n") + after


def test_upsert_recognises_markers_with_surrounding_spaces(tmp_path):
    target = write(tmp_path / "AGENTS.md", "a\n  " + BEGIN + "  \nold\n" + END + " \nb\n")
    upsert(target, HELPER)
    assert target.read_text() == "a\n" + block() + "\nb\n"


def test_markers_inside_a_line_are_not_a_block(tmp_path):
    original = f"Quoting `{BEGIN}` and `{END}` in prose is fine.\n"
    target = write(tmp_path / "AGENTS.md", original)
    upsert(target, HELPER)
    assert target.read_text() == original + "\n" + block() + "\n"
    assert remove(target) is True
    assert target.read_text() == original


def test_duplicate_blocks_collapse_into_the_first(tmp_path):
    old = BEGIN + "\nold\n" + END
    target = write(tmp_path / "AGENTS.md", "top\n\n" + old + "\nmiddle\n\n" + old + "\n\nbottom\n\n" + old + "\n")
    assert upsert(target, HELPER) is True
    assert target.read_text() == "top\n\n" + block() + "\nmiddle\n\nbottom\n"
    assert upsert(target, HELPER) is False


def test_duplicate_current_blocks_are_still_collapsed(tmp_path):
    target = write(tmp_path / "AGENTS.md", "x\n\n" + block() + "\n\n" + block() + "\n")
    assert upsert(target, HELPER) is True
    assert target.read_text() == "x\n\n" + block() + "\n"


@pytest.mark.parametrize(
    "content",
    [
        f"a\n{BEGIN}\nguidance\n",
        f"a\n{END}\n{BEGIN}\nb\n",
        f"{END}\n",
        f"{BEGIN}\n{BEGIN}\n{END}\n",
        f"{BEGIN}\nx\n{END}\n{BEGIN}\n",
    ],
)
def test_malformed_markers_change_nothing(tmp_path, content):
    target = write(tmp_path / "codex" / "AGENTS.md", content)
    mtime = age(target)
    for action in (lambda: upsert(target, HELPER), lambda: remove(target)):
        with pytest.raises(AgentMemoryError) as raised:
            action()
        message = raised.value.message + " " + (raised.value.next_step or "")
        assert str(target) in message and "by hand" in message and "marker" in message
        assert target.read_text() == content and target.stat().st_mtime_ns == mtime
    assert [p.name for p in target.parent.iterdir()] == ["AGENTS.md"]


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    data = "caf\u00e9\n".encode("latin-1")
    target = write(tmp_path / "AGENTS.md", data)
    mtime = age(target)
    for action in (lambda: upsert(target, HELPER), lambda: remove(target)):
        with pytest.raises(AgentMemoryError) as raised:
            action()
        assert str(target) in raised.value.message and "UTF-8" in raised.value.message
        assert "by hand" in (raised.value.next_step or "")
        assert target.read_bytes() == data and target.stat().st_mtime_ns == mtime


def test_a_utf8_bom_and_non_ascii_text_survive(tmp_path):
    original = "\ufeff# R\u00e8gles \u2014 \U0001f600\n"
    target = write(tmp_path / "AGENTS.md", original)
    upsert(target, HELPER)
    assert remove(target) is True
    assert target.read_text(encoding="utf-8") == original


def test_writes_are_atomic_and_keep_the_permission_bits(tmp_path, monkeypatch):
    target = write(tmp_path / "codex" / "AGENTS.md", "mine\n")
    target.chmod(0o640)
    inode = target.stat().st_ino
    calls = []
    real_write_atomic = agent_files_write.write_atomic

    def recording(path, data, *, mode=None):
        calls.append((path, mode))
        real_write_atomic(path, data, mode=mode)

    monkeypatch.setattr(agent_files_write, "write_atomic", recording)
    upsert(target, HELPER)
    (backup, backup_mode), written = calls
    assert written == (target, 0o640) and backup_mode == 0o600 and backup.read_text() == "mine\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # replaced, not rewritten in place
    remove(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["AGENTS.md"]  # no temporary file left behind


def test_a_symlinked_file_is_edited_through_the_link(tmp_path):
    real = write(tmp_path / "dotfiles" / "AGENTS.md", "mine\n")
    link = tmp_path / "codex" / "AGENTS.md"
    link.parent.mkdir()
    link.symlink_to(real)
    assert upsert(link, HELPER) is True
    assert link.is_symlink()
    assert real.read_text() == "mine\n\n" + block() + "\n"
    assert remove(link) is True
    assert link.is_symlink() and real.read_text() == "mine\n"


# -- remove -------------------------------------------------------------------------------------------------


def test_remove_is_a_no_op_without_a_file_or_a_block(tmp_path):
    missing = tmp_path / "AGENTS.md"
    assert remove(missing) is False
    assert not missing.exists()
    target = write(tmp_path / "CLAUDE.md", "just mine\n")
    mtime = age(target)
    assert remove(target) is False
    assert target.read_text() == "just mine\n" and target.stat().st_mtime_ns == mtime


def test_remove_leaves_an_empty_file_in_place(tmp_path):
    target = tmp_path / "AGENTS.md"
    upsert(target, HELPER)
    assert remove(target) is True
    assert target.exists() and target.read_bytes() == b""
    assert remove(target) is False


def test_remove_takes_only_the_block_and_its_separator(tmp_path):
    target = write(tmp_path / "AGENTS.md", "top\n\n" + block() + "\n\nbottom\n")
    assert remove(target) is True
    assert target.read_text() == "top\n\nbottom\n"
    target = write(tmp_path / "CLAUDE.md", "top\n" + BEGIN + "\nedited by hand\n" + END + "\nbottom")
    assert remove(target) is True
    assert target.read_text() == "top\nbottom"


def test_remove_removes_every_copy(tmp_path):
    target = write(tmp_path / "AGENTS.md", "a\n\n" + block() + "\n\n" + block(OTHER_HELPER) + "\n")
    assert remove(target) is True
    assert target.read_text() == "a\n"


# -- properties over many generated contents ----------------------------------------------------------------

# pieces that stress line endings, blank lines, whitespace, non-ASCII text and quoted markers
_PIECES = (
    "a",
    "Be terse.",
    "# Heading",
    " ",
    "\t",
    "\n",
    "\n",
    "\r\n",
    "\r\n",
    "\r",
    "\n\n",
    "\u00e9t\u00e9 \u2014 \U0001f600",
    "\ufeff",
    "<!-- a comment -->",
    f"`{BEGIN}`",
    f"see {END} here",
    "agent-memory",
)


def _contents(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["", "\n", "\r\n", "\r", "x", "x\n", "x\r\n", "x\r", "x\n\n", "\n\nx", "x\r\ny", "x\ny\r\n"]
    # a user's file that ends with one or more blank lines, or with whitespace: upsert's separator comes after them
    fixed += ["x\n\n\n", "x\r\n\r\n", "x\n \n", "x\n\t\n\n", "x\n\n ", "x\r\n\r\n\r\n", "# Rules\n\n- a\n\n"]
    return fixed + ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def test_upsert_then_remove_gives_back_the_original(tmp_path):
    for number, original in enumerate(_contents(800, seed=20261130)):
        target = write(tmp_path / f"case{number}" / "AGENTS.md", original)
        assert upsert(target, HELPER) is True, repr(original)
        text = text_of(target)
        assert text.count(BEGIN) == original.count(BEGIN) + 1 and text.count(END) == original.count(END) + 1
        assert text.startswith(original), repr(original)  # appending never touches the user's bytes
        assert upsert(target, HELPER) is False, repr(original)  # idempotent
        assert upsert(target, OTHER_HELPER) is True and upsert(target, HELPER) is True
        assert remove(target) is True, repr(original)
        assert target.read_bytes() == original.encode("utf-8"), repr(original)
        assert remove(target) is False


def test_upsert_keeps_everything_around_an_existing_block(tmp_path):
    rng = random.Random(7)
    contents = _contents(300, seed=11)
    for number in range(300):
        before = rng.choice(contents)
        if before and not before.endswith("\n"):
            before += rng.choice(("\n", "\r\n"))  # the begin marker starts a line
        after = rng.choice(("", "\n" + rng.choice(contents), "\r\n" + rng.choice(contents)))  # end marker ends a line
        old_body = rng.choice(("", "\nold line", "\n\nold\r\nlines\n"))
        original = before + BEGIN + old_body + "\n" + END + after
        target = write(tmp_path / f"case{number}" / "CLAUDE.md", original)
        upsert(target, HELPER)
        text = text_of(target)
        first = original.find("\n")
        newline = "\r\n" if first > 0 and original[first - 1] == "\r" else "\n"
        assert text == before + block(newline=newline) + after, repr(original)


def test_a_file_ending_with_blank_lines_round_trips(tmp_path):
    for number, original in enumerate(["rules\n\n", "rules\n\n\n", "rules\r\n\r\n", "rules\n  \n", "\n\n"]):
        target = write(tmp_path / f"case{number}" / "AGENTS.md", original)
        upsert(target, HELPER)
        assert remove(target) is True
        assert target.read_bytes() == original.encode(), repr(original)


# -- files that upsert created --------------------------------------------------------------------------------


def test_remove_deletes_a_created_file_left_empty(tmp_path):
    target = tmp_path / "AGENTS.md"
    upsert(target, HELPER)
    assert remove(target, created=True) is True
    assert not target.exists()
    assert remove(target, created=True) is False


def test_remove_keeps_a_created_file_that_the_user_filled_exactly_as_they_left_it(tmp_path):
    """Upsert added no separator to a file it created: every blank line around the block is the user's."""
    rng = random.Random(5)
    pieces = _contents(200, seed=23)
    for number in range(200):
        target = tmp_path / f"case{number}" / "CLAUDE.md"
        upsert(target, HELPER)
        created = text_of(target)
        above = rng.choice(pieces)
        if above and not above.endswith("\n"):
            above += "\n"  # the block's begin marker must stay a line of its own
        below = rng.choice(("", "\n", "\n\nmore rules\n", "tail without newline"))
        write(target, above + created + below)
        assert remove(target, created=True) is True
        if above + below:
            assert text_of(target) == above + below, repr((above, below))
        else:
            assert not target.exists()


def test_a_file_that_existed_empty_is_never_deleted(tmp_path):
    target = write(tmp_path / "AGENTS.md", "")
    upsert(target, HELPER)
    assert remove(target) is True
    assert target.exists() and target.read_bytes() == b""


def test_a_created_file_reached_through_a_link_is_emptied_never_deleted(tmp_path):
    real = tmp_path / "dotfiles" / "AGENTS.md"
    real.parent.mkdir()
    link = tmp_path / "AGENTS.md"
    os.symlink(real, link)  # a dangling link, as a dotfiles repository may leave before the file exists
    upsert(link, HELPER)
    assert real.is_file() and link.is_symlink()
    assert remove(link, created=True) is True
    # the file the link leads to is the user's dotfiles manager's: it stays, empty, and so does the link
    assert real.read_bytes() == b"" and link.is_symlink() and os.readlink(link) == str(real)


# -- markers inside code are the user's text ------------------------------------------------------------------

B, E = BEGIN, END


@pytest.mark.parametrize(
    "content, is_block",
    [
        (f"```\n{B}\nexample\n{E}\n```\n", False),
        (f"~~~ markdown\n{B}\n{E}\n~~~\n", False),
        (f"````\n```\n{B}\n{E}\n```\n````\n", False),  # a shorter fence inside does not close a longer one
        (f"```\n~~~\n{B}\n{E}\n```\n", False),  # nor does a fence of the other character
        (f"   ```\n{B}\n{E}\n   ```  \n", False),  # up to 3 spaces of indentation, blanks after the closing fence
        (f"```\n{B}\n```\n{E}\n", None),  # the begin marker is in code: the end marker alone is malformed
        (f"    ```\n{B}\n{E}\n    ```\n", True),  # indented 4: indented code, not a fence
        (f"\t```\n{B}\n{E}\n", True),  # a tab is 4 columns
        (f"``` `x`\n{B}\n{E}\n", True),  # a backtick in the info string: inline code, not a fence
        (f"~~~ `x`\n{B}\n{E}\n~~~\n", False),  # which a tilde fence allows
        (f"```\n```\n{B}\n{E}\n", True),  # closed before the markers
        (f"text\n\n    {B}\n    {E}\n", False),  # indented code
        (f"- item\n\n    {B}\n    {E}\n", False),  # a list's text: indented 4 or more is never a marker
        (f"\t{B}\n\t{E}\n", False),
        (f"  \t{B}\n{E}\n", None),  # spaces then a tab: 4 columns
        (f"   {B}\n   {E}\n", True),  # 3 spaces: still a marker line
        (f"```\r\n{B}\r\n{E}\r\n```\r\n", False),
    ],
)
def test_markers_count_only_outside_code(tmp_path, content, is_block):
    target = write(tmp_path / "codex" / "AGENTS.md", content)
    if is_block is None:
        with pytest.raises(AgentMemoryError, match="malformed"):
            upsert(target, HELPER)
        assert text_of(target) == content
        return
    assert upsert(target, HELPER) is True
    text = text_of(target)
    if is_block:  # replaced in place: one block
        assert text.count(BEGIN) == 1
    else:  # the user's text as it was, the block after it
        newline = "\r\n" if "\r\n" in content else "\n"
        assert text == content + newline + block(newline=newline) + newline
    assert remove(target) is True
    if not is_block:
        assert text_of(target) == content


@pytest.mark.parametrize(
    "content, line, fence",
    [
        (f"# Rules\n\n```\n{B}\n{E}\n", 3, "```"),
        ("a\n~~~~~ never closed\n~~~\n", 2, "~~~~~"),
        ("```\n``` closing fences take no info string\n", 1, "```"),
    ],
)
def test_a_file_that_ends_inside_a_code_block_is_refused(tmp_path, content, line, fence):
    target = write(tmp_path / "codex" / "AGENTS.md", content)
    mtime = age(target)
    with pytest.raises(AgentMemoryError) as raised:
        upsert(target, HELPER)
    assert raised.value.message == (
        f"{target} ends inside a code block that is never closed (the {fence} on line {line}), so the "
        "agent-memory block cannot be added after it. Nothing was changed."
    )
    assert (
        raised.value.next_step
        == f"close that code block: add a line {fence} at the end of {target}, then run the command again"
    )
    with pytest.raises(AgentMemoryError):
        instructions.check(target)
    assert text_of(target) == content and target.stat().st_mtime_ns == mtime
    # a block of ours before the open code block is updated in place as usual
    write(target, f"{B}\nold\n{E}\n" + content)
    assert upsert(target, HELPER) is True and text_of(target) == block() + "\n" + content


_FENCED_PIECES = (
    "```",
    "```python",
    "````",
    "~~~",
    "~~~~ text",
    "   ```",
    "    ```",
    "\t~~~",
    "``` `x`",
    BEGIN,
    END,
    f"  {BEGIN}",
    f"    {END}",
    f"\t{BEGIN}",
    "",
    "code",
    "- item",
)


def _fenced_document(rng: random.Random) -> str:
    """User text whose markers all sit in code: fenced blocks (always closed) and indented lines."""
    lines = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(("text", "fenced", "indented"))
        if kind == "text":
            lines.append(rng.choice(("Be terse.", "", "- item", "# Heading", "`" + BEGIN + "`", "~~ x", "`` y")))
        elif kind == "fenced":
            char, length = rng.choice("`~"), rng.randint(3, 5)
            lines.append(" " * rng.randint(0, 3) + char * length + rng.choice(("", "md", " text")))
            inner = [rng.choice(_FENCED_PIECES) for _ in range(rng.randint(0, 5))]
            lines += [p for p in inner if not p.lstrip(" ").startswith(char * length)]  # nothing that would close it
            lines.append(" " * rng.randint(0, 3) + char * rng.randint(length, length + 2) + rng.choice(("", "  ")))
        else:
            lines += ["", rng.choice(("    ", "\t", "     ")) + rng.choice((BEGIN, END, "code"))]
    newline = rng.choice(("\n", "\r\n"))
    return newline.join(lines) + rng.choice((newline, ""))


def test_upsert_then_remove_gives_back_files_with_markers_in_code(tmp_path):
    rng = random.Random(20261202)
    for number in range(400):
        original = _fenced_document(rng)
        target = write(tmp_path / f"case{number}" / "AGENTS.md", original)
        assert upsert(target, HELPER) is True, repr(original)
        text = text_of(target)
        assert text.startswith(original), repr(original)  # appended: the user's bytes are untouched
        spans, open_fence = instructions._scan(text, target)
        assert len(spans) == 1 and spans[0][0] > len(original) - 1 and open_fence is None, repr(original)
        assert upsert(target, HELPER) is False, repr(original)
        assert remove(target) is True, repr(original)
        assert target.read_bytes() == original.encode(), repr(original)


def test_every_change_keeps_a_backup_of_the_previous_file(tmp_path):
    target = write(tmp_path / "claude" / "CLAUDE.md", "mine\r\n")
    added = instructions.upsert(target, HELPER, runtime="claude")
    backup = Path(added["backup"])
    assert added["changed"] is True and backup.read_bytes() == b"mine\r\n"
    assert backup.parent.name == "claude" and backup.parent.parent.name == "backups"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600 and stat.S_IMODE(backup.parent.stat().st_mode) == 0o700
    with_block = target.read_bytes()
    assert instructions.upsert(target, HELPER, runtime="claude") == {"changed": False, "backup": None}
    removed = instructions.remove(target, runtime="claude")
    assert removed["changed"] is True and Path(removed["backup"]).read_bytes() == with_block
    assert sorted(p.name for p in backup.parent.iterdir()) == sorted([backup.name, Path(removed["backup"]).name])
    assert instructions.remove(target, runtime="claude") == {"changed": False, "backup": None}
    assert instructions.upsert(tmp_path / "new" / "CLAUDE.md", HELPER, runtime="claude")["backup"] is None


def test_the_core_skill_says_what_to_do_when_the_helper_is_gone():
    from agent_memory.setup.bootstrap import core_skill_files

    text = core_skill_files()["SKILL.md"].decode()
    assert "not found either (`command not found`, exit 127)" in text
    assert "memory is not installed on this machine: tell the user so once" in text
    assert "run no other memory command in this session" in text
