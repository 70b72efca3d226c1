"""The Hub's change feed of a bucket, read up to `ready`: what changed after a cursor, at the cost of one request.

`GET /api/buckets/{id}/events?cursor=...` (server-sent events) replays every file change after the cursor in
`changes` events, then sends `ready` and goes on with live changes: we close it at `ready`. `reset` means the
cursor is older than the server's replay buffer; 401/403/404/501 mean this deployment or token cannot follow the
bucket; either way the caller lists instead (`Unfollowable`). The contract is the one huggingface_hub 2.4.0's
own client parses (`_bucket_live_follow.py`); its reader is private and keeps whatever the server sends in
memory, so this one is ours, with bounded cost: line, event and replay sizes, and a deadline.

Only the SDK's public HTTP session (our transport, see `hub`) and headers are used. The stream is hostile data
like any other answer: an event we do not understand in full makes the caller list, never guess.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Iterator

from .base import Change as Change  # what a replay answers: the stores' vocabulary, re-exported
from .base import Replay as Replay
from .base import Unfollowable as Unfollowable

MAX_LINE = 1 << 20  # bytes in one line of the stream (a `changes` event of a thousand files is about 300 KB)
MAX_EVENT = 4 << 20  # bytes of one event's data
MAX_REPLAY = 32 << 20  # bytes of a whole replay: past that, listing is the cheaper way to catch up
MAX_SESSIONS = 3  # streams the server may end with `reconnect` before `ready`
MAX_PATH = 1000


def head_or_changes(
    open_stream: Callable[[dict[str, str]], Generator[bytes, None, None]],
    cursor: str | None,
    prefix: str,
    *,
    deadline: float,
) -> Replay:
    """The changes below `prefix` after `cursor` (with no cursor: none, only where the feed stands now).

    `open_stream(params)` opens the stream and yields its bytes (raising Unfollowable for the statuses above);
    it is called again after a `reconnect`, and closed as soon as `ready` arrives. `deadline` is a
    `time.monotonic()` instant.
    """
    changes: dict[str, Change] = {}
    folder = prefix.strip("/") + "/"
    budget = [MAX_REPLAY]
    for _session in range(MAX_SESSIONS):
        stream = open_stream({"cursor": cursor} if cursor else {})
        try:
            for name, data in events(stream, deadline, budget):
                if name == "changes":
                    cursor = apply(data, changes, folder)
                elif name == "ready":
                    got = _payload(data).get("cursor")
                    return Replay(_cursor(got) if got is not None else cursor, changes)
                elif name == "reset":
                    raise Unfollowable("reset", "the change feed no longer holds changes that far back")
                elif name == "reconnect":
                    got = _payload(data).get("cursor")
                    cursor = _cursor(got) if got is not None else cursor
                    break
            else:
                raise Unfollowable("ended", "the change feed ended before it was ready")
        finally:
            stream.close()  # the stream stays open after `ready`: close it now, not when collected
    raise Unfollowable("ended", f"the change feed asked to reconnect {MAX_SESSIONS} times before it was ready")


def apply(data: str, changes: dict[str, Change], folder: str) -> str:
    """Merge one `changes` event into `changes` (paths below `folder` only: all for an empty one); its cursor."""
    payload = _payload(data)
    cursor, items = _cursor(payload.get("cursor")), payload.get("changes")
    if not isinstance(items, list):
        raise Unfollowable("invalid", "a `changes` event of the feed has no list of changes")
    for item in items:
        if not isinstance(item, dict) or item.get("op") not in ("add", "update", "delete"):
            raise Unfollowable("invalid", "the feed sent a change it does not describe")
        path, size, xet_hash = item.get("path"), item.get("size"), item.get("xetHash")
        if not isinstance(path, str) or not 0 < len(path) <= MAX_PATH:
            raise Unfollowable("invalid", "the feed sent a change without a usable path")
        if size is not None and (type(size) is not int or size < 0):
            raise Unfollowable("invalid", f"the feed sent a size that is not one for {path}")
        if xet_hash is not None and (not isinstance(xet_hash, str) or not 0 < len(xet_hash) <= 128):
            raise Unfollowable("invalid", f"the feed sent a hash that is not one for {path}")
        if not path.startswith(folder):
            continue  # another project, or skills: nothing to fetch, nothing to keep
        change = changes.get(path)
        if item["op"] != "update" or change is None:
            change = changes[path] = Change(path)  # an add or a delete starts from nothing
        change.deleted = item["op"] == "delete"
        if item["op"] == "add":
            change.added, change.size, change.hash = True, size, xet_hash
        elif item["op"] == "update":
            change.size = size if size is not None else change.size
            change.hash = xet_hash if xet_hash is not None else change.hash
    return cursor


def _payload(data: str) -> dict[str, object]:
    try:
        payload = json.loads(data) if data.strip() else {}
    except ValueError:
        raise Unfollowable("invalid", "the feed sent an event that is not JSON") from None
    if not isinstance(payload, dict):
        raise Unfollowable("invalid", "the feed sent an event that is not an object")
    return payload


def _cursor(value: object) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_PATH:
        raise Unfollowable("invalid", "the feed sent a cursor that is not one")
    return value


def events(chunks: Iterator[bytes], deadline: float, budget: list[int] | None) -> Iterator[tuple[str, str]]:
    """`(event name, data)` of each server-sent event with data, within the limits above (`budget`: the bytes left
    for the whole stream, None for a stream followed live, see `follower`).

    Lines end with LF, CRLF or CR; a blank line dispatches the event; lines starting with `:` are comments
    (keep-alives). Fields other than `event` and `data` are ignored. The deadline is checked as each chunk
    arrives (keep-alives included); the read timeout of the stream bounds the wait for one.
    """
    buffer = bytearray()
    name, size = "", 0
    data: list[str] = []
    after_cr = False  # the last chunk ended with a CR: an LF starting this one is the rest of a CRLF
    for chunk in chunks:
        if time.monotonic() > deadline:
            raise Unfollowable("slow", "the change feed did not get ready in time")
        if budget is not None:
            budget[0] -= len(chunk)
        if budget is not None and budget[0] < 0:
            raise Unfollowable("long", f"the change feed replays more than {MAX_REPLAY >> 20} MiB")
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) != -1:
            line, start = bytes(buffer[start:end]), end + 1
            if not line:
                if data:
                    yield name or "message", "\n".join(data)
                name, data, size = "", [], 0
            elif not line.startswith(b":"):
                field, _, value = line.decode("utf-8", errors="replace").partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    name = value[:100]
                elif field == "data":
                    size += len(value) + 1
                    if size > MAX_EVENT:
                        raise Unfollowable("long", "the change feed sent an event larger than 4 MiB")
                    data.append(value)
        del buffer[:start]
        if len(buffer) > MAX_LINE:
            raise Unfollowable("long", "the change feed sent a line longer than 1 MiB")
