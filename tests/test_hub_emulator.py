"""Tests of the Hub emulator, driven by the real huggingface_hub + hf_xet (no mocks)."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import httpx2  # noqa: E402 - the HTTP library huggingface_hub 2.4 uses
import pytest  # noqa: E402
from huggingface_hub import HfApi, set_client_factory  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    BucketBatchError,
    BucketNotFoundError,
    EntryNotFoundError,
    HfHubHTTPError,
)
from huggingface_hub.utils import disable_progress_bars  # noqa: E402
from huggingface_hub.utils._http import default_client_factory  # noqa: E402

import tools  # noqa: E402
from hub_emulator import HubEmulator, parse_shard_file_sizes, xet_hash_hex  # noqa: E402

EMULATOR_SCRIPT = Path(__file__).parent / "hub_emulator.py"
ALICE, ALICE_READ, BOB, BAD = "alice-write-token", "alice-read-token", "bob-write-token", "not-a-known-token"


@pytest.fixture(autouse=True)
def isolated_hf_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep every SDK and hf_xet cache inside tmp_path and away from real credentials."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_XET_CACHE", str(tmp_path / "xet-cache"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # for subprocesses; this process read it at import
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with disable_progress_bars():
        yield


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubEmulator]:
    """A running emulator with alice (write + read tokens, member of org "team") and bob."""
    emulator = HubEmulator(tmp_path / "hub").start()
    emulator.add_user("alice", ALICE, orgs=["team"])
    emulator.add_user("alice", ALICE_READ, role="read")
    emulator.add_user("bob", BOB)
    yield emulator
    emulator.stop()


@pytest.fixture
def short_client_timeout() -> Iterator[None]:
    """Make the SDK's shared HTTP client give up after 1 s instead of waiting forever."""
    set_client_factory(lambda: httpx2.Client(timeout=1, follow_redirects=True))
    yield
    set_client_factory(default_client_factory)


def api(hub: HubEmulator, token: str | bool = ALICE) -> HfApi:
    return HfApi(endpoint=hub.url, token=token)


def endpoints(hub: HubEmulator) -> list[str]:
    return [endpoint for _, endpoint, _ in hub.requests]


# -- 1. buckets ------------------------------------------------------------------------------------------------


def test_create_private_and_public_buckets(hub: HubEmulator) -> None:
    url = api(hub).create_bucket("notes", private=True)  # no namespace: the SDK sends "me"
    assert url.bucket_id == "alice/notes"
    api(hub).create_bucket("alice/open", private=False)
    api(hub).create_bucket("team/shared", visibility="private")  # alice is a member of "team"

    assert hub.is_private("alice/notes") and not hub.is_private("alice/open") and hub.is_private("team/shared")
    info = api(hub).bucket_info("alice/notes")
    assert (info.id, info.private, info.total_files, info.size) == ("alice/notes", True, 0, 0)
    assert api(hub).bucket_info("alice/open").private is False

    hub.put_files("alice/notes", {"a.md": b"12345", "b/c.md": b"678"})
    info = api(hub).bucket_info("alice/notes")
    assert (info.total_files, info.size) == (2, 8)


def test_create_existing_bucket_conflicts_unless_exist_ok(hub: HubEmulator) -> None:
    api(hub).create_bucket("alice/notes", private=True)
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub).create_bucket("alice/notes", private=True)
    assert excinfo.value.response.status_code == 409
    assert api(hub).create_bucket("alice/notes", private=True, exist_ok=True).bucket_id == "alice/notes"


def test_create_in_someone_elses_namespace_is_refused(hub: HubEmulator) -> None:
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub).create_bucket("bob/stolen", private=True)
    assert excinfo.value.response.status_code == 403
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub, ALICE_READ).create_bucket("alice/readonly", private=True)
    assert excinfo.value.response.status_code == 403
    assert not hub.bucket_exists("bob/stolen") and not hub.bucket_exists("alice/readonly")


