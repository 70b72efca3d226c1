"""The user's consent for agent-memory inside Codex's `workspace-write` sandbox.

That sandbox lets the model's commands write only in the working folder and the temporary folders, and open no
socket (X7), so a save can neither keep its pending copy nor upload. Codex's own settings lift exactly that:
`sandbox_workspace_write.writable_roots` (folders that become writable) and `network_access`. With the user's
consent we add both to `$CODEX_HOME/config.toml`, for exactly the folders the helper and its libraries write:
its state and cache folders, and the Hugging Face and hf_xet caches.

The settings sit in a marked block at the top of the file, as dotted keys: at the top they belong to the root
table whatever tables follow, and the block comes out again byte for byte. A marker is only a comment line of its
own at the top level: the same text inside a multi-line string or array is the user's. A config.toml that does not
parse, or that sets `sandbox_workspace_write` itself, is left alone: we say what to add instead.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .. import paths
from ..agents import codex
from ..errors import AgentMemoryError
from ..fsutil import make_dirs, write_atomic
from . import agent_files

BEGIN = "# agent-memory:begin codex-sandbox"
END = "# agent-memory:end codex-sandbox"
KEY = "sandbox_workspace_write"
BOM = "\ufeff"  # Codex starts with a UTF-8 BOM in config.toml; it stays first, byte for byte


def hooks_turned_off() -> str | None:
    """The setting of config.toml that keeps Codex from running any hook (`[features] hooks = false`, or its
    older name `codex_hooks`), as the user would search for it; None when hooks run (or the file is unreadable,
    which `status` reports on its own)."""
    path = codex.config_file()
    try:
        features = _parse(_split_bom(agent_files.read_text(path) or "")[1], path).get("features", {})
    except AgentMemoryError:
        return None
    for key in ("hooks", "codex_hooks"):
        if isinstance(features, dict) and features.get(key) is False:
            return f"[features] {key} = false in {path}"
    return None


def _split_bom(text: str) -> tuple[str, str]:
    """(the BOM or "", the rest): the block goes after a BOM, never before it."""
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def writable_roots() -> list[Path]:
    """The folders agent-memory writes when it saves: its state and cache, the Hugging Face and hf_xet caches."""
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    hf_home = Path(os.environ.get("HF_HOME") or cache_home / "huggingface").expanduser()
    xet = Path(os.environ.get("HF_XET_CACHE") or hf_home / "xet").expanduser()
    found: list[Path] = []
    for root in (paths.state_dir(), paths.cache_dir(), hf_home, xet):
        root = root.absolute()
        if not any(root == other or other in root.parents for other in found):
            found = [other for other in found if root not in other.parents] + [root]
    return found


def render_block(roots: list[Path]) -> str:
    """The marked block, ending with a newline."""
    listed = ", ".join(json.dumps(str(root)) for root in roots)  # a JSON string is a valid TOML basic string
    return (
        f"{BEGIN}\n"
        "# Lets agent-memory save from Codex's workspace-write sandbox: these folders become writable, and commands\n"
        "# may use the network. Added with your consent; `agent-memory codex-sandbox remove` takes it out again.\n"
        f"{KEY}.writable_roots = [{listed}]\n"
        f"{KEY}.network_access = true\n"
        f"{END}\n"
    )


def check() -> None:
    """AgentMemoryError (nothing changed) if the consent block could not be added to Codex's config.toml."""
    path = codex.config_file()
    _addable(_split_bom(agent_files.read_text(path) or "")[1], path)


def _addable(text: str, path: Path) -> str:
    """`text` without our block, if the block can be added to it; AgentMemoryError if it cannot."""
    rest = _without_block(text, path)
    if KEY in _parse(rest, path):
        roots = ", ".join(json.dumps(str(root)) for root in writable_roots())
        raise AgentMemoryError(
            f"{path} already has its own [{KEY}] settings, so agent-memory will not edit them. Nothing was changed.",
            next_step=f"add to [{KEY}] in {path} yourself: writable_roots = [{roots}] and network_access = true",
        )
    return rest


def allow() -> dict[str, object]:
    """Add (or bring up to date) the consent block; the status afterwards, with `changed` and `backup`."""
    path = codex.config_file()
    roots = writable_roots()

    def with_block(text: str | None) -> str:
        bom, rest = _split_bom(text or "")
        updated = render_block(roots) + _addable(rest, path)
        _parse(updated, path)  # never write a file that would stop Codex from starting
        if text is not None and not rest:  # an empty file of the user's: `remove` must leave it, empty
            write_atomic(_was_empty(), b"")
        elif text is None:  # a file allow creates: `remove` takes it away again
            _was_empty().unlink(missing_ok=True)
        return bom + updated

    for root in roots:  # Codex can only bind folders that exist
        make_dirs(root, mode=0o700)  # parents too: mkdir(parents=True) would leave them as the umask says
    edited = agent_files.edit(path, "codex", with_block)
    return {**status(), **edited}


def remove() -> dict[str, object]:
    """Take the consent block out, and nothing else; the status afterwards, with `changed` and `backup`.

    A file that held only the block goes with it: no empty file is left behind."""
    path = codex.config_file()

    def without_block(text: str | None) -> str | None:
        if text is None:
            return None
        bom, body = _split_bom(text)
        rest = bom + _without_block(body, path)
        return None if rest == "" and rest != text and not _was_empty().exists() else rest

    edited = agent_files.edit(path, "codex", without_block)
    _was_empty().unlink(missing_ok=True)
    return {**status(), **edited}


