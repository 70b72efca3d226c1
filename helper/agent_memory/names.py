"""Names that come from outside and become paths: projects, note ids, skill names and revisions, buckets.

Standard library only: the Space's setup-command generator imports this module under Pyodide, so the page
refuses exactly what the helper refuses. Every pattern must match the whole string (`fullmatch`): with
`match` and `$`, a name ending in a newline would pass and reach a path.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import ContentRefused, UsageError

PROJECT_MAX = 100
ID_MAX = 128
SKILL_NAME_MAX = 64
RESERVED_SKILL = "agent-memory"  # the core skill comes only from the installed package

HUB_SCHEME = "hf://buckets/"
FILE_SCHEME = "file://"

_PROJECT = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{PROJECT_MAX - 1}}}")
_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{ID_MAX - 1}}}")
_SKILL = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# hub namespaces and names: letters, digits, '-', '_', '.'; no leading/trailing separator, no '--' or '..'
_HUB_PART = re.compile(r"(?!.*(?:--|\.\.))[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
# What makes a value show differently from what it is, or break a line where none is seen: controls (C0, DEL,
# C1, which holds U+0085), bidirectional formatting (U+061C, U+200E/F, U+202A-202E, U+2066-2069), and the line
# and paragraph separators.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def project(name: str) -> str:
    """`name` if it is a valid project name, else UsageError."""
    if not _PROJECT.fullmatch(name) or ".." in name:
        raise UsageError(
            f"Invalid project name {name!r}: use letters, digits, '.', '_' and '-' "
            f"(at most {PROJECT_MAX}, starting with a letter or digit).",
            next_step="agent-memory project map NAME [DIR] (with a name like my-project)",
        )
    return name


def is_id(value: str) -> bool:
    """Whether `value` has the shape of a note id or revision (safe as a file name)."""
    return bool(_ID.fullmatch(value)) and ".." not in value


def note_id(value: str) -> str:
    """`value` if it is a valid note id, else UsageError."""
    if not is_id(value):
        raise UsageError(f"Invalid note id {value!r}.", next_step="agent-memory search QUERY (lists note ids)")
    return value


def revision(value: str) -> str:
    """`value` if it has the shape of a skill revision, else UsageError."""
    if not is_id(value):
        raise UsageError(f"Invalid revision {value!r}.", next_step="agent-memory search --skills (lists revisions)")
    return value


def skill(name: str, *, allow_reserved: bool = False) -> str:
    """`name` if it is a valid skill name (else UsageError) and not the reserved core skill's (else ContentRefused)."""
    if not (len(name) <= SKILL_NAME_MAX and _SKILL.fullmatch(name)):
        raise UsageError(
            f"Invalid skill name {name!r}: use lowercase letters, digits and single hyphens, at most {SKILL_NAME_MAX}.",
            next_step="agent-memory search --skills (lists the names of published skills)",
        )
    if name == RESERVED_SKILL and not allow_reserved:
        raise ContentRefused(
            f"The skill name {RESERVED_SKILL!r} is reserved for the core memory skill, which only comes from the "
            "installed agent-memory package.",
            next_step="rename the skill (the `name` in its SKILL.md)",
        )
    return name


def skill_spec(spec: str) -> tuple[str, str]:
    """`(name, revision)` from `NAME@REVISION`, else UsageError or ContentRefused."""
    name, sep, rev = spec.partition("@")
    if not sep:
        raise UsageError(f"{spec!r}: expected NAME@REVISION.", next_step="agent-memory search --skills (lists both)")
    return skill(name), revision(rev)


def unshowable(text: str) -> str | None:
    """The first character of `text` that cannot be shown as itself (a control, bidi or separator), or None."""
    found = _UNSHOWABLE.search(text)
    return found.group() if found else None


def bucket(spec: str) -> str:
    """The canonical URI of a bucket given as `owner/name`, `hf://buckets/owner/name` or `file:///abs/path`.

    Surrounding whitespace (a pasted newline, say) is stripped, never stored. Syntax only: a folder store's
    path is made canonical (symlinks resolved) by `store.parse_bucket`.
    """
    spec = spec.strip()
    if (char := unshowable(spec)) is not None:  # before urlsplit, which drops tabs and newlines
        raise _unshowable_bucket(spec, char)
    if spec.startswith("file:"):
        return _file_uri(spec)
    ident = (spec[len(HUB_SCHEME) :] if spec.startswith(HUB_SCHEME) else spec).rstrip("/")
    parts = ident.split("/")
    if "://" in ident or len(parts) != 2 or not all(_HUB_PART.fullmatch(part) for part in parts):
        raise _malformed_bucket(spec)
    return HUB_SCHEME + ident


def _file_uri(spec: str) -> str:
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(spec)
    path = unquote(parts.path)
    if (
        not spec.startswith(FILE_SCHEME)
        or parts.netloc not in ("", "localhost")
        or parts.query
        or parts.fragment
        or not path.startswith("/")
    ):
        raise UsageError(
            f"Malformed folder store {spec!r}: use an absolute path, as in file:///home/me/agent-memory-store.",
            next_step="agent-memory config set bucket file:///ABSOLUTE/PATH",
        )
    if (char := unshowable(path)) is not None:  # %0A, %E2%80%AE and the like, once decoded
        raise _unshowable_bucket(spec, char, decoded=True)
    return FILE_SCHEME + (path.rstrip("/") or "/")


def is_bucket_uri(value: str) -> bool:
    """Whether `value` is a bucket URI in the canonical form that `bucket()` gives (the form configurations hold)."""
    if value.startswith(FILE_SCHEME):
        path = value[len(FILE_SCHEME) :]
        return path.startswith("/") and (path == "/" or not path.endswith("/")) and unshowable(path) is None
    parts = value[len(HUB_SCHEME) :].split("/") if value.startswith(HUB_SCHEME) else []
    return len(parts) == 2 and all(_HUB_PART.fullmatch(part) for part in parts)


def _unshowable_bucket(spec: str, char: str, decoded: bool = False) -> UsageError:
    where = "once its percent-escapes are decoded, it holds" if decoded else "it holds"
    return UsageError(
        f"Malformed bucket {spec!r}: {where} the invisible or line-breaking character U+{ord(char):04X}, which "
        "would not show as itself in a command or a path.",
        next_step="agent-memory config set bucket file:///ABSOLUTE/PATH (typed without it)"
        if spec.startswith("file:")
        else "agent-memory config set bucket OWNER/NAME",
    )


def _malformed_bucket(spec: str) -> UsageError:
    return UsageError(
        f"Malformed bucket {spec!r}: expected owner/name, hf://buckets/owner/name or file:///absolute/path.",
        next_step="agent-memory config set bucket OWNER/NAME",
    )


def hub_id(uri: str) -> str | None:
    """`owner/name` for a hub bucket URI, None for a folder store."""
    return uri[len(HUB_SCHEME) :] if uri.startswith(HUB_SCHEME) else None


def folder_path(uri: str) -> Path | None:
    """The folder of a `file://` store URI, None for a hub bucket."""
    return Path(uri[len(FILE_SCHEME) :]) if uri.startswith(FILE_SCHEME) else None