# -- 2. upload, list, metadata, download --------------------------------------------------------------------------


@pytest.mark.parametrize("size", [200, 3_000_000], ids=["small", "3MB"])
def test_upload_list_and_download_roundtrip(hub: HubEmulator, tmp_path: Path, size: int) -> None:
    hub.create_bucket("alice/notes")
    from_bytes, from_file = os.urandom(size), os.urandom(size)
    source = tmp_path / "source.md"
    source.write_bytes(from_file)

    api(hub).batch_bucket_files("alice/notes", add=[(from_bytes, "notes/a.md"), (str(source), "notes/deep/b.md")])

    tree = list(api(hub).list_bucket_tree("alice/notes", recursive=True))
    files = {item.path: item for item in tree if item.type == "file"}
    folders = {item.path for item in tree if item.type == "directory"}
    assert folders == {"notes", "notes/deep"}
    assert {path: f.size for path, f in files.items()} == {"notes/a.md": size, "notes/deep/b.md": size}
    assert all(f.mtime is not None and f.uploaded_at is not None for f in files.values())

    infos = list(api(hub).get_bucket_paths_info("alice/notes", ["notes/a.md", "missing.md"]))
    assert [(i.path, i.size, i.xet_hash) for i in infos] == [("notes/a.md", size, files["notes/a.md"].xet_hash)]

    metadata = api(hub).get_bucket_file_metadata("alice/notes", "notes/deep/b.md")
    assert metadata.size == size
    assert metadata.xet_file_data.file_hash == files["notes/deep/b.md"].xet_hash
    assert metadata.xet_file_data.refresh_route == f"{hub.url}/api/buckets/alice/notes/xet-read-token"

    out = tmp_path / "out"
    api(hub).download_bucket_files("alice/notes", [("notes/a.md", out / "a.md"), ("notes/deep/b.md", out / "b.md")])
    assert (out / "a.md").read_bytes() == from_bytes and (out / "b.md").read_bytes() == from_file
    assert hub.read_file("alice/notes", "notes/deep/b.md") == from_file
    assert hub.file_info("alice/notes", "notes/a.md")["contentType"] == "text/markdown"


def test_empty_file_roundtrip(hub: HubEmulator, tmp_path: Path) -> None:
    hub.create_bucket("alice/notes")
    api(hub).batch_bucket_files("alice/notes", add=[(b"", "empty.md")])
    assert hub.file_info("alice/notes", "empty.md")["size"] == 0
    api(hub).download_bucket_files("alice/notes", [("empty.md", tmp_path / "empty.md")])
    assert (tmp_path / "empty.md").read_bytes() == b""