def _was_empty() -> Path:
    """Kept while the consent stands in a config.toml that was empty before it (an empty file and no file are
    the same text, and only this tells `remove` which one to give back)."""
    return paths.state_dir() / "codex-config-was-empty"


def status() -> dict[str, object]:
    """`{"file", "state": "allowed"|"outdated"|"not allowed", "roots", "network"}` of the consent block."""
    path = codex.config_file()
    try:
        text = _split_bom(agent_files.read_text(path) or "")[1]
        block = _block(text, path)
    except AgentMemoryError:
        return {"file": str(path), "state": "unreadable", "roots": [], "network": False}
    if block is None:
        return {"file": str(path), "state": "not allowed", "roots": [], "network": False}
    granted = [Path(root) for root in _parse(block, path).get(KEY, {}).get("writable_roots", [])]
    state = "allowed" if granted == writable_roots() else "outdated"
    return {"file": str(path), "state": state, "roots": [str(root) for root in granted], "network": True}


def _without_block(text: str, path: Path) -> str:
    """`text` without our block (lines BEGIN to END)."""
    lines = agent_files.lines_of(text)
    marks = _marker_lines(text, path)
    if not marks:
        return text
    return "".join(lines[: marks[0]] + lines[marks[1] + 1 :])


def _block(text: str, path: Path) -> str | None:
    """Our block's text, markers included; None if there is none."""
    marks = _marker_lines(text, path)
    return "".join(agent_files.lines_of(text)[marks[0] : marks[1] + 1]) if marks else None


def _marker_lines(text: str, path: Path) -> tuple[int, int] | None:
    """The line numbers (from 0) of our BEGIN and END markers, None if there are none; refuses markers that do not
    pair up, or a block that holds settings of the user's (taking it out would take theirs too)."""
    lines = agent_files.lines_of(text)
    eligible = [i for i in _top_level_lines(text) if i < len(lines)]
    blocks = agent_files.marked_blocks(lines, eligible, BEGIN, END, lambda why: _malformed(path, why))
    if not blocks:
        return None
    if len(blocks) > 1:
        raise _malformed(path, "it is there twice")
    marks = blocks[0]
    try:
        inside = _parse("".join(lines[marks[0] : marks[1] + 1]), path)
    except AgentMemoryError:
        inside = None
    if inside is None or set(inside) - {KEY}:
        raise _malformed(path, "it holds more than agent-memory's settings")
    return marks[0], marks[1]


def _malformed(path: Path, why: str) -> AgentMemoryError:
    return AgentMemoryError(
        f"The agent-memory block in {path} is malformed ({why}). Nothing was changed.",
        next_step=f"remove the lines from '{BEGIN}' to '{END}' in {path} by hand, then run the command again",
    )


# Where a string or a bracket starts, a comment starts, or a line ends: all that decides what a line is in
_SIGNIFICANT = re.compile(r"""[\n#"'\[\]{}]""")
_BASIC_STRING_END = re.compile(r'(?:[^"\\\n]|\\.)*"?')


def _top_level_lines(text: str) -> list[int]:
    """The numbers (from 0) of the lines that start outside any string, array or inline table: the only lines
    where a comment is a comment of the file's top level, as TOML reads it.

    One pass, no recursion: strings are skipped whole (a multi-line one across lines), brackets after a key are
    counted, and a `[table]` header (a bracket that starts a line at the top level) is not.
    """
    found, line, depth, header = [0], 0, 0, False
    pos = 0
    while match := _SIGNIFICANT.search(text, pos):
        char, at = match.group(), match.start()
        pos = at + 1
        if char == "\n":
            line += 1
            header = False
            if depth == 0:
                found.append(line)
        elif char == "#":
            pos = _line_end(text, at)  # the newline itself is seen next
        elif text.startswith(char * 3, at):
            pos = _multiline_string_end(text, at + 3, char)
            line += text.count("\n", at, pos)
        elif char == '"':
            pos = _BASIC_STRING_END.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string
        elif char == "'":
            end = _line_end(text, at + 1, stop="'")
            pos = end + 1 if text.startswith("'", end) else end  # an unclosed one ends with its line
        elif char == "[" and depth == 0 and not text[text.rfind("\n", 0, at) + 1 : at].strip():
            header = True
        elif not header:
            depth = depth + 1 if char in "[{" else max(depth - 1, 0)
    return found


def _line_end(text: str, pos: int, stop: str = "") -> int:
    """The position of the next newline (or of `stop`, whichever comes first) from `pos`, else the text's end."""
    ends = [i for i in (text.find("\n", pos), text.find(stop, pos) if stop else -1) if i != -1]
    return min(ends) if ends else len(text)


def _multiline_string_end(text: str, pos: int, quote: str) -> int:
    """Where the multi-line string whose content starts at `pos` ends, its closing quotes included (a basic one,
    `\"\"\"`, has escapes; up to two more quotes right before the closing three belong to its content)."""
    delimiter = quote * 3
    while (close := text.find(delimiter, pos)) != -1:
        backslashes = 0
        while quote == '"' and text[close - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2:
            pos = close + 1
            continue
        end = close + 3
        while end < len(text) and end - close < 5 and text[end] == quote:
            end += 1
        return end
    return len(text)


def _parse(text: str, path: Path) -> dict[str, object]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentMemoryError(
            f"{path} is not valid TOML ({exc}); nothing was changed.",
            next_step=f"fix {path} (Codex cannot start with it either), then run the command again",
        ) from exc
