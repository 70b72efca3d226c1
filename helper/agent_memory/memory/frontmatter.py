"""The YAML of frontmatter, the one place PyYAML is used: written plain, read with bounded cost; and the times it
holds (`created`).

Loaded by `notes` when a note or a SKILL.md is first written or parsed.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

import yaml

_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d{1,9})?(?:([Zz])|([+-])(\d\d):(\d\d))")


def dump(fields: dict[str, object]) -> str:
    """`fields` as YAML block mappings, in their order, one line each."""
    return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


def load(text: str, depth_max: int) -> object:
    """The YAML document in `text` as plain data, refusing anchors and aliases before anything is constructed;
    ValueError saying why (in our words, never quoting the text) if it cannot be used.

    The composer resolves an alias to the node it names (no copy), so composing costs what the text does; an
    alias shows up as a node met twice, and is refused there. Only then is the node tree turned into values,
    which therefore cannot be larger than the text.
    """
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


def _invalid(exc: Exception) -> ValueError:
    return ValueError(f"the frontmatter is not valid YAML ({type(exc).__name__})")


def _check_tree(root: object, depth_max: int) -> None:
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
    if isinstance(value, datetime):  # unquoted in the YAML; without an offset, YAML means UTC
        stamp = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    elif isinstance(value, str) and (match := _STAMP.fullmatch(value)):
        year, month, day, hour, minute, second, utc, sign, off_hours, off_minutes = match.groups()
        offset = timedelta(0) if utc else timedelta(hours=int(off_hours), minutes=int(off_minutes))
        try:
            zone = timezone(-offset if sign == "-" else offset)
            stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=zone)
        except ValueError:
            raise ValueError("created is not a valid date and time") from None
    else:
        what = "missing" if value is None else "a date without a time" if isinstance(value, date) else "not a time"
        raise ValueError(f"created is {what} (expected a time like 2026-01-02T03:04:05Z)")
    try:
        stamp = stamp.astimezone(timezone.utc)
    except OverflowError:  # near year 1 or 9999
        raise ValueError("created is not a valid date and time") from None
    if stamp.year < 1970:
        raise ValueError("created is before 1970")
    if stamp > datetime.now(timezone.utc) + timedelta(seconds=future_slack):
        raise ValueError("created is in the future")
    return f"{stamp.year:04d}-{stamp:%m-%dT%H:%M:%S}Z"