def test_tree_prefix_is_a_folder_and_non_recursive_lists_children(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_files(
        "alice/notes",
        {
            "top.md": b"t",
            "projects/demo/notes/a.md": b"a",
            "projects/demo/b.md": b"b",
            "projects/demo2/c.md": b"c",
            "projects/other.md": b"o",
        },
    )
    recursive = list(api(hub).list_bucket_tree("alice/notes", prefix="projects/demo", recursive=True))
    assert [(i.type, i.path) for i in recursive] == [
        ("file", "projects/demo/b.md"),
        ("directory", "projects/demo/notes"),
        ("file", "projects/demo/notes/a.md"),
    ]
    assert ("GET", "tree", "/api/buckets/alice/notes/tree/projects%2Fdemo?recursive=true") in hub.requests

    children = list(api(hub).list_bucket_tree("alice/notes", prefix="projects"))
    assert [(i.type, i.path) for i in children] == [
        ("directory", "projects/demo"),
        ("directory", "projects/demo2"),
        ("file", "projects/other.md"),
    ]
    root = list(api(hub).list_bucket_tree("alice/notes", recursive=False))
    assert [(i.type, i.path) for i in root] == [("directory", "projects"), ("file", "top.md")]
    assert [i.path for i in api(hub).list_bucket_tree("alice/notes", prefix="top.md")] == ["top.md"]


def test_resolve_serves_bytes_and_reports_missing_entries(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "dir/a b.md", b"spaced name")
    response = httpx2.get(
        f"{hub.url}/buckets/alice/notes/resolve/dir%2Fa%20b.md", headers={"Authorization": f"Bearer {ALICE}"}
    )
    assert (response.status_code, response.content) == (200, b"spaced name")
    assert response.headers["X-Linked-Size"] == "11"
    with pytest.raises(EntryNotFoundError):
        api(hub).get_bucket_file_metadata("alice/notes", "missing.md")


# -- 3. pagination ---------------------------------------------------------------------------------------------


def test_tree_pagination_and_failing_second_page(tmp_path: Path) -> None:
    with HubEmulator(tmp_path / "hub", page_size=3) as hub:
        hub.add_user("alice", ALICE)
        hub.create_bucket("alice/notes")
        hub.put_files("alice/notes", {f"n{i:02d}.md": f"note {i}".encode() for i in range(10)})

        paths = [item.path for item in api(hub).list_bucket_tree("alice/notes", recursive=True)]
        assert paths == [f"n{i:02d}.md" for i in range(10)]
        assert endpoints(hub).count("tree") == 4  # 3 + 3 + 3 + 1
        assert "cursor=" in hub.requests[-1][2]

        # 403 is not retried by the SDK, so the failing second page raises at once
        hub.reset_requests()
        hub.fault("tree", "fail", status=403, after=1)
        with pytest.raises(HfHubHTTPError) as excinfo:
            list(api(hub).list_bucket_tree("alice/notes", recursive=True))
        assert excinfo.value.response.status_code == 403
        assert endpoints(hub) == ["tree", "tree"]


# -- 4. concurrency and fresh read tokens -----------------------------------------------------------------------

UPLOAD_SCRIPT = """
import sys
from huggingface_hub import HfApi
endpoint, token, source, destination = sys.argv[1:5]
HfApi(endpoint=endpoint, token=token).batch_bucket_files("alice/notes", add=[(source, destination)])
"""


@pytest.mark.slow
def test_twenty_concurrent_upload_processes(hub: HubEmulator, tmp_path: Path) -> None:
    hub.create_bucket("alice/notes")
    script = tmp_path / "upload.py"
    script.write_text(UPLOAD_SCRIPT)
    payloads = {f"proc/{i:02d}.md": f"note from process {i}\n".encode() * (50 * (i + 1)) for i in range(20)}

    started = time.monotonic()
    processes = []
    for index, (destination, data) in enumerate(payloads.items()):
        workdir = tmp_path / f"proc{index}"
        workdir.mkdir()
        (workdir / "note.md").write_bytes(data)
        env = {**os.environ, "HOME": str(workdir), "HF_HOME": str(workdir / "hf"), "HF_XET_CACHE": str(workdir / "xet")}
        command = [sys.executable, str(script), hub.url, ALICE, str(workdir / "note.md"), destination]
        processes.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outputs = [process.communicate(timeout=120)[0].decode() for process in processes]
    print(f"20 concurrent upload processes: {time.monotonic() - started:.1f} s")
    assert [p.returncode for p in processes] == [0] * 20, outputs

    assert hub.list_paths("alice/notes") == sorted(payloads)
    assert all(hub.read_file("alice/notes", path) == data for path, data in payloads.items())
    assert endpoints(hub).count("xet-write-token") == 20

    out = tmp_path / "out"
    api(hub).download_bucket_files("alice/notes", [(path, out / path) for path in payloads])
    assert all((out / path).read_bytes() == data for path, data in payloads.items())


def test_second_download_in_same_process_sees_newer_upload(hub: HubEmulator, tmp_path: Path) -> None:
    # Measured: hf_xet asks for a new read token for every download group, so each download gets a
    # fresh snapshot of the master CAS even though the previous token has not expired.
    hub.create_bucket("alice/notes")
    api(hub).batch_bucket_files("alice/notes", add=[(b"first\n", "first.md")])
    api(hub).download_bucket_files("alice/notes", [("first.md", tmp_path / "first.md")])
    api(hub).batch_bucket_files("alice/notes", add=[(b"second\n", "second.md")])
    api(hub).download_bucket_files("alice/notes", [("first.md", tmp_path / "1.md"), ("second.md", tmp_path / "2.md")])
    assert (tmp_path / "1.md").read_bytes() == b"first\n" and (tmp_path / "2.md").read_bytes() == b"second\n"
    assert endpoints(hub).count("xet-read-token") == 2


# -- 5. authorization ------------------------------------------------------------------------------------------


def test_private_bucket_of_another_user_is_not_found(hub: HubEmulator) -> None:
    hub.create_bucket("alice/secret")
    hub.put_file("alice/secret", "a.md", b"secret")
    with pytest.raises(BucketNotFoundError):
        api(hub, BOB).bucket_info("alice/secret")
    with pytest.raises(BucketNotFoundError):
        list(api(hub, BOB).list_bucket_tree("alice/secret"))
    with pytest.raises(BucketNotFoundError):
        api(hub, BOB).batch_bucket_files("alice/secret", delete=["a.md"])
    with pytest.raises(ConnectionError):  # hf_xet reports the refused write token as a ConnectionError
        api(hub, BOB).batch_bucket_files("alice/secret", add=[(b"x", "b.md")])
    with pytest.raises(BucketNotFoundError):  # anonymous: 401 + RepoNotFound
        api(hub, False).bucket_info("alice/secret")
    assert hub.list_paths("alice/secret") == ["a.md"]


def test_invalid_token_is_401(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub, BAD).bucket_info("alice/notes")
    assert excinfo.value.response.status_code == 401
    assert excinfo.value.response.headers["X-Error-Message"] == "Invalid credentials in Authorization header"
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub, BAD).whoami()
    assert excinfo.value.response.status_code == 401


