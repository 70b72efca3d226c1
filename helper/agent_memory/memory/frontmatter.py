"""The YAML of frontmatter, the one place PyYAML is used: written plain, read with bounded cost; and the times it
holds (`created`).

Frontmatter in the simple form this helper writes (one `key: value` line per field, lists as `- item` lines,
each value a plain or single-quoted string on its line) is read by a literal scan of its lines, several times
faster than the YAML parser: a first fill indexes thousands of notes. The scan accepts only what it can read
exactly as PyYAML would (a plain value is resolved by PyYAML's own resolver); anything else, however slight
(a comment, a tab, a double quote, a number, an indented line), goes to the YAML parser, so the result never
depends on which reader ran.

Loaded by `notes` when a note or a SKILL.md is first written or parsed.
"""

from __future__ import annotations

import functools
import math
import re
import time
from datetime import date, datetime, timedelta, timezone

import yaml

# the characters the scan accepts: YAML's printable ones but its line breaks other than \n (\x85, \u2028, \u2029),
# tab and carriage return (whitespace whose handling depends on where it is) and the byte-order mark
_SIMPLE_TEXT = re.compile("[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*")
# a line of the simple form: `key: value` (the value with the space before it), `key:` alone, or `- item`
_SIMPLE_LINE = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_-]*):( .*)?|- (.*))$", re.MULTILINE)
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@` ")  # YAML's indicators (and a space): never a simple plain value
_RESOLVER = yaml.resolver.Resolver()  # what the loaders use to tell a plain `yes`, `1` or `~` from a string
_STR = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG
# the first characters of the plain values the resolver may read as something else than a string (its rules are
# keyed by first character; a rule for any character, None, would send every value to it)
_RESOLVED = None if None in _RESOLVER.yaml_implicit_resolvers else frozenset(_RESOLVER.yaml_implicit_resolvers)
_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d{1,9})?(?:([Zz])|([+-])(\d\d):(\d\d))")
# the form the helper writes (UTC, whole seconds), which `created` gives back as it is: fixed widths, so that its order
# as text is its order in time
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")  # ASCII digits only, unlike \d


def dump(fields: dict[str, object]) -> str:
    """`fields` as YAML block mappings, in their order, one line each."""
    return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


def load(text: str, depth_max: int) -> object:
    """The YAML document in `text` as plain data, refusing anchors and aliases before anything is constructed;
    ValueError saying why (in our words, never quoting the text) if it cannot be used.

    The composer resolves an alias to the node it names (no copy), so composing costs what the text does; an
    alias shows up as a node met twice, and is refused there. Only then is the node tree turned into values,
    which therefore cannot be larger than the text. Frontmatter in the simple form is read without the parser
    (`simple`), with the same result.
    """
    found = simple(text)
    if found is not None:
        return found
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml's parser is ten times faster
    try:
        try:
            node = loader.get_single_node()
        except (yaml.YAMLError, RecursionError) as exc:  # RecursionError: the pure-Python composer
            raise _invalid(exc) from None
        if node is None:
            return None
        _check_tree(node, depth_max)  # before any value is built
        try:
            return loader.construct_document(node)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:  # ValueError: an integer of too many digits
            raise _invalid(exc) from None
    finally:
        loader.dispose()


def simple(text: str) -> dict[str, object] | None:
    """The mapping in `text` if it is in the simple form (see the module docstring), exactly as the YAML loader
    would give it; None if it is not, for the loader to read. One pass over the text: linear in its length."""
    if not text.endswith("\n") or not _SIMPLE_TEXT.fullmatch(text):
        return None
    lines = _SIMPLE_LINE.findall(text)  # each a whole line: if one is not of the form, fewer than the lines
    if len(lines) != text.count("\n"):
        return None
    found: dict[str, object] = {}
    listing: str | None = None  # the key whose `- item` lines may follow (its value was left empty)
    for key, value, item in lines:
        if not key:  # a `- item` line
            item = _quoted(item) if item[:1] == "'" else _plain(item)
            if listing is None or item is None:
                return None
            items = found[listing]
            if not isinstance(items, list):  # None: the key's first item
                items = []
                found[listing] = items
            items.append(item)
            continue
        # a key twice (which YAML may take either way), or one YAML reads as a bool or null (the pattern of a key
        # leaves nothing else that `_plain` refuses)
        if key in found or ((_RESOLVED is None or key[0] in _RESOLVED) and not _resolved_as_string(key)):
            return None
        if not value:  # `key:` alone is null, unless items follow
            found[key] = None
            listing = key
            continue
        listing = None
        value = value[1:]  # after the space that follows the colon
        if value == "[]":
            found[key] = []
        elif (scalar := _quoted(value) if value[:1] == "'" else _plain(value)) is not None:
            found[key] = scalar
        else:
            return None
    return found or None


def _quoted(value: str) -> str | None:
    """A single-quoted value of the simple form as its string (closed where the line ends, quotes inside doubled)."""
    inner = value[1:-1]
    if len(value) < 2 or value[-1] != "'" or "'" in inner.replace("''", ""):
        return None
    return inner.replace("''", "'")


def _plain(value: str) -> str | None:
    value = value.rstrip(" ")  # not part of a plain value
    if not value or value[0] in _NOT_PLAIN_START or value[-1] == ":" or ": " in value or " #" in value:
        return None  # an indicator, a comment, or a key inside
    if _RESOLVED is not None and value[0] not in _RESOLVED:
        return value
    return value if _resolved_as_string(value) else None


@functools.lru_cache(maxsize=4096)  # keys and the usual values (kinds, agents, tags) recur in every note of a fill
def _resolved_as_string(value: str) -> bool:
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]  # PyYAML's stubs leave it untyped
    return tag == _STR


def _invalid(exc: Exception) -> ValueError:
    return ValueError(f"the frontmatter is not valid YAML ({type(exc).__name__})")


def _check_tree(root: yaml.Node, depth_max: int) -> None:
    """ValueError if a node is reached twice (an alias) or lists and mappings nest deeper than `depth_max`."""
    seen = {id(root)}
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node.value, str):
            continue
        if depth == depth_max:
            raise ValueError(f"the frontmatter nests lists or mappings deeper than {depth_max} levels")
        for item in node.value:
            for child in item if isinstance(item, tuple) else (item,):  # a mapping's items are (key, value) pairs
                if id(child) in seen:
                    raise ValueError("the frontmatter uses YAML aliases, which notes never need")
                seen.add(id(child))
                stack.append((child, depth + 1))


def created(value: object, future_slack: float) -> str:
    """`created` as `YYYY-MM-DDTHH:MM:SSZ` (UTC), from an ISO 8601 time with its offset; ValueError otherwise.

    A time in the future (beyond clock skew) is refused too: notes rank by it, and such a note would always
    come first (more than `future_slack` seconds ahead of this machine's clock).
    """
    if isinstance(value, str) and _CANONICAL.fullmatch(value):  # most notes: checked without building a time
        if not (_valid_day(value[:10]) and value[11:13] < "24" and value[14:16] < "60" and value[17:19] < "60"):
            raise ValueError("created is not a valid date and time")
        if value < "1970":
            raise ValueError("created is before 1970")
        if value > _latest(future_slack):
            raise ValueError("created is in the future")
        return value
    if isinstance(value, datetime):  # unquoted in the YAML; without an offset, YAML means UTC
        stamp = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, str) and (match := _STAMP.fullmatch(value)):
        year, month, day, hour, minute, second, utc, sign, off_hours, off_minutes = match.groups()
        try:
            if utc:  # the form the helper writes: no offset to build
                zone = timezone.utc
            else:
                offset = timedelta(hours=int(off_hours), minutes=int(off_minutes))
                zone = timezone(-offset if sign == "-" else offset)
            stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=zone)
        except ValueError:
            raise ValueError("created is not a valid date and time") from None
    else:
        what = "missing" if value is None else "a date without a time" if isinstance(value, date) else "not a time"
        raise ValueError(f"created is {what} (expected a time like 2026-01-02T03:04:05Z)")
    if stamp.tzinfo is not timezone.utc:  # (a zero offset is that one)
        try:
            stamp = stamp.astimezone(timezone.utc)
        except OverflowError:  # near year 1 or 9999
            raise ValueError("created is not a valid date and time") from None
    if stamp.year < 1970:
        raise ValueError("created is before 1970")
    if stamp.timestamp() > time.time() + future_slack:
        raise ValueError("created is in the future")
    return f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}T{stamp.hour:02d}:{stamp.minute:02d}:{stamp.second:02d}Z"


@functools.lru_cache(maxsize=1024)  # the notes of a fill share their days
def _valid_day(day: str) -> bool:
    """Whether `YYYY-MM-DD` is a day of the calendar."""
    try:
        date(int(day[:4]), int(day[5:7]), int(day[8:10]))
    except ValueError:
        return False
    return True


def _latest(future_slack: float) -> str:
    """The latest time `created` may hold now, in the canonical form: a whole second, since that form has no
    fraction (a time after it is after `time.time() + future_slack`, which `created` refuses)."""
    return _canonical(math.floor(time.time() + future_slack))


@functools.lru_cache(maxsize=2)  # a fill checks thousands of notes within the same second
def _canonical(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
