"""A bucket URI and the store behind it: a folder store (`local`), or a Hugging Face bucket (`hub`, the one module
that loads the SDK).

`open_store` is how every command reaches a store, and where a folder store is checked before any use. A backend
is loaded when a bucket of its kind is first opened: a command that works from the cache loads neither.
"""

from __future__ import annotations

import importlib
import os
import shlex
import stat
from pathlib import Path
from types import ModuleType

from .. import commands, names
from ..errors import AccessError, AgentMemoryError
from ..names import FILE_SCHEME, folder_path, hub_id
from . import outage
from .base import FolderSilent, Store, StoreError
from .budget import Budget, hearing_seconds


def landed_anyway(store: Store, failure: StoreError, path: str, data: bytes) -> bool:
    """After a failed write whose outcome may be unknown (the answer was lost), read the object back to see."""
    if failure.reason == "auth":  # refused: nothing was written
        return False
    try:
        return store.holds(path, data)
    except StoreError:
        return False


def parse_bucket(spec: str) -> str:
    """Canonical URI for a bucket given as `owner/name`, `hf://buckets/owner/name` or `file:///abs/path`.

    A folder that exists is named by its resolved path (one URI per folder, whatever symlinks led to it). Its stat is
    asked in a child within the hearing time first: setup on a hung mount says so instead of hanging with it."""
    uri = names.bucket(spec)
    if (folder := folder_path(uri)) is None:
        return uri
    seconds = 2 * hearing_seconds()
    try:
        answered = _backend("bounded").stat(folder, seconds) is not None
    except OSError:  # not there (yet): bootstrap creates it, and the other commands report it
        return uri
    if not answered:
        raise AgentMemoryError(
            f"The folder store {folder} did not answer a stat within {seconds:.2g} s (a mount that hangs?); "
            "nothing was changed.",
            next_step=f"check that the share is mounted and answers (ls {shlex.quote(str(folder))}), "
            "then run the command again",
        )
    return FILE_SCHEME + str(folder.resolve())


def check_private(uri: str, budget: Budget | None = None) -> None:
    """For a folder store, AccessError (saying the command that fixes it) unless only this user can open it.

    A folder that others can read leaks private notes; one that others can write lets them plant notes or skills
    that agents will trust. Like a public bucket, it is refused wherever the store is used, and its permissions
    are never changed for the user. One stat, so every command can afford it (within `budget` when one is given: a
    hook's is short). A folder that is not there passes: using it reports an unmounted drive. Hub buckets are checked
    by bootstrap (private, never made public).
    """
    folder = folder_path(uri)
    if folder is None or os.name == "nt":  # Windows has no mode bits to check
        return
    if outage.current(uri) is not None:  # not answering a moment ago: not asked again (checked when it answers)
        return
    try:
        found = _stat(uri, folder, budget)
    except OSError:
        return
    if found is None:  # a hung mount: the commands that use it answer from what is local
        return
    owner, mode = found
    if not (owner != os.getuid() or mode & 0o077):
        return
    quoted = shlex.quote(str(folder))
    if owner != os.getuid():
        raise AccessError(
            f"The folder store {folder} belongs to another user (uid {owner}), so agent-memory will not use it.",
            next_step=f"use a folder of your own: {commands.line('config', 'set', 'bucket', 'file:///ABSOLUTE/PATH')}",
        )
    if mode & stat.S_ISVTX and mode & 0o002:  # shared by design, as /tmp: closing it locks others out
        own = FILE_SCHEME + str(folder / "agent-memory-store")
        next_step = f"{commands.line('config', 'set', 'bucket', own)} (a folder of your own in it, created owner-only)"
    else:
        next_step = f"chmod 700 {quoted} (if only you should use it)"
    raise AccessError(
        f"The folder store {folder} can be read or written by other users (mode {stat.filemode(mode)}), "
        "so agent-memory will not use it; its permissions were not changed.",
        next_step=next_step,
    )


def open_store(uri: str, *, budget: Budget, online: bool = False) -> Store:
    """The store for a canonical bucket URI; `budget` bounds its network calls (the command's one budget).

    A folder store is checked first (`check_private`): every command that uses one goes through here, and each of its
    calls runs within `budget` (`bounded`). A store of either kind that did not answer a moment ago is not asked
    again before its wait is over (`outage`), unless `online` (`--online`, an explicit retry): its store then fails
    every call at once, and loads no network library. Nor is it asked once its wait is over, by a command or a hook
    alike: the first to find the wait over starts a probe that nobody waits for (`probe`), and each answers from what
    is local until the probe (or an explicit retry) finds that it answers again.
    """
    if not online and (found := outage.current(uri)) is not None:
        return outage.OutageStore(uri, found)
    if not online and (due := outage.due(uri)) is not None:
        found, start = due
        if start:
            outage.probe_later(uri)
        return outage.OutageStore(uri, found)
    if (folder := folder_path(uri)) is not None:
        check_private(uri, budget)
        if not online and (found := outage.current(uri)) is not None:  # its folder did not answer the check
            return outage.OutageStore(uri, found)
        folder_store: Store = _backend("bounded").BoundedStore(_backend("local").FolderStore(folder), folder, budget)
        return folder_store  # (modules loaded here: typed as they are)
    hub_store: Store = _backend("hub").HubStore(hub_id(uri) or "", budget=budget)
    return hub_store


def _stat(uri: str, folder: Path, budget: Budget | None) -> tuple[int, int] | None:
    """The folder's stat, None if it did not answer within twice the hearing time (within what is left of `budget`,
    at least MIN_VERDICT): a hung mount, recorded as the store's outage, which later commands and hooks do not wait
    for."""
    bounded = _backend("bounded")  # loaded only for a folder store
    if budget is None:
        seconds = 2 * hearing_seconds()
    else:
        seconds = max(bounded.MIN_VERDICT, min(2 * budget.hearing(), budget.remaining()))
    info: tuple[int, int] | None = bounded.stat(folder, seconds)
    if info is None:
        outage.failed(
            uri, FolderSilent(folder, f"the folder store {folder} did not answer a stat within {seconds:.2g} s")
        )
    return info


def hub_user(budget: Budget) -> str:
    """The Hub user behind this machine's credentials (NoCredentials if there are none or they are refused)."""
    user: str = _backend("hub").whoami(budget)
    return user


def _backend(name: str) -> ModuleType:
    """The backend module `name` (`local`, `bounded` or `hub`), loaded when a bucket of its kind is first opened:
    the Hub's brings huggingface_hub, httpx2 and hf_xet (about 150 ms), which a command that never uses the Hub must
    not pay for."""
    return importlib.import_module(f"{__package__}.{name}")
