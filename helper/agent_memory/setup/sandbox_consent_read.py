"""The reading half of the sandbox consent pair (`sandbox_consent_write` edits; `status` loads only this half).

The user's consent for agent-memory inside Codex's `workspace-write` sandbox.

That sandbox lets the model's commands write only in the working folder and the temporary folders, and open no
socket (X7), so a save can neither keep its pending copy nor upload. Codex's own settings lift exactly that:
`sandbox_workspace_write.writable_roots` (folders that become writable) and `network_access`. With the user's
consent we add both to `$CODEX_HOME/config.toml`, for exactly the folders the helper and its libraries write with
the configured bucket: its state and cache folders, and the Hugging Face and hf_xet caches for a Hugging Face bucket,
or the store's own folder for a `file://` one. `status` compares the consent with what the configuration needs now:
a bucket switched to a folder store, or a state folder moved, leaves it "incomplete" until `allow` runs again.

The settings sit in a marked block at the top of the file, as dotted keys: at the top they belong to the root
table whatever tables follow, and the block comes out again byte for byte. A marker is only a comment line of its
own at the top level: the same text inside a multi-line string or array is the user's. A config.toml that does not
parse, or that sets `sandbox_workspace_write` itself, is left alone: we say what to add instead.

Here the consent is read and told; `sandbox_consent_write` gives and takes it back (only those commands load the
editing).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from .. import commands, paths
from ..agents import codex
from ..config import settings
from ..errors import AgentMemoryError
from ..names import folder_path
from . import agent_files_read

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Consent

BEGIN = "# agent-memory:begin codex-sandbox"
END = "# agent-memory:end codex-sandbox"
KEY = "sandbox_workspace_write"
BOM = "\ufeff"  # Codex starts with a UTF-8 BOM in config.toml; it stays first, byte for byte
ALLOW = commands.line("codex-sandbox", "allow")


def hooks_turned_off() -> str | None:
    """The setting of config.toml that keeps Codex from running any hook (`[features] hooks = false`, or its
    older name `codex_hooks`), as the user would search for it; None when hooks run (or the file is unreadable,
    which `status` reports on its own)."""
    path = codex.config_file()
    try:
        text = split_bom(agent_files_read.read_text(path) or "")[1]
        if "hooks" not in text and "\\u" not in text and "\\U" not in text:  # only an escape could spell it otherwise
            return None  # neither key is in it: not parsed (tomllib, with typing, costs status most of its start-up)
        features = parse(text, path).get("features", {})
    except AgentMemoryError:
        return None
    for key in ("hooks", "codex_hooks"):
        if isinstance(features, dict) and features.get(key) is False:
            return f"[features] {key} = false in {path}"
    return None


def split_bom(text: str) -> tuple[str, str]:
    """(the BOM or "", the rest): the block goes after a BOM, never before it."""
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def writable_roots(bucket: str | None = None) -> list[Path]:
    """The folders agent-memory writes when it saves to `bucket` (default: the configured one): its state and
    cache, then the Hugging Face and hf_xet caches for a Hugging Face bucket, or the folder of a `file://` store."""
    if bucket is None:
        bucket = configured_bucket()
    folder = folder_path(bucket) if bucket else None
    if folder is not None:
        wanted = [folder.expanduser()]  # a folder store never loads huggingface_hub: its caches stay closed
    else:  # a Hugging Face bucket, or none yet (bootstrap's default is one)
        cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        hf_home = Path(os.environ.get("HF_HOME") or cache_home / "huggingface").expanduser()
        wanted = [hf_home, Path(os.environ.get("HF_XET_CACHE") or hf_home / "xet").expanduser()]
    found: list[Path] = []
    for root in (paths.state_dir(), paths.cache_dir(), *wanted):
        root = root.absolute()
        if not any(root == other or other in root.parents for other in found):
            found = [other for other in found if root not in other.parents] + [root]
    return found


def configured_bucket() -> str | None:
    """The configured bucket, None when there is none (or the configuration cannot be used: `status` says so)."""
    try:
        value = settings.load().get("bucket")
    except AgentMemoryError:
        return None
    return value if isinstance(value, str) else None


def render_block(roots: list[Path]) -> str:
    """The marked block, ending with a newline."""
    listed = ", ".join(json.dumps(str(root)) for root in roots)  # a JSON string is a valid TOML basic string
    return (
        f"{BEGIN}\n"
        "# Lets agent-memory save from Codex's workspace-write sandbox: these folders become writable, and commands\n"
        "# may use the network. Added with your consent; `agent-memory codex-sandbox remove` takes it out again.\n"
        "# If agent-memory is no longer installed, delete these lines, from the begin line to the end line.\n"
        f"{KEY}.writable_roots = [{listed}]\n"
        f"{KEY}.network_access = true\n"
        f"{END}\n"
    )


def status(bucket: str | None = None) -> Consent:
    """`{"file", "state", "roots", "network", "missing", "next"}` of the consent block, compared with what saving to
    `bucket` (default: the configured one) writes. `state`: "allowed" (exactly those folders), "incomplete" (some
    are not writable: `missing`), "outdated" (all are, and others no longer needed too), "not allowed" or
    "unreadable"; `next` is the command that fixes it (None when allowed)."""
    path = codex.config_file()
    try:
        text = split_bom(agent_files_read.read_text(path) or "")[1]
    except AgentMemoryError as exc:
        return _state(path, "unreadable", [], False, [], exc.next_step)
    needed = writable_roots(bucket) if BEGIN in text else None  # no block without its first marker
    ours = render_block(needed) if needed is not None else None  # what `allow` writes for them
    try:
        block = _block(text, path, ours)
    except AgentMemoryError as exc:
        return _state(path, "unreadable", [], False, [], exc.next_step)
    if block is None or needed is None:
        return _state(path, "not allowed", [], False, [], ALLOW)
    if block == ours:  # exactly those folders: allowed, told without parsing TOML (tomllib, with typing, is costly)
        return _state(path, "allowed", needed, True, [], None)
    settings = parse(block, path).get(KEY, {})
    writable = settings.get("writable_roots", [])  # type: ignore[attr-defined]  # unchecked: not a table raises
    granted = [Path(root) for root in writable if isinstance(root, str)]
    missing = [root for root in needed if not any(root == given or given in root.parents for given in granted)]
    state = "allowed" if granted == needed else "incomplete" if missing else "outdated"
    return _state(path, state, granted, True, missing, None if state == "allowed" else ALLOW)


def _state(
    path: Path, state: str, roots: list[Path], network: bool, missing: list[Path], next_step: str | None
) -> Consent:
    return {
        "file": str(path),
        "state": state,
        "roots": [str(root) for root in roots],
        "network": network,
        "missing": [str(root) for root in missing],
        "next": next_step,
    }


def in_words(consent: Consent | None) -> list[str]:
    """The consent (`status()`, or what `allow` returned) in words: bootstrap, status and codex-sandbox tell it
    alike."""
    if not consent:
        return []
    if consent["state"] == "allowed":
        unchanged = " (unchanged)" if consent.get("changed") is False else ""
        return [
            f"codex sandbox: allowed in {consent['file']}{unchanged}: network access, and writes to "
            + ", ".join(consent["roots"])
        ]
    if consent["state"] == "incomplete":
        line = f"codex sandbox: incomplete in {consent['file']}: not writable: {', '.join(consent['missing'])}"
    else:
        line = f"codex sandbox: {consent['state']} ({consent['file']})"
    return [line] + ([f"  Next: {consent['next']}"] if consent.get("next") else [])


def warning(bucket: str | None = None) -> str | None:
    """What fails in Codex's sandbox with the consent as it is, and the user's command that fixes it; None when the
    consent covers what saving to `bucket` writes."""
    found = status(bucket)
    if found["state"] == "allowed":
        return None
    if found["state"] == "incomplete":
        left_out = ", ".join(found["missing"])
        return (
            f"Your consent for Codex's sandbox leaves out {left_out}, which agent-memory now writes, "
            f"so saves from a sandboxed Codex session fail. To bring it up to date, run this yourself: {ALLOW}"
        )
    if found["state"] == "outdated":
        return (
            "Your consent for Codex's sandbox also opens folders agent-memory no longer writes. To bring it up to "
            f"date, run this yourself: {ALLOW}"
        )
    return (
        "In Codex's usual workspace-write sandbox, the model's commands may write only in the project and temporary "
        "folders, with no network, so a save from a Codex session fails there (nothing is saved). To allow it, run "
        f"this yourself: {ALLOW} (or bootstrap again with --codex-sandbox)"
    )


def _block(text: str, path: Path, ours: str | None = None) -> str | None:
    """Our block's text, markers included; None if there is none (`ours`: see `marker_lines`)."""
    marks = marker_lines(text, path, ours)
    return "".join(agent_files_read.lines_of(text)[marks[0] : marks[1] + 1]) if marks else None


