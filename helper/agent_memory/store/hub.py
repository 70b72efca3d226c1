"""The Hugging Face Storage Bucket store, through huggingface_hub and hf_xet (only imported on network paths).

Credentials are the SDK's own: `HF_TOKEN` or the token saved by `hf auth login`. We never read, store or
print them. Every call runs inside the command's time budget, and the SDK's own retries are turned off
(see `_FailFastTransport`): the pending queue is our retry policy.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import os
import tempfile
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path

import hf_xet
import httpx2
import huggingface_hub
from huggingface_hub import errors as hf_errors
from huggingface_hub.utils import disable_progress_bars, set_client_factory
from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

from ..guard import redact
from . import change_feed, outage
from .base import (
    BucketMissing,
    BucketPublic,
    Listing,
    NoCredentials,
    ObjectConflict,
    ObjectInfo,
    Store,
    StoreError,
    oversized,
)
from .budget import SILENT_SECONDS, Budget, DeadlineExceeded, within

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from typing import TypeVar

    Result = TypeVar("Result")  # what a call to the Hub gives back

try:  # what the change feed is read with: an SDK without them makes every refresh list, as before the feed was used
    from huggingface_hub.utils import build_hf_headers, get_session

    NO_FEED = None
except ImportError as missing:
    NO_FEED = f"this huggingface_hub cannot read the feed ({missing})"

# hf_xet reads these when it makes its first client: its defaults retry an unreachable Hub for 77 s, where two quick
# attempts are enough for notes of a few KiB. Set (unless the user set them) when the first HubStore is opened.
XET_SETTINGS = {"HF_XET_CLIENT_RETRY_MAX_ATTEMPTS": "2", "HF_XET_CLIENT_RETRY_BASE_DELAY": "300ms"}
# at most this long (or half the budget) for the feed to get ready, then list instead: the feed's replay of a few
# changes takes the Hub well under a second, and a refresh with nothing new is this one request
FEED_SECONDS = 3.0


class _Answers:
    """How many responses (status line and headers, whatever the status) the Hub has sent this process: a call that
    sees this number move has been answered, however long its body or its next request takes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def heard(self) -> None:
        with self._lock:
            self._count += 1

    def count(self) -> int:
        with self._lock:
            return self._count


_ANSWERS = _Answers()


class _Unreachable(Exception):
    """The Hub could not be reached (refused, reset, timed out, answer lost); `silent` when it did not answer in
    time."""

    def __init__(self, detail: str, *, silent: bool = False) -> None:
        super().__init__(detail)
        self.silent = silent


class _ServerAnswer(Exception):
    """The Hub answered with a status the SDK would retry (408, 429, 5xx)."""

    def __init__(self, status: int, path: str) -> None:
        super().__init__(f"the Hub answered {status} for {path}")
        self.status = status


