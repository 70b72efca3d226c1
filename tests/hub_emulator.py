"""Local Hugging Face Hub emulator for Storage Buckets, spoken to by the real huggingface_hub + hf_xet.

Only the routes that `HfApi`'s bucket methods call are served. File bytes never travel over HTTP: the xet
token routes hand out `local://<dir>` CAS URLs, which hf_xet reads and writes directly on disk (see
hub_emulator_cas.py for why each token gets its own folder). The Space repository routes that
`create_repo(repo_type="space")`, `upload_folder` and a pinned `/spaces/.../resolve/REV/PATH` use are served
by hub_emulator_spaces.py.

The bucket change feed (`GET /api/buckets/{id}/events`, server-sent events) follows the contract that
huggingface_hub 2.4.0's client parses (`_bucket_live_follow.py`): every write is logged as a change with a
sequence number; `cursor` replays what came strictly after it, `since` from an instant (inclusive), nothing
replays nothing; then `ready`, then live changes and keep-alive comments until the client leaves or the stream
reaches its lifetime (`reconnect`). Changes older than the replay buffer are forgotten and a resume point
before them gets `reset`; `feed_off()` makes the feed unavailable (501 by default).

Run standalone: `python tests/hub_emulator.py --root DIR [--port N] [--user NAME --token TOK] [--page-size N]`.
hf_xet picks its log folder ($HF_XET_CACHE/logs, default ~/.cache/huggingface/xet/logs) when imported, so set
HF_XET_CACHE in the environment of that process to keep its logs elsewhere.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import json
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from hub_emulator_cas import CasStore, local_url, parse_shard_file_sizes, xet_hash_hex
from hub_emulator_spaces import ENDPOINTS as SPACE_ENDPOINTS
from hub_emulator_spaces import SpaceRepoError, SpaceRepos

__all__ = ["ENDPOINTS", "FAULT_MODES", "HubEmulator", "main", "parse_shard_file_sizes", "xet_hash_hex"]

ENDPOINTS = (
    "whoami",
    "create",
    "info",
    "tree",
    "paths-info",
    "batch",
    "xet-write-token",
    "xet-read-token",
    "resolve",
    "events",
    *SPACE_ENDPOINTS,
    "other",
)
# "apply-then-*" modes (batch only) apply the batch first: the client cannot tell whether it happened. "slow" answers
# as usual after `seconds`: a Hub that is slow but answers (what a large upload on a slow link looks like to the
# client, whose other requests are answered meanwhile).
FAULT_MODES = ("fail", "hang", "drop", "slow", "apply-then-fail", "apply-then-hang", "apply-then-drop")
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"  # exact text the SDK checks for
# Measured: hf_xet asks for a new token for every upload commit and every download group, whatever the
# expiry, so a read token never hides newer files. The expiry only bounds how long a token's folder is
# kept (see hub_emulator_cas.STALE_FOLDER_GRACE). 61 s is the shortest the Python SDK accepts as unexpired.
READ_TOKEN_TTL = 61
WRITE_TOKEN_TTL = 900


FEED_KEEPALIVE = 0.5  # seconds between keep-alive comments (the Hub sends one about every 30 s)
FEED_STREAM_SECONDS = 60.0  # a live stream ends with `reconnect` after this long
FEED_BATCH = 100  # changes per `changes` event


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"seq:{seq}".encode()).decode()


def _seq(cursor: str) -> int:
    """The sequence number of a cursor this emulator handed out; ValueError for anything else."""
    text = base64.urlsafe_b64decode(cursor.encode()).decode()
    if not text.startswith("seq:"):
        raise ValueError(f"not a cursor: {cursor!r}")
    return int(text[4:])


def _sse(event: str, payload: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


# ---------------------------------------------------------------------------------------------------------------
# Metadata
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _User:
    name: str
    token: str
    role: str
    orgs: tuple[str, ...]


@dataclass
class _File:
    path: str
    xet_hash: str
    size: int
    mtime_ms: int
    uploaded_at: float
    writes: int
    content_type: str | None = None
    entry: dict[str, Any] = field(init=False)  # the JSON that tree and paths-info answer, built once

    def __post_init__(self) -> None:
        self.entry = {
            "type": "file",
            "path": self.path,
            "size": self.size,
            "xetHash": self.xet_hash,
            "mtime": _iso(self.mtime_ms / 1000),
            "uploadedAt": _iso(self.uploaded_at),
        }


@dataclass
class _Bucket:
    bucket_id: str
    private: bool
    created_at: float = field(default_factory=time.time)
    files: dict[str, _File] = field(default_factory=dict)
    version: int = 0  # bumped on every change; keys the listing cache
    updated_at: float = 0.0  # the instant of the last change, strictly increasing (the Hub's `updatedAt`)
    # the change feed: (sequence number = version after the change, instant, change as the feed sends it)
    events: list[tuple[int, float, dict[str, Any]]] = field(default_factory=list)
    forgotten: int = 0  # the sequence number of the newest change dropped from the replay buffer
    forgotten_at: float = 0.0  # and its instant
    buffer: int | None = None  # how many changes the replay buffer keeps (None: every one)
    _listings: dict[tuple[str, bool], tuple[int, list[str], dict[str, dict[str, Any]]]] = field(default_factory=dict)

    def put(self, path: str, xet_hash: str, size: int, mtime_ms: int, content_type: str | None = None) -> None:
        # Overwriting a path is allowed (as on the real Hub); `writes` lets tests see it happened.
        previous = self.files.get(path)
        writes = previous.writes + 1 if previous else 1
        file = self.files[path] = _File(path, xet_hash, size, mtime_ms, time.time(), writes, content_type)
        change = {"path": path, "op": "update" if previous else "add"}
        for key in ("size", "xetHash", "uploadedAt", "mtime"):  # an update carries only what changed
            if previous is None or previous.entry[key] != file.entry[key]:
                change[key] = file.entry[key]
        self._changed(change)

    def remove(self, path: str) -> None:
        if self.files.pop(path, None) is not None:
            self._changed({"path": path, "op": "delete"})

    def _changed(self, change: dict[str, Any]) -> None:
        self.version += 1
        self.updated_at = max(time.time(), self.updated_at + 0.001)  # the Hub's milliseconds: never twice the same
        self.events.append((self.version, self.updated_at, change))
        self.keep_events(self.buffer)

    def keep_events(self, count: int | None) -> None:
        """Keep only the newest `count` changes in the replay buffer (None: all of them)."""
        if count is not None and len(self.events) > count:
            dropped = self.events[: len(self.events) - count]
            self.forgotten, self.forgotten_at = dropped[-1][:2]
            del self.events[: len(dropped)]

    def listing(self, base: str, recursive: bool) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """Sorted paths and entries under folder `base`, cached until the bucket changes (pages reuse it)."""
        cached = self._listings.get((base, recursive))
        if cached is not None and cached[0] == self.version:
            return cached[1], cached[2]
        entries: dict[str, dict[str, Any]] = {}
        for path, file in self.files.items():
            if base and path == base:
                entries[path] = file.entry
                continue
            if base and not path.startswith(base + "/"):
                continue  # "a/b" lists "a/b/..." (or the file "a/b" itself) but never "a/bc"
            parts = (path[len(base) + 1 :] if base else path).split("/")
            folder = base
            for part in parts[:-1] if recursive else parts[:-1][:1]:
                folder = f"{folder}/{part}" if folder else part  # folder entries, like the real Hub
                known = entries.get(folder)
                if known is None or known["uploadedAt"] < file.entry["uploadedAt"]:
                    entries[folder] = {"type": "directory", "path": folder, "uploadedAt": file.entry["uploadedAt"]}
            if recursive or len(parts) == 1:
                entries[path] = file.entry
        paths = sorted(entries)
        self._listings = {k: v for k, v in self._listings.items() if v[0] == self.version}
        self._listings[(base, recursive)] = (self.version, paths, entries)
        return paths, entries


@dataclass
class _Fault:
    endpoint: str
    mode: str
    status: int
    times: int
    after: int
    seconds: float
    seen: int = 0
    applied: int = 0


@dataclass
class _Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    stream: Iterator[bytes] | None = None  # sent chunk by chunk, without a length, until it ends or the client goes


def _json(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> _Response:
    return _Response(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})


def _error(status: int, message: str, code: str | None = None, **extra: Any) -> _Response:
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return _json(status, {"error": message, **extra}, headers)


def _fault_response(status: int) -> _Response:
    if status == 401:
        return _error(401, INVALID_CREDENTIALS)
    if status == 403:
        return _error(403, "You don't have the rights to perform this action (injected fault)")
    return _error(status, f"Injected fault: HTTP {status}")


class _Denied(Exception):
    """Carries an error response out of deep request handling."""

    def __init__(self, response: _Response) -> None:
        super().__init__(response.status)
        self.response = response


# ---------------------------------------------------------------------------------------------------------------
# Emulator
# ---------------------------------------------------------------------------------------------------------------


class HubEmulator:
    """In-process HTTP emulator of the Hub's bucket API, backed by local hf_xet CAS folders."""

    def __init__(self, root: Path, *, page_size: int = 1000, port: int = 0) -> None:
        """Prepare state under `root` (a folder the emulator owns); nothing listens until start()."""
        self.root = Path(root)
        self.page_size = page_size
        self.url = ""
        self.requests: list[tuple[str, str, str]] = []
        self._port = port
        self._cas = CasStore(self.root)
        self._lock = threading.Lock()  # guards users, buckets, faults and requests
        self._users: dict[str, _User] = {}  # by token
        self._buckets: dict[str, _Bucket] = {}
        self._faults: list[_Fault] = []
        self._feed_status: int | None = None  # set: the events feed answers this status (unavailable)
        self._feed_buffer: int | None = None
        self.feed_keepalive = FEED_KEEPALIVE
        self.open_streams = 0  # event streams being served now (a client that closes at `ready` leaves none)
        self.feed_stream_seconds = FEED_STREAM_SECONDS
        self.spaces = SpaceRepos(self)
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def start(self) -> HubEmulator:
        """Listen on 127.0.0.1 in a daemon thread; return self."""
        server = ThreadingHTTPServer(("127.0.0.1", self._port), _Handler)
        server.daemon_threads = True
        server.emulator = self  # type: ignore[attr-defined]
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._stopping.clear()
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release requests held by "hang" faults."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> HubEmulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- seeding and inspection -------------------------------------------------------------------------------

    def add_user(self, name: str, token: str, *, role: str = "write", orgs: Sequence[str] = ()) -> None:
        """Register a user whose token has role "read" or "write"."""
        if role not in ("read", "write"):
            raise ValueError(f"role must be 'read' or 'write', not {role!r}")
        with self._lock:
            self._users[token] = _User(name, token, role, tuple(orgs))

    def create_bucket(self, bucket_id: str, *, private: bool = True) -> None:
        """Create a bucket directly (its owner is the namespace)."""
        with self._lock:
            if bucket_id in self._buckets:
                raise ValueError(f"bucket {bucket_id} already exists")
            self._buckets[bucket_id] = _Bucket(bucket_id, private, buffer=self._feed_buffer)

    def delete_bucket(self, bucket_id: str) -> None:
        """Delete a bucket and everything in it, as its owner could on the Hub."""
        with self._lock:
            del self._buckets[bucket_id]

    def put_file(self, bucket_id: str, path: str, data: bytes) -> None:
        """Seed one file through the master CAS."""
        self.put_files(bucket_id, {path: data})

    def put_files(self, bucket_id: str, files: Mapping[str, bytes]) -> None:
        """Seed many files with one hf_xet session (the fast path for large benchmarks)."""
        if not self.bucket_exists(bucket_id):
            raise KeyError(bucket_id)
        paths = list(files)
        results = self._cas.upload([files[p] for p in paths])
        now_ms = int(time.time() * 1000)
        with self._lock:
            bucket = self._buckets[bucket_id]
            for path, (xet_hash, size) in zip(paths, results, strict=True):
                bucket.put(path, xet_hash, size, now_ms)

    def bucket_exists(self, bucket_id: str) -> bool:
        """Whether the bucket exists."""
        with self._lock:
            return bucket_id in self._buckets

    def is_private(self, bucket_id: str) -> bool:
        """Whether the bucket is private."""
        with self._lock:
            return self._buckets[bucket_id].private

    def list_paths(self, bucket_id: str) -> list[str]:
        """Sorted file paths of the bucket."""
        with self._lock:
            return sorted(self._buckets[bucket_id].files)

    def read_file(self, bucket_id: str, path: str) -> bytes:
        """Real bytes of a file, reconstructed from the master CAS."""
        with self._lock:
            entry = self._buckets[bucket_id].files[path]
        return self._cas.read(entry.xet_hash, entry.size)

    def file_info(self, bucket_id: str, path: str) -> dict:
        """{"size", "xetHash", "uploadedAt", "writes", "mtime", "contentType"} of a file."""
        with self._lock:
            entry = self._buckets[bucket_id].files[path]
            return {
                "size": entry.size,
                "xetHash": entry.xet_hash,
                "uploadedAt": _iso(entry.uploaded_at),
                "writes": entry.writes,
                "mtime": entry.mtime_ms,
                "contentType": entry.content_type,
            }

    # -- the change feed ----------------------------------------------------------------------------------------

    def feed_off(self, status: int = 501) -> None:
        """Make the events feed unavailable: it answers `status` (the client's unfollowable: 401/403/404/501).
        Writes are still logged, as a deployment that stops serving the feed still records them."""
        with self._lock:
            self._feed_status = status

    def feed_on(self) -> None:
        """Serve the events feed again."""
        with self._lock:
            self._feed_status = None

    def feed_buffer(self, count: int | None) -> None:
        """Keep only the newest `count` changes of every bucket for replay (None: all); older resume points get
        `reset`. 0 forgets every change made so far, as if the buffer's time had passed."""
        with self._lock:
            self._feed_buffer = count
            for bucket in self._buckets.values():
                bucket.buffer = count
                bucket.keep_events(count)

    def feed_event(self, bucket_id: str, change: dict[str, Any]) -> None:
        """Log `change` in the feed as it is, without changing any file: a feed that tells what did not happen (a
        missing object, a wrong size or hash, a delete of a file that is still there)."""
        with self._lock:
            self._buckets[bucket_id]._changed(dict(change))

    def feed_cursor(self, bucket_id: str) -> str | None:
        """The cursor of the newest change of the bucket (what `ready` sends), None if it never changed."""
        with self._lock:
            bucket = self._buckets[bucket_id]
            return _cursor(bucket.version) if bucket.version else None

    # -- faults and request log -----------------------------------------------------------------------------

    def fault(
        self, endpoint: str, mode: str, *, status: int = 500, times: int = 1, after: int = 0, seconds: float = 30.0
    ) -> None:
        """Misbehave on `endpoint`: skip `after` matching requests, then apply to `times` of them (0 = forever)."""
        if endpoint not in ENDPOINTS:
            raise ValueError(f"unknown endpoint {endpoint!r}; expected one of {ENDPOINTS}")
        if mode not in FAULT_MODES or (mode.startswith("apply-then-") and endpoint != "batch"):
            raise ValueError(f"unsupported fault mode {mode!r} for {endpoint!r}")
        with self._lock:
            self._faults.append(_Fault(endpoint, mode, status, times, after, seconds))

    def hang(self, seconds: float = 60.0) -> None:
        """Hang on every endpoint, for every request, until `clear_faults` (or `seconds` each): a Hub that accepts
        connections and never answers."""
        for endpoint in ENDPOINTS:
            self.fault(endpoint, "hang", times=0, seconds=seconds)

    def clear_faults(self) -> None:
        """Remove every fault."""
        with self._lock:
            self._faults.clear()

    def reset_requests(self) -> None:
        """Forget the request log."""
        with self._lock:
            self.requests.clear()

    def _record_and_pick_fault(self, method: str, endpoint: str, raw_path: str) -> _Fault | None:
        with self._lock:
            self.requests.append((method, endpoint, raw_path))
            for fault in self._faults:
                if fault.endpoint != endpoint:
                    continue
                fault.seen += 1
                if fault.seen <= fault.after or (fault.times and fault.applied >= fault.times):
                    continue
                fault.applied += 1
                return fault
        return None

    # -- request handling ---------------------------------------------------------------------------------------

    def _authenticate(self, authorization: str | None) -> _User | None:
        if not authorization:
            return None
        token = authorization.removeprefix("Bearer ").strip()
        with self._lock:
            user = self._users.get(token)
        if user is None:
            raise _Denied(_error(401, INVALID_CREDENTIALS))
        return user

    @staticmethod
    def _owns(user: _User | None, namespace: str) -> bool:
        return user is not None and (user.name == namespace or namespace in user.orgs)

    def _visible_bucket(self, bucket_id: str, user: _User | None) -> _Bucket:
        # Missing and hidden buckets look the same, so a private bucket's existence does not leak.
        bucket = self._buckets.get(bucket_id)
        if bucket is None or (bucket.private and not self._owns(user, bucket_id.split("/")[0])):
            raise _Denied(_error(404 if user else 401, "Repository not found", "RepoNotFound"))
        return bucket

    def _require_write(self, user: _User | None, namespace: str) -> None:
        if user is None:
            raise _Denied(_error(401, "Authentication is required for this action"))
        if not self._owns(user, namespace) or user.role != "write":
            raise _Denied(_error(403, f"You don't have the rights to write to {namespace}"))

    def _handle(
        self,
        method: str,
        endpoint: str,
        args: dict[str, str],
        query: dict[str, list[str]],
        headers: Mapping[str, str],
        body: bytes,
    ) -> _Response:
        """Answer one routed request (errors raised as _Denied become their response)."""
        if endpoint == "other":
            return _error(404, f"Not Found: {method} {args['path']}")
        try:
            user = self._authenticate(headers.get("Authorization"))
            if endpoint == "whoami":
                return self._whoami(user)
            if endpoint == "create":
                return self._create(user, args["namespace"], args["name"], body)
            if endpoint == "xet-write-token":
                return self._xet_token(user, args["bucket_id"], write=True)
            if endpoint == "xet-read-token":
                return self._xet_token(user, args["bucket_id"], write=False)
            if endpoint == "batch":
                return self._batch(user, args["bucket_id"], body)
            if endpoint in SPACE_ENDPOINTS:
                return self._space(endpoint, method, user, args, query, body)
            if endpoint == "events":
                return self._events(user, args["bucket_id"], query, headers)
            with self._lock:
                bucket = self._visible_bucket(args["bucket_id"], user)
                if endpoint == "info":
                    return self._info(bucket)
                if endpoint == "tree":
                    return self._tree(bucket, args["prefix"], query)
                if endpoint == "paths-info":
                    paths = json.loads(body or b"{}").get("paths", [])
                    return _json(200, [bucket.files[p].entry for p in paths if p in bucket.files])
                if endpoint == "resolve":
                    file = bucket.files.get(args["path"])
                    if file is None:
                        return _error(404, "Entry not found", "EntryNotFound")
            if endpoint == "resolve":
                return self._resolve(bucket.bucket_id, file, method)  # reading bytes must not hold the lock
            return _error(404, "Not Found")
        except _Denied as denied:
            return denied.response
        except (ValueError, KeyError, TypeError, AttributeError) as err:  # malformed request bodies
            return _error(400, f"Bad request: {err}")

    def _whoami(self, user: _User | None) -> _Response:
        if user is None:
            return _error(401, INVALID_CREDENTIALS)
        return _json(
            200,
            {
                "type": "user",
                "name": user.name,
                "fullname": user.name,
                "orgs": [{"type": "org", "name": org} for org in user.orgs],
                "auth": {
                    "type": "access_token",
                    "accessToken": {"displayName": f"{user.name}-token", "role": user.role},
                },
            },
        )

    def _create(self, user: _User | None, namespace: str, name: str, body: bytes) -> _Response:
        if namespace == "me":
            if user is None:
                raise _Denied(_error(401, "Authentication is required for this action"))
            namespace = user.name
        self._require_write(user, namespace)
        payload = json.loads(body or b"{}")
        # The SDK sends "visibility"; older clients send "private". The real Hub defaults to public.
        private = payload.get("visibility", "private" if payload.get("private") else "public") == "private"
        bucket_id = f"{namespace}/{name}"
        url = f"{self.url}/buckets/{bucket_id}"
        with self._lock:
            if bucket_id in self._buckets:
                # The SDK reads "url" from this 409 body when create_bucket(exist_ok=True) hits it.
                return _error(409, f"You already created this bucket: {bucket_id}", url=url)
            self._buckets[bucket_id] = _Bucket(bucket_id, private, buffer=self._feed_buffer)
        return _json(200, {"url": url, "name": name, "id": bucket_id})

    @staticmethod
    def _info(bucket: _Bucket) -> _Response:
        return _json(
            200,
            {
                "id": bucket.bucket_id,
                "private": bucket.private,
                "createdAt": _iso(bucket.created_at),
                "updatedAt": _iso(bucket.updated_at or bucket.created_at),
                "size": sum(f.size for f in bucket.files.values()),
                "totalFiles": len(bucket.files),
            },
        )

    def _events(
        self, user: _User | None, bucket_id: str, query: dict[str, list[str]], headers: Mapping[str, str]
    ) -> _Response:
        """The change feed: replay after the resume point, `ready`, then live changes (see the module docstring)."""
        with self._lock:
            bucket = self._visible_bucket(bucket_id, user)
            if self._feed_status is not None:
                return _error(self._feed_status, "Live-follow is not available for this bucket")
            if "text/event-stream" not in headers.get("Accept", ""):
                return _error(406, "This endpoint only serves text/event-stream")
            cursor, since = query.get("cursor", [""])[0], query.get("since", [""])[0]
            if cursor:
                after = _seq(cursor)  # ValueError: 400, the resume point is refused
                if after > bucket.version:
                    raise ValueError(f"cursor from the future: {cursor!r}")
                stale = after < bucket.forgotten
            elif since:
                instant = datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
                after = next((seq - 1 for seq, at, _change in bucket.events if at >= instant), bucket.version)
                stale = bool(bucket.forgotten) and instant <= bucket.forgotten_at
            else:
                after, stale = bucket.version, False
        return _Response(
            200,
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
            stream=self._event_stream(bucket, after, stale),
        )

    def _event_stream(self, bucket: _Bucket, after: int, stale: bool) -> Iterator[bytes]:
        if stale:
            yield _sse("reset", {"reason": "resume point older than the replay buffer"})
            return
        after = yield from self._replay(bucket, after)
        with self._lock:
            head = bucket.version
        yield _sse("ready", {"cursor": _cursor(head)} if head else {})
        ends = time.monotonic() + self.feed_stream_seconds
        quiet = time.monotonic()
        while not self._stopping.wait(0.02):
            if time.monotonic() >= ends:
                yield _sse("reconnect", {"cursor": _cursor(after)} if after else {})
                return
            with self._lock:
                if after < bucket.forgotten:
                    yield _sse("reset", {"reason": "resume point older than the replay buffer"})
                    return
                new = bucket.version > after
            if new:
                after = yield from self._replay(bucket, after)
                quiet = time.monotonic()
            elif time.monotonic() - quiet >= self.feed_keepalive:
                yield b": keep-alive\n\n"
                quiet = time.monotonic()

    def _replay(self, bucket: _Bucket, after: int) -> Iterator[bytes]:
        """`changes` events for every logged change after `after`; returns the last sequence number sent."""
        with self._lock:
            changes = [(seq, change) for seq, _at, change in bucket.events if seq > after]
        for start in range(0, len(changes), FEED_BATCH):
            batch = changes[start : start + FEED_BATCH]
            after = batch[-1][0]
            yield _sse("changes", {"cursor": _cursor(after), "changes": [change for _seq, change in batch]})
        return after

    def _tree(self, bucket: _Bucket, prefix: str, query: dict[str, list[str]]) -> _Response:
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        paths, entries = bucket.listing(prefix.strip("/"), recursive)
        # The cursor is the last path served, so files added between pages cannot shift later pages.
        cursor = query.get("cursor", [""])[0]
        start = bisect.bisect_right(paths, base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
        page = paths[start : start + self.page_size]
        headers = {}
        if start + len(page) < len(paths):
            next_query = {k: v[0] for k, v in query.items() if k != "cursor"}
            next_query["cursor"] = base64.urlsafe_b64encode(page[-1].encode()).decode()
            encoded = "/" + quote(prefix, safe="") if prefix else ""
            link = f"{self.url}/api/buckets/{bucket.bucket_id}/tree{encoded}?{urlencode(next_query)}"
            headers["Link"] = f'<{link}>; rel="next"'
        return _json(200, [entries[p] for p in page], headers)

    def _resolve(self, bucket_id: str, file: _File, method: str) -> _Response:
        headers = {
            "X-Xet-Hash": file.xet_hash,
            "X-Linked-Size": str(file.size),
            "ETag": f'"{file.xet_hash}"',
            "Content-Length": str(file.size),
            "Content-Type": file.content_type or "application/octet-stream",
            "Link": f'<{self.url}/api/buckets/{bucket_id}/xet-read-token>; rel="xet-auth"',
        }
        if method == "HEAD":
            return _Response(200, b"", headers)
        return _Response(200, self._cas.read(file.xet_hash, file.size), headers)

    def _space(
        self,
        endpoint: str,
        method: str,
        user: _User | None,
        args: dict[str, str],
        query: dict[str, list[str]],
        body: bytes,
    ) -> _Response:
        try:
            if endpoint == "space-xet-write-token":
                self.spaces.writable(user, args["repo_id"])
                return self._mint_xet_token(write=True)
            status, payload, headers = self.spaces.handle(endpoint, method, user, args, query, body)
        except SpaceRepoError as err:
            return _error(err.status, err.message, err.code)
        return _Response(status, payload, headers) if isinstance(payload, bytes) else _json(status, payload, headers)

    def _xet_token(self, user: _User | None, bucket_id: str, *, write: bool) -> _Response:
        with self._lock:
            self._visible_bucket(bucket_id, user)
            if write:
                self._require_write(user, bucket_id.split("/")[0])
        return self._mint_xet_token(write=write)

    def _mint_xet_token(self, *, write: bool) -> _Response:
        expires = int(time.time()) + (WRITE_TOKEN_TTL if write else READ_TOKEN_TTL)
        folder = self._cas.new_write_folder(expires) if write else self._cas.new_read_snapshot(expires)
        cas_url, access_token = local_url(folder), f"xet_{uuid.uuid4().hex}"
        # hf_xet (Rust) and the Python SDK read different halves of this answer: send both.
        headers = {"X-Xet-Cas-Url": cas_url, "X-Xet-Access-Token": access_token, "X-Xet-Token-Expiration": str(expires)}
        return _json(200, {"casUrl": cas_url, "accessToken": access_token, "exp": expires}, headers)

    def _batch(self, user: _User | None, bucket_id: str, body: bytes) -> _Response:
        with self._lock:
            self._visible_bucket(bucket_id, user)
            self._require_write(user, bucket_id.split("/")[0])
        operations = [json.loads(line) for line in body.splitlines() if line.strip()]
        adds = [op["xetHash"] for op in operations if op.get("type") == "addFile"]
        # Copying bytes into the master happens outside the metadata lock: it can take a while.
        sizes, errors = self._cas.import_hashes(adds)
        failed: list[dict[str, str]] = []
        with self._lock:
            bucket = self._visible_bucket(bucket_id, user)
            for op in operations:
                kind, path = op.get("type"), op.get("path", "")
                if kind == "deleteFile":
                    bucket.remove(path)  # deleting a missing path is not an error
                elif kind == "addFile" and op["xetHash"] in sizes:
                    bucket.put(path, op["xetHash"], sizes[op["xetHash"]], op.get("mtime") or 0, op.get("contentType"))
                elif kind == "addFile":
                    failed.append({"path": path, "error": errors.get(op["xetHash"], "unknown xetHash")})
                elif kind == "copyFile":
                    error = self._copy_source_error(user, op)
                    if error:
                        failed.append({"path": path, "error": error})
                    else:
                        size = self._cas.size_of(op["xetHash"]) or 0
                        bucket.put(path, op["xetHash"], size, op.get("mtime") or 0, op.get("contentType"))
                else:
                    failed.append({"path": path, "error": f"unknown operation type {kind!r}"})
        status = 422 if failed and len(failed) == len(operations) else 200
        return _json(status, {"success": not failed, "failed": failed})

    def _copy_source_error(self, user: _User | None, op: dict[str, Any]) -> str | None:
        # Server-side copy: the content must already be stored, and a bucket source must be readable.
        if op.get("sourceRepoType") == "bucket":
            source = self._buckets.get(op.get("sourceRepoId", ""))
            if source is None or (source.private and not self._owns(user, source.bucket_id.split("/")[0])):
                return "source bucket not found"
            if not any(f.xet_hash == op["xetHash"] for f in source.files.values()):
                return "xetHash not found in source bucket"
        if self._cas.size_of(op["xetHash"]) is None:
            return "xetHash not found"
        return None


# ---------------------------------------------------------------------------------------------------------------
# HTTP layer
# ---------------------------------------------------------------------------------------------------------------


def _route(method: str, path: str) -> tuple[str, dict[str, str]]:
    """Map a request to (endpoint name, arguments); unknown routes are "other"."""
    parts = path.split("/")
    if path == "/api/whoami-v2" and method == "GET":
        return "whoami", {}
    if len(parts) >= 5 and parts[1] == "api" and parts[2] == "buckets" and parts[3] and parts[4]:
        namespace, name = unquote(parts[3]), unquote(parts[4])
        args = {"namespace": namespace, "name": name, "bucket_id": f"{namespace}/{name}"}
        action = parts[5] if len(parts) > 5 else ""
        if len(parts) == 5:
            return {"POST": "create", "GET": "info"}.get(method, "other"), args
        if action == "tree" and method == "GET":
            return "tree", {**args, "prefix": unquote("/".join(parts[6:]))}
        if len(parts) == 6 and (method, action) in (("POST", "paths-info"), ("POST", "batch")):
            return action, args
        if len(parts) == 6 and method == "GET" and action in ("xet-write-token", "xet-read-token", "events"):
            return action, args
    if len(parts) >= 6 and parts[1] == "buckets" and parts[4] == "resolve" and method in ("GET", "HEAD"):
        namespace, name = unquote(parts[2]), unquote(parts[3])
        return "resolve", {"bucket_id": f"{namespace}/{name}", "path": unquote("/".join(parts[5:]))}
    return _space_route(method, path, parts)


def _space_route(method: str, path: str, parts: list[str]) -> tuple[str, dict[str, str]]:
    """The Space routes (see hub_emulator_spaces); unknown routes are "other"."""
    if path == "/api/repos/create" and method == "POST":
        return "repo-create", {}
    if path == "/api/validate-yaml" and method == "POST":
        return "validate-yaml", {}
    if len(parts) >= 7 and parts[1] == "spaces" and parts[4] == "resolve" and method in ("GET", "HEAD"):
        args = {"repo_id": f"{unquote(parts[2])}/{unquote(parts[3])}", "revision": unquote(parts[5])}
        return "space-resolve", {**args, "path": unquote("/".join(parts[6:]))}
    if len(parts) >= 5 and parts[1] == "api" and parts[2] == "spaces" and parts[3] and parts[4]:
        args, rest = {"repo_id": f"{unquote(parts[3])}/{unquote(parts[4])}"}, parts[5:]
        if not rest and method == "GET":
            return "space-info", args
        if len(rest) == 2 and method == "GET" and rest[0] == "revision":
            return "space-info", {**args, "revision": unquote(rest[1])}
        if len(rest) >= 2 and method == "GET" and rest[0] == "tree":
            return "space-tree", {**args, "revision": unquote(rest[1]), "path": unquote("/".join(rest[2:]))}
        actions = {("POST", "preupload"), ("POST", "commit"), ("GET", "xet-write-token")}
        if len(rest) == 2 and (method, rest[0]) in actions:
            return f"space-{rest[0]}", {**args, "revision": unquote(rest[1])}
    return "other", {"path": path}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: "drop" and "hang" stay simple to reason about
    server_version = "HubEmulator/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests want quiet output

    def _dispatch(self) -> None:
        emulator: HubEmulator = self.server.emulator  # type: ignore[attr-defined]
        method, split = self.command, urlsplit(self.path)
        endpoint, args = _route(method, split.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        fault = emulator._record_and_pick_fault(method, endpoint, self.path)
        if fault is not None and fault.mode == "slow":
            emulator._stopping.wait(fault.seconds)
            fault = None  # then the usual answer
        if fault is not None and not fault.mode.startswith("apply-then-"):
            self._misbehave(fault.mode, fault)
            return
        try:
            response = emulator._handle(method, endpoint, args, parse_qs(split.query), self.headers, body)
        except Exception as err:  # an emulator bug: answer it instead of dropping the connection
            traceback.print_exc()
            response = _error(500, f"Emulator error: {err!r}")
        if fault is not None:  # applied above, but the client never learns that it was
            self._misbehave(fault.mode.removeprefix("apply-then-"), fault)
            return
        self._send(method, response)

    def _misbehave(self, action: str, fault: _Fault) -> None:
        if action == "fail":
            self._send(self.command, _fault_response(fault.status))
            return
        if action == "hang":
            self.server.emulator._stopping.wait(fault.seconds)  # type: ignore[attr-defined]
        self.close_connection = True  # returning without a status line closes the socket: no response

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _dispatch  # every method goes through the router

    def _send(self, method: str, response: _Response) -> None:
        self.send_response(response.status)
        headers = (
            response.headers if response.stream else {"Content-Length": str(len(response.body)), **response.headers}
        )
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if method == "HEAD":
            return
        if response.stream is None:
            self.wfile.write(response.body)
            return
        emulator: HubEmulator = self.server.emulator  # type: ignore[attr-defined]
        with emulator._lock:
            emulator.open_streams += 1
        try:  # HTTP/1.0 without a length: the stream ends when the connection closes
            for chunk in response.stream:
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:  # the client went away (a refresh closes the stream at `ready`)
            pass
        finally:
            response.stream.close()
            with emulator._lock:
                emulator.open_streams -= 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the emulator in the foreground until SIGTERM or Ctrl-C; print its URL on stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path, help="folder the emulator owns")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--user", help="register this user (needs --token)")
    parser.add_argument("--token")
    parser.add_argument("--role", default="write", choices=("read", "write"))
    parser.add_argument("--page-size", type=int, default=1000)
    options = parser.parse_args(argv)
    if bool(options.user) != bool(options.token):
        parser.error("--user and --token go together")

    emulator = HubEmulator(options.root, page_size=options.page_size, port=options.port)
    if options.user:
        emulator.add_user(options.user, options.token, role=options.role)
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    emulator.start()
    print(emulator.url, flush=True)
    while not done.wait(0.5):  # short waits keep the main thread responsive to signals
        pass
    emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