def test_whoami_reports_user_orgs_and_role(hub: HubEmulator) -> None:
    me = api(hub).whoami()
    assert (me["type"], me["name"], [o["name"] for o in me["orgs"]]) == ("user", "alice", ["team"])
    assert me["auth"]["accessToken"]["role"] == "write"
    assert api(hub, ALICE_READ).whoami()["auth"]["accessToken"]["role"] == "read"


def test_read_role_token_cannot_write(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "a.md", b"a")
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub, ALICE_READ).batch_bucket_files("alice/notes", delete=["a.md"])
    assert excinfo.value.response.status_code == 403
    with pytest.raises(ConnectionError):
        api(hub, ALICE_READ).batch_bucket_files("alice/notes", add=[(b"b", "b.md")])
    assert [i.path for i in api(hub, ALICE_READ).list_bucket_tree("alice/notes")] == ["a.md"]
    assert hub.list_paths("alice/notes") == ["a.md"]


def test_public_bucket_is_readable_by_others_but_not_writable(hub: HubEmulator, tmp_path: Path) -> None:
    hub.create_bucket("alice/open", private=False)
    hub.put_file("alice/open", "a.md", b"public words")
    assert api(hub, BOB).bucket_info("alice/open").private is False
    assert [i.path for i in api(hub, False).list_bucket_tree("alice/open")] == ["a.md"]
    api(hub, BOB).download_bucket_files("alice/open", [("a.md", tmp_path / "a.md")])
    assert (tmp_path / "a.md").read_bytes() == b"public words"
    api(hub, False).download_bucket_files("alice/open", [("a.md", tmp_path / "anonymous.md")])
    assert (tmp_path / "anonymous.md").read_bytes() == b"public words"
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub, BOB).batch_bucket_files("alice/open", delete=["a.md"])
    assert excinfo.value.response.status_code == 403


