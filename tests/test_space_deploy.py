"""`build.py --deploy` against the Hub emulator, with the real huggingface_hub and hf_xet: the helper first,
then the pages pinned to that first commit, whose resolve URL serves exactly the helper's bytes."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import space_site

import tools
from conftest import TOKEN, Machine

SPACE = "alice/agent-memory"


def deploy(machine: Machine, out: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(space_site.BUILD), "--deploy", SPACE, "--json", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**machine.env, **env},
        timeout=300,
    )


def download(url: str) -> bytes:
    with urllib.request.urlopen(url) as response:
        return response.read()


@pytest.mark.slow
def test_deploy_publishes_the_helper_then_the_pages_pinned_to_it(hub, machine: Machine, tmp_path: Path) -> None:
    proc = deploy(machine, tmp_path / "site")
    tools.exited(proc)
    report = json.loads(proc.stdout)
    initial, helper_commit, pages_commit = hub.spaces.commits(SPACE)
    assert (helper_commit.oid, pages_commit.oid) == (report["helper_revision"], report["pages_revision"])
    assert pages_commit.parent == helper_commit.oid and helper_commit.parent == initial.oid
    wheel_path = f"helper/{report['wheel']}"
    assert set(helper_commit.files) == {".gitattributes", wheel_path}
    assert set(pages_commit.files) == {".gitattributes", *space_site.tree(tmp_path / "site")}
    # binary files went through hf_xet, as on the Hub; the pages travelled in the commit itself
    assert helper_commit.files[wheel_path].lfs and pages_commit.files["pyodide/pyodide.asm.wasm"].lfs
    assert not pages_commit.files["index.html"].lfs
    assert ("POST", "validate-yaml", "/api/validate-yaml") in hub.requests  # the Space card was accepted

    # the pages at the head of the Space name the first commit, and its URL serves the exact helper bytes
    pinned = f"{hub.url}/spaces/{SPACE}/resolve/{helper_commit.oid}/{wheel_path}"
    assert report["helper_url"] == pinned
    config = space_site.page_config(hub.spaces.read(SPACE, "index.html").decode())
    assert config["helper"]["revision"] == helper_commit.oid and config["helper"]["url"] == pinned
    assert pinned in hub.spaces.read(SPACE, "bootstrap.md").decode()
    assert f"revision `{helper_commit.oid}`" in hub.spaces.read(SPACE, "README.md").decode()
    helper = download(pinned)
    assert hashlib.sha256(helper).hexdigest() == report["sha256"] == config["helper"]["sha256"]
    assert helper == (tmp_path / "site" / wheel_path).read_bytes()
    for path in ("index.html", "pyodide/pyodide.asm.wasm"):
        assert download(f"{hub.url}/spaces/{SPACE}/resolve/main/{path}") == (tmp_path / "site" / path).read_bytes()

    # deploying again (nothing changed): no new helper commit, pages pinned to a commit that holds the same
    # helper, and the first pinned URL still serves the same bytes
    again = deploy(machine, tmp_path / "site")
    tools.exited(again)
    second = json.loads(again.stdout)
    commits = hub.spaces.commits(SPACE)
    assert len(commits) == 4 and second["helper_revision"] == pages_commit.oid
    assert download(second["helper_url"]) == helper == download(pinned)


@pytest.mark.slow
def test_a_failed_pages_commit_is_finished_by_deploying_again(hub, machine: Machine, tmp_path: Path) -> None:
    hub.fault("space-commit", "fail", status=400, after=1, times=0)  # the helper lands, the pages do not
    proc = deploy(machine, tmp_path / "site")
    tools.exited(proc, 1)
    assert f"Error: Publishing to the Space {SPACE} failed" in proc.stderr
    assert f"Next: python build.py --deploy {SPACE} (what was published stays" in proc.stderr
    _, helper_commit = hub.spaces.commits(SPACE)
    hub.clear_faults()
    again = deploy(machine, tmp_path / "site")
    tools.exited(again)
    report = json.loads(again.stdout)
    assert report["helper_revision"] == helper_commit.oid  # the helper was not uploaded twice
    assert (
        space_site.page_config(hub.spaces.read(SPACE, "index.html").decode())["helper"]["revision"] == helper_commit.oid
    )


def test_deploy_without_a_login_says_how_to_log_in(hub, machine: Machine, tmp_path: Path) -> None:
    proc = deploy(machine, tmp_path / "site", HF_TOKEN="")
    tools.exited(proc, 4)
    assert proc.stderr.startswith(f"Error: The Hub refused to publish to the Space {SPACE} (HTTP 401).")
    assert "Next: run `hf auth login` yourself" in proc.stderr
    assert not (tmp_path / "site").exists()
    wrong = deploy(machine, tmp_path / "site", HF_TOKEN="hf_" + "x" * 34)
    tools.exited(wrong, 4)
    assert "HTTP 401" in wrong.stderr
    assert TOKEN not in proc.stderr + wrong.stderr and "x" * 34 not in wrong.stderr


def test_deploy_to_an_unreachable_hub_is_an_error_with_a_next_step(machine: Machine, tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    proc = deploy(machine, tmp_path / "site", HF_ENDPOINT=endpoint, HF_TOKEN=TOKEN, HF_HUB_ETAG_TIMEOUT="2")
    tools.exited(proc, 1)
    assert proc.stderr.startswith(f"Error: Publishing to the Space {SPACE} failed: ")
    assert "Traceback" not in proc.stderr and "\nNext: python build.py --deploy" in proc.stderr
