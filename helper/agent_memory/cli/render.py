"""How a command's result reaches the user: data on stdout (one JSON object with `--json`), everything else on
stderr; how uploads, retries and refreshes are told; and a hook's event and its one line (errors: `failures`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from .. import commands
from ..agents import codex
from ..display import plural, safe, safe_tree
from ..errors import ACCESS, ERROR, OK, PENDING
from ..errors import render as lines
from ..idle import MAX_EVENT
from ..store.base import Freshness, OversizedObject
from .parsing import Rendered

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import CacheFreshness, Delivered, Retries, Skipped

HOOK_PREFIX = "agent-memory hook: "


def emit(result: Mapping[str, object], text: str | bytes, as_json: bool) -> None:
    """Print a command's result: its JSON object with `--json`, else its text (bytes exactly as they are)."""
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif isinstance(text, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
    elif text:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


def hook_line(text: str) -> None:
    """A hook's one line for the runtime's log, on stderr (a hook's stdout is the runtime's to read)."""
    print(HOOK_PREFIX + safe(text), file=sys.stderr)


def read_event() -> dict[str, object]:
    """A hook's event, the JSON object on stdin; `{}` when there is none or it is not an object: the hook still does
    its work (and says so in its line when the event is not JSON)."""
    if sys.stdin is None or sys.stdin.isatty():  # run by hand in a terminal: do not wait for an event
        return {}
    try:
        raw = sys.stdin.buffer.read(MAX_EVENT)
        value = json.loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        hook_line("the event on stdin is not JSON; carrying on without it")
        return {}
    return value if isinstance(value, dict) else {}


def notice(text: str) -> None:
    """A line for people, on stderr."""
    print(text, file=sys.stderr)


def freshness_of(freshness: Freshness) -> CacheFreshness:
    """The `freshness` object of a search: `{"status": "fresh"|"stale", "reason", "detail", "kind", "skipped", "gone"}`;
    `kind` is how a fresh cache was brought up to date: `changes` (the change feed) or `listing` (the whole
    project)."""
    reason: str | None
    detail: str | None
    if freshness.offline:
        status, reason, detail = "stale", "offline", "--offline: the bucket was not consulted"
    elif freshness.error is not None:
        detail = freshness.error.detail
        if freshness.error.reason == "offline" and codex.network_blocked():
            detail += f" ({codex.NO_NETWORK}: {commands.line('codex-sandbox', 'allow')})"
        status, reason = "stale", freshness.error.reason
    else:
        status, reason, detail = "fresh", None, None
    skipped: list[Skipped] = [
        {
            "path": s.path,
            "reason": "oversized" if isinstance(s, OversizedObject) else "unsafe",
            "detail": s.detail,
            "next": s.next_step,
        }
        for s in freshness.skipped
    ]
    kind = freshness.kind if freshness.fresh else None
    found: CacheFreshness = {
        "status": status,
        "reason": reason,
        "detail": detail,
        "kind": kind,
        "skipped": skipped,
        "gone": freshness.gone,
    }
    return safe_tree(found)


def told_freshness(freshness: Freshness) -> tuple[CacheFreshness, int]:
    """The `freshness` object of a refresh, with its notices printed; exit 4 when the refresh was refused (the results
    still come from the cache), else 0."""
    found = freshness_of(freshness)
    if found["status"] != "fresh":
        notice(f"Results come from the local cache only ({found['reason']}: {found['detail']}).")
    for skipped in found["skipped"]:
        where = "the folder store" if skipped["reason"] == "unsafe" else "the bucket"
        notice(f"Skipped an object of {where}: {skipped['detail']}.\nNext: {skipped['next']}")
    for path in found["gone"]:
        notice(f"The bucket no longer holds {path}: its cached copy was dropped.")
    if found["reason"] != "auth" or freshness.error is None:  # (auth: a refusal, which is an error)
        return found, OK
    notice(f"Next: {safe(freshness.error.fix)}")  # in words of the store that refused: the Hub, or a folder
    return found, ACCESS


def told_upload(result: Delivered) -> Rendered:
    """One upload's result (a note saved, a skill published) in words; exit 75 while it is pending."""
    result = safe_tree(result)  # a pending upload's message carries the store's error
    code = PENDING if result["status"] == "pending" else OK
    if "revision" not in result:  # a note
        return result, told_pending(result), code
    if result.get("message"):  # told on stderr, as before the publication's line
        notice(told_pending(result))
    result.pop("message", None)
    result.pop("next", None)
    files = plural(len(result["files"]), "file")
    return result, f"{result['status'].capitalize()}: {result['name']} revision {result['revision']} ({files})", code


def told_pending(result: Delivered) -> str:
    """An upload's message, with its `Next:` line while it is pending."""
    return result["message"] + (f"\nNext: {result['next']}" if result.get("next") else "")


def told_retries(result: Retries) -> Rendered:
    """A retry of several uploads in words: exit 1 if any is damaged, else 75 if any is still pending."""
    result = safe_tree(result)  # store errors and damage reports carry outside text
    published = "Published {name} revision {revision}."
    told = [told_pending(r) if r.get("message") else published.format(**r) for r in result["results"]]
    for item in result["damaged"]:
        damage = f"the pending {item['kind']} {item['id']} is damaged and was not uploaded: {item['problem']}"
        notice(
            lines(
                damage,
                f"{commands.line('pending', 'export', item['id'], '--to', 'PATH')}, "
                f"or {commands.line('pending', 'discard', item['id'])}",
            )
        )
    still_pending = any(r["status"] == "pending" for r in result["results"])
    code = ERROR if result["damaged"] else PENDING if still_pending else OK
    return result, "\n".join(told) or ("Nothing is pending." if not result["damaged"] else ""), code