def test_batch_reports_per_operation_failures(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "a.md", b"copy me")
    known = hub.file_info("alice/notes", "a.md")["xetHash"]
    # server-side copy of stored content works; an unknown hash is listed in "failed"
    api(hub).batch_bucket_files("alice/notes", copy=[("bucket", "alice/notes", known, "copy.md")])
    assert hub.read_file("alice/notes", "copy.md") == b"copy me"
    with pytest.raises(BucketBatchError) as excinfo:
        api(hub).batch_bucket_files("alice/notes", copy=[("bucket", "alice/notes", "ab" * 32, "ghost.md")])
    assert [f["path"] for f in excinfo.value.failures] == ["ghost.md"]

    # an addFile whose bytes were never uploaded to any CAS handed out
    body = b'{"type": "addFile", "path": "nowhere.md", "xetHash": "' + b"cd" * 32 + b'", "mtime": 0}\n'
    url, headers = f"{hub.url}/api/buckets/alice/notes/batch", {"Authorization": f"Bearer {ALICE}"}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    with pytest.raises(urllib.error.HTTPError) as http_error:
        urllib.request.urlopen(request, timeout=10)
    assert http_error.value.code == 422 and b"nowhere.md" in http_error.value.read()
    assert hub.list_paths("alice/notes") == ["a.md", "copy.md"]


def test_unknown_routes_are_404_other(hub: HubEmulator) -> None:
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(f"{hub.url}/api/models/x/y", timeout=10)
    assert excinfo.value.code == 404
    assert hub.requests[-1] == ("GET", "other", "/api/models/x/y")


# -- 6. faults -------------------------------------------------------------------------------------------------