class _FailFastTransport(httpx2.HTTPTransport):
    """Raise, instead of returning, what the SDK would retry for about 23 s: we fail fast and keep it pending."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = super().handle_request(request)
        except httpx2.TransportError as exc:
            silent = isinstance(exc, httpx2.TimeoutException)
            raise _Unreachable(f"cannot reach {request.url.host}: {type(exc).__name__}", silent=silent) from exc
        _ANSWERS.heard()  # the headers came: the Hub is not hung, whatever it answered
        if response.status_code in (408, 429) or response.status_code >= 500:
            response.close()
            raise _ServerAnswer(response.status_code, request.url.path)
        return response


def _client_factory() -> httpx2.Client:
    return httpx2.Client(
        transport=_FailFastTransport(),
        event_hooks={"request": [hf_request_event_hook]},
        follow_redirects=True,
        timeout=httpx2.Timeout(20.0, connect=10.0),
    )


class HubStore(Store):
    """Objects in the bucket `owner/name`."""

    def __init__(self, bucket_id: str, *, budget: Budget) -> None:
        self.bucket_id = bucket_id
        self.uri = "hf://buckets/" + bucket_id
        self.budget = budget
        _configure()
        # the endpoint is read when the store is opened, like every other setting, not when the SDK was imported
        self.endpoint = (os.environ.get("HF_ENDPOINT") or huggingface_hub.constants.ENDPOINT).rstrip("/")
        self.silent = False  # a request of this command got no answer: the next ones wait SILENT_SECONDS at most
        self.down: StoreError | None = None  # a second one did not either: every later call fails with this at once

    @functools.cached_property
    def api(self) -> huggingface_hub.HfApi:
        """The SDK's client, made when first used: a refresh with nothing new needs only its HTTP session, and
        loading `HfApi` costs about a third of that refresh."""
        return huggingface_hub.HfApi(endpoint=self.endpoint)

    def close(self) -> None:
        """Give the SDK back its own HTTP client (a process that goes on may use the SDK itself, or another Hub)."""
        set_client_factory(default_client_factory)

    def _call(self, fn: Callable[[], Result], *, cap: float | None = None) -> Result:
        """`fn` within the budget (and `cap` seconds, if given); a lasting failure is remembered (`outage`), as is
        a success, which ends any outage."""
        if self.down is not None:
            raise _lasting(StoreError(self.down.reason, self.down.detail))
        if self.silent:
            cap = min(cap or SILENT_SECONDS, SILENT_SECONDS)
        try:
            found = _within(self.budget, fn, cap, ask=self._ask if cap is None else None)
        except Exception as exc:
            error = self._classify(exc)
            if _judged(exc):
                self._failed(error, silent=_no_answer(exc))
            if isinstance(exc, DeadlineExceeded) and exc.twice:
                self.down = error  # the call and one more request went unanswered: as after two silent requests
            raise error from exc
        self.answered()
        return found

    def _ask(self, seconds: float) -> None:
        """One small request to the Hub, for `_within` to hear whether it answers at all within `seconds`: the
        bucket's info (whoami for the store that has no bucket). Whatever it answers, or fails with, only its
        headers count."""
        request = (lambda: self.api.bucket_info(self.bucket_id)) if self.bucket_id else self.api.whoami
        with contextlib.suppress(Exception):  # unanswered (abandoned like any call), refused or failing alike
            _within(self.budget, request, seconds)

    def answered(self) -> None:
        """The Hub answered: it is not silent, and not in an outage."""
        self.silent = False
        outage.ended()

    def _failed(self, error: StoreError, *, silent: bool) -> None:
        """Remember a failure: a lasting one as an outage; a second request without an answer as the Hub down. Any
        other failure is the Hub's answer (a refusal, a missing bucket): it is reachable, so no outage goes on."""
        if silent and self.silent:
            self.down = error
        self.silent = self.silent or silent
        if error.lasting:
            outage.failed(self.uri, error)
        elif not silent:
            outage.ended()

    def _classify(self, exc: Exception) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        if isinstance(exc, DeadlineExceeded):
            if not exc.judged:
                return StoreError("offline", str(exc))
            return _lasting(StoreError("offline", f"the Hub did not answer in time ({exc})"))
        if isinstance(exc, _Unreachable):
            return _lasting(StoreError("offline", str(exc)))
        if isinstance(exc, _ServerAnswer):
            return _lasting(StoreError("error", str(exc)))
        if isinstance(exc, hf_errors.OfflineModeIsEnabled):
            return StoreError("offline", "HF_HUB_OFFLINE is set")
        if isinstance(exc, hf_errors.LocalTokenNotFoundError):
            return StoreError("auth", "no Hugging Face credentials on this machine")
        if isinstance(exc, hf_errors.BucketNotFoundError):
            return StoreError("auth", f"bucket {self.bucket_id} not found, or this token cannot access it")
        if isinstance(exc, hf_errors.HfHubHTTPError) and exc.response is not None:
            status = exc.response.status_code
            reason = "auth" if status in (401, 403) else "error"
            return StoreError(reason, f"the Hub refused the request ({status}): {_first_line(exc)}")
        if isinstance(exc, ConnectionError):
            # hf_xet reports refused tokens (401/403) and an unreachable Hub alike: ask the Hub which it is
            return self._probe(exc)
        return StoreError("error", f"{type(exc).__name__}: {_first_line(exc)}")

    def _probe(self, original: Exception) -> StoreError:
        try:
            _within(self.budget, lambda: self.api.bucket_info(self.bucket_id), SILENT_SECONDS if self.silent else None)
        except Exception as exc:
            if not isinstance(exc, ConnectionError):
                return self._classify(exc)
        return StoreError("error", f"the transfer of files failed: {_first_line(original)}")  # up or down

    # -- the Store interface -------------------------------------------------------------------------

    def put(self, path: str, data: bytes) -> None:
        """Upload `data` to `path`. The Hub cannot refuse an overwrite: callers pass fresh paths or check holds()."""
        self.put_many([(path, data)])

    def put_many(self, objects: list[tuple[str, bytes]]) -> None:
        add: builtins.list[tuple[str | Path | bytes, str]] = [(data, path) for path, data in objects]
        self._call(lambda: self.api.batch_bucket_files(self.bucket_id, add=add))

    def list(self, prefix: str) -> Listing:
        folder = prefix.strip("/")

        def listing() -> list[ObjectInfo]:
            entries: list[object] = []
            try:
                entries.extend(self.api.list_bucket_tree(self.bucket_id, prefix=folder, recursive=True))
            except hf_errors.RemoteEntryNotFoundError:
                if entries:  # a later page vanished: the listing is partial, never treat it as complete
                    raise
                return []  # a folder nobody has written to yet
            # the Hub matches the prefix as text ("notes" also lists "notes2/"), and recursive listings
            # include folder entries (BucketFolder): keep only the files inside the folder
            return [
                ObjectInfo(entry.path, entry.size, ref=entry, hash=entry.xet_hash)
                for entry in entries
                if isinstance(entry, huggingface_hub.BucketFile) and entry.path.startswith(folder + "/")
            ]

        return Listing(sorted(self._call(listing), key=lambda info: info.path))  # a bucket holds no links

    def fetch(self, objects: builtins.list[ObjectInfo], dest: Path) -> None:
        if objects:
            files: builtins.list[tuple[str | huggingface_hub.BucketFile, str | Path]]
            files = [(self._remote(info), dest / info.path) for info in objects]
            self._call(lambda: self.api.download_bucket_files(self.bucket_id, files, raise_on_missing_files=True))

    @staticmethod
    def _remote(info: ObjectInfo) -> huggingface_hub.BucketFile | str:
        """What the SDK downloads: the listing's entry; for a change told by the feed, an entry made from its size
        and hash (which saves the SDK a lookup); else the path, which it looks up."""
        if isinstance(info.ref, huggingface_hub.BucketFile):  # (the only entries this store lists)
            return info.ref
        if info.hash is not None:
            return huggingface_hub.BucketFile(type="file", path=info.path, size=info.size, xetHash=info.hash)  # type: ignore[no-untyped-call]  # a dataclass the SDK declares without types
        return info.path

    def changes(self, cursor: str | None, prefix: str) -> change_feed.Replay:
        if NO_FEED is not None:
            raise change_feed.Unfollowable("unsupported", NO_FEED)
        # a feed that hangs must leave time for the listing that replaces it
        deadline = time.monotonic() + min(FEED_SECONDS, self.budget.remaining() / 2)
        url = f"{self.endpoint}/api/buckets/{self.bucket_id}/events"

        if self.down is not None:
            raise change_feed.Unfollowable("slow", self.down.detail)
        silence = []  # the feed got no answer at all: the Hub is in doubt (see SILENT_SECONDS)

        def open_stream(params: dict[str, str]) -> Generator[bytes, None, None]:
            wait = min(max(0.1, deadline - time.monotonic()), SILENT_SECONDS)  # between any two bytes of the answer
            headers = {**build_hf_headers(), "accept": "text/event-stream"}  # the SDK's own credentials
            answered = False
            try:
                with get_session().stream(
                    "GET", url, headers=headers, params=params, timeout=httpx2.Timeout(wait, connect=wait)
                ) as response:
                    answered = True
                    status = response.status_code
                    # 401/403/404/501 (the SDK's BucketEventsUnavailable), 400 (a refused cursor), a failing feed
                    if status >= 400:
                        reason = "refused" if status == 400 else "unavailable"
                        raise change_feed.Unfollowable(reason, f"the change feed answered {status}")
                    if not response.headers.get("content-type", "").startswith("text/event-stream"):
                        raise change_feed.Unfollowable("unavailable", "the change feed answered something else")
                    yield from response.iter_bytes()
            except _ServerAnswer as exc:  # 501 (not served here) or a failing feed: the listing decides
                raise change_feed.Unfollowable("unavailable", str(exc)) from None
            except _Unreachable as exc:  # timed out (or refused): the listing has the rest of the budget to try
                if exc.silent and not answered:
                    silence.append(f"no answer within {wait:.3g} s")
                raise change_feed.Unfollowable("slow", str(exc)) from None
            except httpx2.TimeoutException:
                if not answered:
                    silence.append(f"no answer within {wait:.3g} s")
                raise change_feed.Unfollowable("slow", "the change feed did not get ready in time") from None
            except httpx2.HTTPError as exc:  # cut in the middle: as if it had ended
                raise change_feed.Unfollowable("ended", f"the change feed broke off ({type(exc).__name__})") from None

        try:
            replay = _within(
                self.budget, lambda: change_feed.head_or_changes(open_stream, cursor, prefix, deadline=deadline)
            )
        except change_feed.Unfollowable:
            if not silence:
                self.answered()
            else:
                error = StoreError("offline", f"the Hub did not answer ({silence[0]})")
                error.lasting = self.silent  # a first silence is no outage yet: the listing that follows decides
                self._failed(error, silent=True)
            raise
        except AttributeError as exc:  # an SDK whose session lacks what is used above: list, as before
            detail = f"this huggingface_hub cannot read the feed ({exc})"
            raise change_feed.Unfollowable("unsupported", detail) from None
        except Exception as exc:
            error = self._classify(exc)
            if _judged(exc):
                self._failed(error, silent=_no_answer(exc))
            raise error from exc
        self.answered()
        return replay

    def updated_at(self) -> str | None:
        # like the feed, the one request of a refresh with nothing new: a Hub that is silent this long is down
        info = self._call(lambda: self.api.bucket_info(self.bucket_id), cap=FEED_SECONDS)
        value = getattr(info, "updatedAt", None)  # a field BucketInfo keeps as the Hub spells it
        return value if isinstance(value, str) and 0 < len(value) <= 100 else None

    def _stat(self, path: str) -> huggingface_hub.BucketFile | None:
        found = self._call(lambda: list(self.api.get_bucket_paths_info(self.bucket_id, [path])))
        return found[0] if found else None

    def holds(self, path: str, data: bytes) -> bool:
        remote = self._stat(path)
        if remote is None:
            return False
        if remote.size != len(data) or remote.xet_hash != _xet_hash(data):
            raise ObjectConflict(path)
        return True

    def hashes(self, files: builtins.list[Path]) -> builtins.list[str | None]:
        if not files:
            return []
        return [info.hash for info in hf_xet.hash_files([str(file) for file in files])]

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        remote = self._stat(path)
        if remote is None:
            return None
        if limit is not None and remote.size > limit:
            raise oversized(self, path, remote.size, limit)
        with tempfile.TemporaryDirectory(prefix="agent-memory-read-") as tmp:
            self.fetch([ObjectInfo(path, remote.size, ref=remote)], Path(tmp))
            return (Path(tmp) / path).read_bytes()

    def ensure(self, *, create: bool) -> bool:
        try:
            info = self._call(lambda: self.api.bucket_info(self.bucket_id))
        except StoreError as exc:
            if not isinstance(exc.__cause__, hf_errors.BucketNotFoundError):
                raise
            if not create:
                raise BucketMissing(self.uri) from None
            self._call(lambda: self.api.create_bucket(self.bucket_id, private=True))
            return True
        if not info.private:
            raise BucketPublic(self.uri)
        return False