def marker_lines(text: str, path: Path, ours: str | None = None) -> tuple[int, int] | None:
    """The line numbers (from 0) of our BEGIN and END markers, None if there are none; refuses markers that do not
    pair up, or a block that holds settings of the user's (taking it out would take theirs too). A block that is
    exactly `ours` (a `render_block` text) holds only our settings: it is not parsed."""
    if BEGIN not in text and END not in text:
        return None  # no line can be a marker: the file is not scanned (most users' config.toml, or none at all)
    lines = agent_files_read.lines_of(text)
    eligible = [i for i in _top_level_lines(text) if i < len(lines)]
    blocks = agent_files_read.marked_blocks(lines, eligible, BEGIN, END, lambda why: _malformed(path, why))
    if not blocks:
        return None
    if len(blocks) > 1:
        raise _malformed(path, "it is there twice")
    marks = blocks[0]
    block = "".join(lines[marks[0] : marks[1] + 1])
    if block == ours:
        return marks
    try:
        inside = parse(block, path)
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


def parse(text: str, path: Path) -> dict[str, object]:
    """The settings of config.toml's `text`.

    `tomllib` is loaded here, where a config.toml is first parsed: with `typing` it costs `status` most of the
    interpreter's own start-up, and a machine without Codex's config.toml has nothing to parse."""
    if not text:
        return {}  # no file, or an empty one: no settings
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # installed on Python 3.10 only

    try:
        settings: dict[str, object] = tomllib.loads(text)
        return settings
    except tomllib.TOMLDecodeError as exc:
        raise AgentMemoryError(
            f"{path} is not valid TOML ({exc}); nothing was changed.",
            next_step=f"fix {path} (Codex cannot start with it either), then run the command again",
        ) from exc