def test_fail_on_batch_leaves_no_file(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("batch", "fail", status=400)
    with pytest.raises(HfHubHTTPError) as excinfo:
        api(hub).batch_bucket_files("alice/notes", add=[(b"lost", "a.md")])
    assert excinfo.value.response.status_code == 400
    assert hub.list_paths("alice/notes") == []


def test_one_5xx_on_batch_is_retried_by_the_sdk(hub: HubEmulator) -> None:
    # The SDK retries 5xx after 1 s, so a single failure is invisible to the caller.
    hub.create_bucket("alice/notes")
    hub.fault("batch", "fail", status=503, times=1)
    api(hub).batch_bucket_files("alice/notes", add=[(b"kept", "a.md")])
    assert endpoints(hub).count("batch") == 2
    assert hub.file_info("alice/notes", "a.md")["writes"] == 1


def test_apply_then_fail_applies_but_the_call_raises(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("batch", "apply-then-fail", status=409)
    with pytest.raises(HfHubHTTPError):
        api(hub).batch_bucket_files("alice/notes", add=[(b"landed anyway", "a.md")])
    assert hub.read_file("alice/notes", "a.md") == b"landed anyway"
    assert hub.file_info("alice/notes", "a.md")["writes"] == 1


def test_apply_then_5xx_is_retried_and_written_twice(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("batch", "apply-then-fail", status=502)
    api(hub).batch_bucket_files("alice/notes", add=[(b"twice", "a.md")])
    assert hub.file_info("alice/notes", "a.md")["writes"] == 2  # the SDK's retry re-applied the batch


@pytest.mark.usefixtures("short_client_timeout")
@pytest.mark.parametrize("mode", ["apply-then-drop", "apply-then-hang"])
def test_apply_then_lost_answer_is_retried_and_written_twice(hub: HubEmulator, mode: str) -> None:
    # No answer at all (dropped, or hung past the 1 s client timeout): the SDK retries the whole batch.
    hub.create_bucket("alice/notes")
    hub.fault("batch", mode, seconds=30)
    api(hub).batch_bucket_files("alice/notes", add=[(b"again", "a.md")])
    assert endpoints(hub).count("batch") == 2
    assert hub.file_info("alice/notes", "a.md")["writes"] == 2


@pytest.mark.usefixtures("short_client_timeout")
def test_hang_times_out_the_client(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("info", "hang", seconds=30)
    started = time.monotonic()
    with pytest.raises(httpx2.TimeoutException):
        api(hub).bucket_info("alice/notes")  # bucket_info does not retry
    assert time.monotonic() - started < tools.scaled(10)  # the emulator hangs for 30 s
    assert api(hub).bucket_info("alice/notes").id == "alice/notes"  # times=1: the next call is answered


def test_stop_releases_hung_requests(hub: HubEmulator) -> None:
    hub.fault("whoami", "hang", seconds=60)
    outcome: dict[str, BaseException] = {}

    def call() -> None:
        try:
            urllib.request.urlopen(f"{hub.url}/api/whoami-v2", timeout=60)
        except BaseException as err:  # noqa: BLE001 - recorded for the assertion below
            outcome["error"] = err

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 10
    while "whoami" not in endpoints(hub) and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    hub.stop()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < tools.scaled(5)  # the request hangs for 60 s
    assert isinstance(outcome["error"], (http.client.RemoteDisconnected, ConnectionError))


def test_drop_closes_the_connection(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("info", "drop")
    with pytest.raises(httpx2.RemoteProtocolError):
        api(hub).bucket_info("alice/notes")
    # listing goes through the SDK's retry helper: one dropped page costs a 1 s retry, not a failure
    hub.fault("tree", "drop")
    assert list(api(hub).list_bucket_tree("alice/notes")) == []
    assert endpoints(hub).count("tree") == 2


def test_refused_write_token_fails_the_upload(hub: HubEmulator) -> None:
    # hf_xet fetches the token itself and reports a 4xx answer as a plain ConnectionError, at once.
    # (A 5xx answer is retried by hf_xet for ~170 s, so tests should inject 4xx here.)
    hub.create_bucket("alice/notes")
    hub.fault("xet-write-token", "fail", status=403)
    with pytest.raises(ConnectionError):
        api(hub).batch_bucket_files("alice/notes", add=[(b"never", "a.md")])
    assert hub.list_paths("alice/notes") == []
    assert "batch" not in endpoints(hub)


def test_fault_after_and_times_counting(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.fault("info", "fail", status=404, after=1, times=2)
    outcomes = []
    for _ in range(4):
        try:
            api(hub).bucket_info("alice/notes")
            outcomes.append("ok")
        except HfHubHTTPError as err:
            outcomes.append(err.response.status_code)
    assert outcomes == ["ok", 404, 404, "ok"]

    hub.fault("whoami", "fail", status=401, times=0)  # forever, until cleared
    for _ in range(3):
        with pytest.raises(HfHubHTTPError):
            api(hub).whoami(cache=False)
    hub.clear_faults()
    assert api(hub).whoami(cache=False)["name"] == "alice"


def test_fault_rejects_unknown_names(hub: HubEmulator) -> None:
    with pytest.raises(ValueError):
        hub.fault("nope", "fail")
    with pytest.raises(ValueError):
        hub.fault("tree", "apply-then-fail")


# -- 7. seeding ------------------------------------------------------------------------------------------------


def test_put_files_is_fast_and_readable(hub: HubEmulator, tmp_path: Path) -> None:
    hub.create_bucket("alice/bulk")
    files = {f"notes/{i // 100:02d}/{i:04d}.md": f"# Note {i}\n\nbody {i}\n".encode() for i in range(2000)}
    started = time.monotonic()
    hub.put_files("alice/bulk", files)
    elapsed = time.monotonic() - started
    print(f"put_files(2000 files): {elapsed:.2f} s")
    assert elapsed < tools.scaled(10)
    assert hub.list_paths("alice/bulk") == sorted(files)
    assert hub.read_file("alice/bulk", "notes/07/0777.md") == files["notes/07/0777.md"]
    assert api(hub).bucket_info("alice/bulk").total_files == 2000

    picked = ["notes/00/0000.md", "notes/10/1000.md", "notes/19/1999.md"]
    api(hub).download_bucket_files("alice/bulk", [(path, tmp_path / path) for path in picked])
    assert all((tmp_path / path).read_bytes() == files[path] for path in picked)


def test_writes_counts_overwrites(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "a.md", b"v1")
    hub.put_file("alice/notes", "a.md", b"v2")
    assert hub.file_info("alice/notes", "a.md")["writes"] == 2
    api(hub).batch_bucket_files("alice/notes", add=[(b"v3", "a.md")])
    info = hub.file_info("alice/notes", "a.md")
    assert (info["writes"], info["size"]) == (3, 2)
    assert hub.read_file("alice/notes", "a.md") == b"v3"
    api(hub).batch_bucket_files("alice/notes", delete=["a.md"])
    assert hub.list_paths("alice/notes") == []


def test_shard_parser_matches_uploaded_sizes(hub: HubEmulator) -> None:
    assert xet_hash_hex(bytes.fromhex("17456c0878073d7e") + bytes(24)).startswith("7e3d0778086c4517")
    hub.create_bucket("alice/notes")
    hub.put_files("alice/notes", {"a.md": b"abc", "b.md": os.urandom(70_000)})
    found: dict[str, int] = {}
    for shard in (hub.root / "master").glob("xet/xorbs/shards/*.mdb"):
        found.update(parse_shard_file_sizes(shard.read_bytes()))
    for path in ("a.md", "b.md"):
        info = hub.file_info("alice/notes", path)
        assert found[info["xetHash"]] == info["size"]


# -- 8. command line -------------------------------------------------------------------------------------------


def test_command_line_serves_until_sigterm(tmp_path: Path) -> None:
    command = [sys.executable, str(EMULATOR_SCRIPT), "--root", str(tmp_path / "cli"), "--user", "u", "--token", "t"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert HfApi(endpoint=url, token="t").whoami()["name"] == "u"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert process.stderr.read() == ""
    finally:
        process.kill()
        process.wait()


# -- 6. updatedAt and the change feed, read by the SDK's own live-follow client ----------------------------------

# huggingface_hub 2.4.0's client for the feed (private: the emulator must speak exactly what it parses)
from huggingface_hub import _bucket_live_follow as live  # noqa: E402


def _session(hub: HubEmulator, resume: tuple[str, str] | None, token: str = ALICE, stop_at_ready: bool = True) -> list:
    """The events of one session of the SDK's `_follow_events`, up to `ready` (or until the stream ends)."""
    events = []
    for event in live._follow_events(hub.url, "alice/notes", token, resume, lambda: False):
        events.append(event)
        if stop_at_ready and isinstance(event, (live._Ready, live._Reset)):
            break
    return events


def _changes(events: list) -> list[tuple[str, str, int | None]]:
    return [(c.path, c.op, c.size) for e in events if isinstance(e, live._Changes) for c in e.changes]


def test_updated_at_changes_with_every_write_and_not_with_reads(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    first = api(hub).bucket_info("alice/notes").updatedAt  # kept as the Hub spells it
    hub.put_file("alice/notes", "a.md", b"one")
    second = api(hub).bucket_info("alice/notes").updatedAt
    list(api(hub).list_bucket_tree("alice/notes", recursive=True))
    assert api(hub).bucket_info("alice/notes").updatedAt == second != first
    api(hub).batch_bucket_files("alice/notes", delete=["a.md"])
    assert api(hub).bucket_info("alice/notes").updatedAt != second


def test_feed_replays_after_a_cursor_then_sends_ready(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    [ready] = _session(hub, None)  # no resume point: no replay; a bucket that never changed has no cursor
    assert ready == live._Ready(cursor=None)
    hub.put_files("alice/notes", {"a.md": b"one", "b.md": b"three"})
    [ready] = _session(hub, None)
    assert ready.cursor == hub.feed_cursor("alice/notes")
    start = ready.cursor

    api(hub).batch_bucket_files("alice/notes", add=[(b"four", "c.md"), (b"fifth", "a.md")], delete=["b.md"])
    events = _session(hub, ("cursor", start))
    assert _changes(events) == [("c.md", "add", 4), ("a.md", "update", 5), ("b.md", "delete", None)]
    added = events[0].changes[0]
    assert added.xet_hash == hub.file_info("alice/notes", "c.md")["xetHash"] and added.uploaded_at is not None
    assert isinstance(events[-1], live._Ready) and events[-1].cursor == hub.feed_cursor("alice/notes")
    assert _changes(_session(hub, ("cursor", events[-1].cursor))) == []  # nothing after the newest cursor
    assert _changes(_session(hub, ("cursor", events[0].cursor))) == []  # a batch's cursor resumes after it


def test_feed_replays_from_an_instant_inclusively(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "a.md", b"one")
    time.sleep(0.01)
    hub.put_file("alice/notes", "b.md", b"two")
    since = api(hub).bucket_info("alice/notes").updatedAt
    hub.put_file("alice/notes", "c.md", b"three")
    # the instant of the last change comes again: since is inclusive
    assert _changes(_session(hub, ("since", since))) == [("b.md", "add", 3), ("c.md", "add", 5)]


def test_feed_answers_reset_past_its_replay_buffer(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "a.md", b"one")
    start = hub.feed_cursor("alice/notes")
    hub.feed_buffer(2)
    hub.put_files("alice/notes", {"b.md": b"2", "c.md": b"3"})
    assert _changes(_session(hub, ("cursor", start))) == [("b.md", "add", 1), ("c.md", "add", 1)]  # still kept
    hub.put_file("alice/notes", "d.md", b"4")  # b.md's change leaves the buffer
    assert _session(hub, ("cursor", start)) == [live._Reset()]
    assert _session(hub, ("since", "2000-01-01T00:00:00.000Z")) == [live._Reset()]
    later = hub.feed_cursor("alice/notes")
    hub.feed_buffer(0)  # everything forgotten: nothing new after the newest cursor is still no reset
    assert isinstance(_session(hub, ("cursor", later))[0], live._Ready)


def test_unavailable_feed_is_unfollowable_for_the_sdk(hub: HubEmulator) -> None:
    hub.create_bucket("alice/notes")
    for status in (404, 501):
        hub.feed_off(status)
        with pytest.raises(live.BucketEventsUnavailable, match=str(status)):
            _session(hub, None)
    hub.feed_on()
    assert _session(hub, None) == [live._Ready(cursor=None)]
    with pytest.raises(HfHubHTTPError) as refused:  # a cursor the server never gave: refused (400)
        _session(hub, ("cursor", "not-a-cursor"))
    assert refused.value.response.status_code == 400
    with pytest.raises(live.BucketEventsUnavailable):  # someone else's private bucket: not found
        _session(hub, None, token=BOB)
    assert endpoints(hub).count("events") == 5


def test_the_sdk_follower_sees_live_changes_and_reconnects(hub: HubEmulator) -> None:
    """`BucketFollower`, as HfFileSystem runs it: reconcile, `since` from updatedAt, ready, live batches, and a
    server-directed reconnect resumed from its cursor."""
    hub.create_bucket("alice/notes")
    hub.put_file("alice/notes", "old.md", b"old")
    hub.feed_stream_seconds = 0.5
    seen: list[str] = []
    reconciled = threading.Event()
    follower = live.BucketFollower(
        endpoint=hub.url,
        bucket_id="alice/notes",
        token=ALICE,
        on_changes=lambda changes: seen.extend(c.path for c in changes),
        on_reconcile=reconciled.set,
        is_alive=lambda: True,
    )
    follower.start()
    try:
        deadline = time.monotonic() + 10
        while not follower.subscribed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert reconciled.is_set() and follower.subscribed
        hub.put_file("alice/notes", "live.md", b"live")
        time.sleep(1.5)  # past the stream's lifetime: the follower reconnects from its cursor
        hub.put_file("alice/notes", "after.md", b"after")
        while "after.md" not in seen and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        follower.stop()
    assert seen[-2:] == ["live.md", "after.md"] and seen.count("live.md") == 1
    assert endpoints(hub).count("events") >= 2
