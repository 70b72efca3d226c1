"""Names that come from outside and become paths: projects, note ids, skill names and revisions, buckets.

Standard library only: the Space's setup-command generator imports this module under Pyodide, so the page
refuses exactly what the helper refuses. Every pattern must match the whole string (`fullmatch`): with
`match` and `$`, a name ending in a newline would pass and reach a path.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .errors import ContentRefused, UsageError

PROJECT_MAX = 100
ID_MAX = 128
SKILL_NAME_MAX = 64
RESERVED_SKILL = "agent-memory"  # the core skill comes only from the installed package

HUB_SCHEME = "hf://buckets/"
FILE_SCHEME = "file://"

_SKILL = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# hub namespaces and names: letters, digits, '-', '_', '.'; no leading/trailing separator, no '--' or '..'
_HUB_PART = re.compile(r"(?!.*(?:--|\.\.))[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
# What makes a value show differently from what it is, or break a line where none is seen: controls (C0, DEL,
# C1, which holds U+0085), bidirectional formatting (U+061C, U+200E/F, U+202A-202E, U+2066-2069), and the line
# and paragraph separators. None of them is printable (`str.isprintable`), so printable text needs no search.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


# What project names and note ids are made of: ASCII letters and digits, `.`, `_` and `-`. They are checked as a set
# of characters, not with a pattern: every command checks one or two of them, and compiling a pattern costs more
# than the checks.
NAME_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def _plain_name(value: str, longest: int) -> bool:
    """Whether `value` is 1 to `longest` of NAME_CHARACTERS, the first a letter or a digit, with no `..` in it."""
    return (
        0 < len(value) <= longest and value[0] not in "._-" and NAME_CHARACTERS.issuperset(value) and ".." not in value
    )


def is_project(name: str) -> bool:
    """Whether `name` has the shape of a project name (as the configuration and the bucket hold them)."""
    return _plain_name(name, PROJECT_MAX)


def project(name: str) -> str:
    """`name` if it can be a project name given now: not a credential (else ContentRefused, see `given`: checked
    first, so that the refusal of a bad name never shows a token) and of the shape (else UsageError)."""
    fix = "agent-memory project map NAME [DIR] (with a name like my-project)"
    if not is_project(given(name, "project name", fix)):
        raise UsageError(
            f"Invalid project name {name!r}: use letters, digits, '.', '_' and '-' "
            f"(at most {PROJECT_MAX}, starting with a letter or digit).",
            next_step=fix,
        )
    return name


def given(value: str, what: str, next_step: str) -> str:
    """`value`, a name the user gives that will be written (to the configuration, the bucket, a claim), unless it
    looks like a credential: then ContentRefused, which names the rule and never the value.

    The guard is loaded here, where a name is given, and not when this module is: every command imports names
    (the configuration's checks use `is_project`), and the guard's rules cost a few milliseconds to set up.
    """
    from . import guard  # the Space's page loads it too (space/generator.py RUNTIME_FILES)

    found = guard.scan(value)
    if found:
        rules = ", ".join(f"{finding.label} (rule {finding.rule})" for finding in found)
        raise ContentRefused(
            f"The {what} looks like a credential ({rules}), so it was refused and nothing was changed; it is not "
            "shown here.",
            next_step=next_step,
        )
    return value


def is_id(value: str) -> bool:
    """Whether `value` has the shape of a note id or revision (safe as a file name)."""
    return _plain_name(value, ID_MAX)


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
    found = None if text.isprintable() else _UNSHOWABLE.search(text)
    return found.group() if found else None


def bucket(spec: str) -> str:
    """The canonical URI of a bucket given as `owner/name`, `hf://buckets/owner/name` or `file:///abs/path`.

    Surrounding whitespace (a pasted newline, say) is stripped, never stored. Syntax only: a folder store's
    path is made canonical (symlinks resolved) by `store.parse_bucket`. A bucket that looks like a credential (a
    token pasted in its place) is refused first, never shown (ContentRefused, see `given`).
    """
    spec = spec.strip()
    given(spec, "bucket", "agent-memory config set bucket OWNER/NAME (the bucket's name: a token is never needed)")
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
    parts = urlsplit(spec)
    path = unquote(parts.path)
    if (
        not spec.startswith(FILE_SCHEME)
        or parts.netloc not in ("", "localhost")
        or parts.query
        or parts.fragment
        or not path.startswith("/")
    ):
        raise MalformedBucket(
            f"Malformed folder store {spec!r}: use an absolute path, as in file:///home/me/agent-memory-store.",
            suggestion="file:///ABSOLUTE/PATH",
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


class MalformedBucket(UsageError):
    """A bucket that is not one; `suggestion` is what to give instead, and the command that fixes it uses it
    (`config set bucket`, or bootstrap's own command line)."""

    def __init__(self, message: str, suggestion: str) -> None:
        super().__init__(message, next_step=f"agent-memory config set bucket {suggestion}")
        self.suggestion = suggestion


def _unshowable_bucket(spec: str, char: str, decoded: bool = False) -> MalformedBucket:
    where = "once its percent-escapes are decoded, it holds" if decoded else "it holds"
    return MalformedBucket(
        f"Malformed bucket {spec!r}: {where} the invisible or line-breaking character U+{ord(char):04X}, which "
        "would not show as itself in a command or a path; type it without that character.",
        suggestion="file:///ABSOLUTE/PATH" if spec.startswith("file:") else "OWNER/NAME",
    )


def _malformed_bucket(spec: str) -> MalformedBucket:
    expected = "expected owner/name, hf://buckets/owner/name or file:///absolute/path"
    if spec.startswith(("/", "~", "./", "../")):  # a folder, given as a path: say how a folder store is written
        home = spec[2:] if spec.startswith("~/") else None
        if spec.startswith("/") and _PLAIN_PATH.fullmatch(spec):
            suggestion = FILE_SCHEME + spec
        elif home is not None and _PLAIN_PATH.fullmatch("/" + home):
            suggestion = f'"file://$HOME/{home}"'  # the shell gives the absolute path
        else:
            suggestion = "file:///ABSOLUTE/PATH"
        return MalformedBucket(
            f"Malformed bucket {spec!r}: a folder store is given as a file:// URI of its absolute path.",
            suggestion=suggestion,
        )
    return MalformedBucket(f"Malformed bucket {spec!r}: {expected}.", suggestion="OWNER/NAME")


_PLAIN_PATH = re.compile(r"(?:/[A-Za-z0-9._+-]+)+/?")  # a path that reads the same in every shell, unquoted


def hub_id(uri: str) -> str | None:
    """`owner/name` for a hub bucket URI, None for a folder store."""
    return uri[len(HUB_SCHEME) :] if uri.startswith(HUB_SCHEME) else None


def folder_path(uri: str) -> Path | None:
    """The folder of a `file://` store URI, None for a hub bucket."""
    return Path(uri[len(FILE_SCHEME) :]) if uri.startswith(FILE_SCHEME) else None
