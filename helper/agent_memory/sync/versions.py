"""One version of one synced file, as the bucket keeps it: an immutable JSON object.

`sync/<runtime>/<scope>/<path key>/<version id>.json` holds the file's path in the runtime's folder, its text (or
none: a tombstone, the file was deleted), the versions it was based on (`bases`: one for an edit, several for a
merge or a resolved conflict, none for a first version), the machine and the time. Nothing is ever overwritten or
deleted: the current text of a file is the head of that chain (`history`), never the newest by a clock.

Everything read back from the bucket is anyone's: a version is accepted only if it is small, well formed, names a
safe relative path whose key matches its folder, and its text matches its hash; anything else is refused, with why.
"""

from __future__ import annotations

import json
import re
import unicodedata

from .. import names
from ..contents import sha256

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from .shape import VersionMeta

FORMAT = 1
PREFIX = "sync"

# the scope of Codex's memories that every machine shared before each pushed its own (`codex_delivery`): read by
# the move over (`codex_migration`) and for machines that still sync that way
CODEX_SCOPE = "user"
MAX_TEXT = 256 * 1024  # bytes of one file's text: memory files are a few kilobytes; Claude loads 25 KB of its index
MAX_OBJECT = MAX_TEXT * 7 + 8192  # a JSON string escapes a character to at most 6 bytes (plus the fields)
MAX_PATH = 240  # characters of a path inside the memory folder
MAX_DEPTH = 6  # folders a path may go down
MAX_BASES = 16
MAX_FIELD = 100  # characters of the machine name and the time
_KEY_LENGTH = 20
_OBJECT = re.compile(r"sync/(claude|codex)/([^/]+)/([0-9a-f]{20})/([^/]+)\.json")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


# Why a file is not synced, as a code that picks the fix told with it (`summary.refused_next`)
SECRET, SECRET_THERE, NOT_REGULAR, TOO_LARGE, OTHER = "secret", "secret-there", "not-regular", "too-large", "other"


class Refused(Exception):
    """A version from the bucket, or a file, that is not accepted: its reason in words, and as a code (`kind`)."""

    def __init__(self, why: str, kind: str = OTHER) -> None:
        super().__init__(why)
        self.kind = kind


class Version:
    """One accepted version: its id, path, bases, text (None: a tombstone), hash, machine and time."""

    __slots__ = ("id", "path", "bases", "text", "hash", "machine", "time")

    def __init__(
        self, id: str, path: str, bases: list[str], text: str | None, machine: str, time: str, hash: str | None = None
    ) -> None:
        self.id = id
        self.path = path
        self.bases = bases
        self.text = text
        self.hash = hash if hash is not None else (None if text is None else text_hash(text))
        self.machine = machine
        self.time = time

    @property
    def deleted(self) -> bool:
        """Whether this version is a tombstone."""
        return self.text is None

    def meta(self) -> VersionMeta:
        """Its fields without the text (what the local record of versions keeps)."""
        return {
            "id": self.id,
            "path": self.path,
            "bases": self.bases,
            "hash": self.hash,
            "machine": self.machine,
            "time": self.time,
        }


def text_hash(text: str) -> str:
    """The hash of a file's text (of its UTF-8 bytes)."""
    return sha256(text.encode("utf-8"))


def path_key(path: str) -> str:
    """The folder of a file's versions in the bucket: a hash of its path (paths can hold any character)."""
    return sha256(path.encode("utf-8"))[:_KEY_LENGTH]


def prefix(runtime: str, scope: str) -> str:
    """The folder of one runtime's synced files for one scope (a project for Claude Code, `user` for Codex)."""
    return f"{PREFIX}/{runtime}/{scope}"


def object_path(runtime: str, scope: str, version: Version) -> str:
    """Where a version is kept in the bucket."""
    return f"{prefix(runtime, scope)}/{path_key(version.path)}/{version.id}.json"


def encode(runtime: str, scope: str, version: Version) -> bytes:
    """The bytes of a version's object."""
    value = {"format": FORMAT, "runtime": runtime, "scope": scope, **version.meta(), "text": version.text}
    return (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def check_path(path: object) -> str:
    """`path` if it is a safe relative path inside a memory folder (`/`-separated, no `..`, no hidden or empty
    part, no control character, bounded); Refused otherwise."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH:
        raise Refused("its path is empty or too long")
    if _CONTROL.search(path) or "\\" in path or path != unicodedata.normalize("NFC", path):
        raise Refused("its path holds a control character, a backslash or unnormalised text")
    parts = path.split("/")
    if len(parts) > MAX_DEPTH + 1 or any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        raise Refused("its path leaves the folder, is absolute, hidden or too deep")
    if len(parts[-1].encode("utf-8")) > 200:
        raise Refused("its file name is too long")
    return path


def decode(object_name: str, data: bytes, runtime: str, scope: str) -> Version:
    """The version kept at `object_name`, checked whole (see the module's docstring); Refused otherwise."""
    match = _OBJECT.fullmatch(object_name)
    if not match or match.group(1) != runtime or match.group(2) != scope:
        raise Refused("it is not where a version of this folder is kept")
    if len(data) > MAX_OBJECT:
        raise Refused(f"it is larger than {MAX_OBJECT} bytes", TOO_LARGE)
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Refused("it is not JSON") from None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise Refused("it is not a version this helper knows")
    version_id, path, text = value.get("id"), check_path(value.get("path")), value.get("text")
    if version_id != match.group(4) or not isinstance(version_id, str) or not names.is_id(version_id):
        raise Refused("its id does not match its name")
    if path_key(path) != match.group(3):
        raise Refused("its path does not match its folder")
    if (value.get("runtime"), value.get("scope")) != (runtime, scope):
        raise Refused("it names another runtime or scope")
    bases = value.get("bases")
    if not isinstance(bases, list) or len(bases) > MAX_BASES:
        raise Refused("its bases are not a short list")
    if not all(isinstance(base, str) and names.is_id(base) and base != version_id for base in bases):
        raise Refused("a base is not a version id")
    if text is not None and (not isinstance(text, str) or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT):
        raise Refused(f"its text is not text of at most {MAX_TEXT} bytes")
    if text is not None and "\x00" in text:
        raise Refused("its text holds a NUL character")
    try:
        expected = None if text is None else text_hash(text)
    except UnicodeEncodeError:
        raise Refused("its text is not valid Unicode") from None
    if value.get("hash") != expected:
        raise Refused("its text does not match its hash")
    machine, time = value.get("machine"), value.get("time")
    if not (
        isinstance(machine, str) and len(machine) <= MAX_FIELD and isinstance(time, str) and len(time) <= MAX_FIELD
    ):
        raise Refused("its machine or time is not short text")
    return Version(version_id, path, list(dict.fromkeys(bases)), text, machine, time)