def _configure() -> None:
    """Set up the SDK for agent-memory, once a Hub store is opened (never at import): our HTTP client (no retries of
    its own, timeouts), no progress bars or telemetry, and hf_xet's quick retries."""
    for name, value in XET_SETTINGS.items():
        os.environ.setdefault(name, value)
    disable_progress_bars()
    huggingface_hub.constants.HF_HUB_DISABLE_TELEMETRY = True
    set_client_factory(_client_factory)  # our transport, whoever set one before us


def _within(
    budget: Budget, fn: Callable[[], Result], cap: float | None = None, *, ask: Callable[[float], None] | None = None
) -> Result:
    """`budget.within`, hearing the Hub by the responses this process got (`_ANSWERS`)."""
    return within(budget, fn, cap, ask=ask, heard=_ANSWERS.count)


def whoami(budget: Budget) -> str:
    """The user name behind the local credentials; StoreError `auth` if there are none or they are refused."""
    store = HubStore("", budget=budget)
    try:
        name: str = store._call(lambda: store.api.whoami())["name"]
        return name
    except StoreError as exc:
        if exc.reason == "auth":
            raise NoCredentials(exc.detail) from exc
        raise


def _judged(exc: BaseException) -> bool:
    """Whether a failed call tells something of the Hub: all do but a call left too little time (see `_within`)."""
    return not (isinstance(exc, DeadlineExceeded) and not exc.judged)


def _no_answer(exc: BaseException) -> bool:
    """Whether a call failed for want of any answer (the budget ran out, or a read timed out)."""
    return isinstance(exc, DeadlineExceeded) or (isinstance(exc, _Unreachable) and exc.silent)


def _lasting(error: StoreError) -> StoreError:
    error.lasting = True
    return error


def _xet_hash(data: bytes) -> str:
    with tempfile.NamedTemporaryFile(prefix="agent-memory-hash-") as handle:
        handle.write(data)
        handle.flush()
        found: str = hf_xet.hash_files([handle.name])[0].hash  # (hf_xet ships no types)
        return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact(text[0] if text else type(exc).__name__)[:300]
