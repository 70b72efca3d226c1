"""How a directory that no mapping covers finds its project: linked worktrees, other clones of the same origin,
and, on another machine, the origins recorded in the bucket. With real git repositories; git is never run by
the helper (some tests take it off the PATH)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import tools
from agent_memory.config.repository import normalise_url
from agent_memory.setup import origins
from conftest import BUCKET

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
ORIGIN = "git@github.com:Owner/Repo.git"


def git(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV}, check=True
    )
    return proc.stdout


def repo(path: Path, origin: str | None = ORIGIN) -> Path:
    """A git repository at `path` with one commit, and `origin` as its origin remote."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    if origin:
        git("remote", "add", "origin", origin, cwd=path)
    (path / "sub").mkdir()
    (path / "sub" / "file.txt").write_text("x\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "first", cwd=path)
    return path.resolve()


def worktree(main: Path, where: Path) -> Path:
    where.parent.mkdir(parents=True, exist_ok=True)
    git("worktree", "add", "-q", "-b", where.name, str(where), cwd=main)
    return where.resolve()


def clone(source: Path, where: Path, origin: str) -> Path:
    git("clone", "-q", str(source), str(where), cwd=source.parent)
    git("remote", "set-url", "origin", origin, cwd=where)
    return where.resolve()


def show(machine, cwd: Path, **kw):
    return machine.run("project", "show", "--json", cwd=cwd, **kw)


NO_GIT = {"PATH": "/nonexistent"}  # the helper reads git's files and runs nothing: no git on the PATH at all


@pytest.fixture
def main(machine, tmp_path):
    """The main checkout, mapped to project demo."""
    checkout = repo(tmp_path / "code" / "repo")
    tools.exited(machine.run("project", "map", "demo", str(checkout)))
    return checkout


def test_a_worktree_outside_the_checkout_has_its_project_without_git(machine, main, tmp_path):
    linked = worktree(main, tmp_path / "elsewhere" / "feature")
    found = show(machine, linked / "sub", env=NO_GIT)
    tools.exited(found)
    assert found.json == {"project": "demo", "root": str(main), "found": "worktree", "via": str(main)}
    text = machine.run("project", "show", cwd=linked, env=NO_GIT).out
    assert text == f"project: demo\nroot: {main}\nfound: worktree of {main}\n"
    status = machine.run("status", cwd=linked, env=NO_GIT)
    assert f"project: demo ({main}), found as worktree of {main}" in status.out
    assert machine.run("status", "--json", cwd=linked).json["project"]["found"] == "worktree"


def test_a_worktree_in_codex_worktree_folder_saves_and_searches(machine, main, folder_store):
    codex_worktree = machine.home / ".codex" / "worktrees" / "a1b2" / "repo"
    linked = worktree(main, codex_worktree)
    assert show(machine, linked, env=NO_GIT).json["project"] == "demo"
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    saved = machine.run("save", "--json", "--title", "From the worktree", input="worktree note\n", cwd=linked)
    tools.exited(saved)
    store = Path(folder_store[len("file://") :])
    assert [p.name for p in (store / "projects" / "demo" / "notes").iterdir()] == [saved.json["id"] + ".md"]
    found = machine.run("search", "--json", "worktree", cwd=main)
    assert [r["id"] for r in found.json["results"]] == [saved.json["id"]]


def test_a_worktree_follows_the_mapping_of_the_same_place_in_the_main_checkout(machine, main, tmp_path):
    tools.exited(machine.run("project", "map", "inner", str(main / "sub")))
    linked = worktree(main, tmp_path / "wt")
    assert show(machine, linked / "sub").json["project"] == "inner"
    assert show(machine, linked).json["project"] == "demo"


def test_an_explicit_mapping_of_a_worktree_wins(machine, main, tmp_path):
    linked = worktree(main, tmp_path / "wt")
    tools.exited(machine.run("project", "map", "experiment", str(linked)))
    assert show(machine, linked).json == {"project": "experiment", "root": str(linked), "found": "mapped", "via": None}


def test_an_unmapped_repository_and_its_worktrees_get_no_name(machine, tmp_path):
    unmapped = repo(tmp_path / "unmapped", origin="https://example.org/other.git")
    linked = worktree(unmapped, tmp_path / "wt")
    for folder in (unmapped, linked):
        result = show(machine, folder)
        tools.exited(result, 3)
        assert "is not mapped to a project" in result.err and "Next: agent-memory project map NAME" in result.err


def test_another_clone_of_the_same_origin_has_its_project(machine, main, tmp_path):
    other = clone(main, tmp_path / "second", "https://github.com/Owner/Repo/")
    found = show(machine, other / "sub", env=NO_GIT)
    tools.exited(found)
    assert found.json == {"project": "demo", "root": str(main), "found": "origin", "via": "github.com/Owner/Repo"}
    assert machine.run("project", "show", cwd=other).out.endswith(
        f"found: same origin as {main} (github.com/Owner/Repo)\n"
    )


def test_a_clone_of_another_origin_is_not_mapped(machine, main, tmp_path):
    other = clone(main, tmp_path / "fork", "git@github.com:Someone/Repo.git")
    tools.exited(show(machine, other), 3)


def test_clones_mapped_to_different_projects_leave_a_third_unmapped(machine, main, tmp_path):
    second = clone(main, tmp_path / "second", ORIGIN)
    tools.exited(machine.run("project", "map", "rival", str(second)))
    third = clone(main, tmp_path / "third", ORIGIN)
    result = show(machine, third)
    tools.exited(result, 3)
    assert "belong to different projects: demo" in result.err and "rival" in result.err
    assert "Next: agent-memory project map NAME" in result.err


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Owner/Repo.git",
        "git@github.com:Owner/Repo",
        "https://github.com/Owner/Repo.git",
        "https://github.com/Owner/Repo/",
        "https://user:" + "pass" + "word@GitHub.com/Owner/Repo.git",  # split: the guard would flag it as a secret
        "ssh://git@github.com/Owner/Repo.git",
        "ssh://git@github.com:22/Owner/Repo.git/",
        "git://github.com/Owner/Repo",
    ],
)
def test_every_form_of_an_origin_is_one(url):
    assert normalise_url(url) == "github.com/Owner/Repo"


def test_local_and_odd_origins():
    assert normalise_url("/srv/git/repo.git") == "/srv/git/repo"
    assert normalise_url("file:///srv/git/repo.git/") == "/srv/git/repo"
    assert normalise_url("") is None
    assert normalise_url("https://github.com/o/r\n") == "github.com/o/r"
    assert normalise_url("https://github.com/o/\x1b[31mr") is None
    assert normalise_url("nonsense") is None


def test_a_token_in_the_origin_is_never_shown_or_recorded(machine, tmp_path, folder_store):
    token = "ghp_" + "x" * 36
    checkout = repo(tmp_path / "repo", origin=f"https://oauth2:{token}@github.com/Owner/Repo.git")
    machine.run("config", "set", "bucket", folder_store)
    mapped = machine.run("project", "map", "demo", str(checkout), "--json")
    tools.exited(mapped)
    assert mapped.json["origin"]["origin"] == "github.com/Owner/Repo"
    store = Path(folder_store[len("file://") :])
    stored = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert token.encode() not in stored and b"oauth2" not in stored
    other = clone(checkout, tmp_path / "other", f"https://{token}@github.com/Owner/Repo")
    result = machine.run("project", "show", cwd=other)
    tools.exited(result)
    assert token not in result.out + result.err


def test_hostile_git_files_are_read_with_bounds_and_never_followed(machine, main, tmp_path):
    # a `.git` file naming a folder that does not exist, a huge one, a FIFO, and a link: none is a checkout
    for name, make in {
        "missing": lambda p: p.write_text("gitdir: /nonexistent/.git/worktrees/x\n"),
        "huge": lambda p: p.write_text("gitdir: " + "a" * 200_000),
        "fifo": lambda p: os.mkfifo(p),
        "link": lambda p: p.symlink_to(main / ".git"),
    }.items():
        folder = tmp_path / "odd" / name
        folder.mkdir(parents=True)
        make(folder / ".git")
        result = show(machine, folder)
        tools.exited(result, 3, about=name)
    # an origin whose checkout's config is a FIFO, or has no origin section: not mapped, no hang
    plain = repo(tmp_path / "no-origin", origin=None)
    tools.exited(show(machine, plain), 3)
    config = plain / ".git" / "config"
    config.unlink()
    os.mkfifo(config)
    tools.exited(show(machine, plain), 3)


# -- origins in the bucket, and bootstrap without --project -------------------------------------------------


def claims(store: Path) -> dict[str, dict]:
    return {str(p.relative_to(store)): json.loads(p.read_text()) for p in (store / "origins").rglob("*.json")}


DESK = {"AGENT_MEMORY_MACHINE": "desk"}


def test_project_map_records_the_origin_once_with_who_claimed_it(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    first = machine.run("project", "map", "demo", str(checkout), "--json", env=DESK)
    assert first.json["origin"] == {"origin": "github.com/Owner/Repo", "state": "recorded", "others": []}
    again = machine.run("project", "map", "demo", str(checkout), env=DESK)
    assert "already recorded in the bucket" in again.out
    store = Path(folder_store[len("file://") :])
    [(path, written)] = claims(store).items()
    assert re.fullmatch(r"origins/[0-9a-f]{32}/demo/[0-9]{8}T[0-9]{12}Z-[0-9a-f]{8}-claim\.json", path)
    assert written.pop("time")[:4] == path.split("/")[-1][:4]
    assert written == {"action": "claim", "machine": "desk", "origin": "github.com/Owner/Repo", "project": "demo"}
    elsewhere = machine.run("project", "map", "demo", str(checkout), "--json", env={"AGENT_MEMORY_MACHINE": "laptop"})
    assert elsewhere.json["origin"]["state"] == "recorded"  # the standing claim now says who mapped it last
    assert sorted(claim["machine"] for claim in claims(store).values()) == ["desk", "laptop"]


def bootstrap(machine, cwd: Path, *args: str):
    return machine.run("bootstrap", "--agent", "claude", "--json", *args, cwd=cwd)


def test_bootstrap_on_another_machine_finds_the_project_by_its_origin(machine, machine_b, tmp_path, folder_store):
    machine.own_env["AGENT_MEMORY_MACHINE"] = "desk"
    machine_b.own_env["AGENT_MEMORY_MACHINE"] = "laptop"
    first = repo(tmp_path / "a" / "repo")
    done = bootstrap(machine, first, "--project", "demo", "--bucket", folder_store)
    tools.exited(done)
    assert done.json["found"] == {"by": "option", "via": None}
    assert done.json["origin"]["state"] == "recorded"

    second = clone(first, tmp_path / "b" / "checkout", "https://github.com/Owner/Repo")
    found = bootstrap(machine_b, second, "--bucket", folder_store)
    tools.exited(found)
    assert found.json["project"] == "demo" and found.json["root"] == str(second)
    claimed = found.json["found"]
    assert claimed == {"by": "bucket", "via": "github.com/Owner/Repo", "machine": "desk", "time": claimed["time"]}
    assert re.fullmatch(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z", claimed["time"])
    text = machine_b.run("bootstrap", "--agent", "claude", "--bucket", folder_store, cwd=second)
    tools.exited(text)
    assert f"project: demo -> {second} (unchanged)" in text.out
    assert machine_b.run("project", "show", "--json", cwd=second).json["found"] == "mapped"


def test_bootstrap_without_project_through_the_hub(machine, machine_b, hub, tmp_path):
    first = repo(tmp_path / "a" / "repo")
    tools.exited(bootstrap(machine, first, "--project", "demo", "--bucket", BUCKET))
    second = clone(first, tmp_path / "b" / "checkout", ORIGIN)
    hub.requests.clear()
    found = bootstrap(machine_b, second, "--bucket", BUCKET)
    tools.exited(found)
    assert found.json["project"] == "demo" and found.json["found"]["by"] == "bucket"


def test_bootstrap_refuses_two_claimants_and_explicit_project_still_works(machine, machine_b, tmp_path, folder_store):
    first = repo(tmp_path / "a" / "repo")
    tools.exited(bootstrap(machine, first, "--project", "demo", "--bucket", folder_store))
    rival = clone(first, tmp_path / "a" / "rival", ORIGIN)
    claimed = bootstrap(machine, rival, "--project", "rival", "--bucket", folder_store)
    tools.exited(claimed)  # an explicit --project works even for a claimed origin
    warning = "Other projects also claim the origin github.com/Owner/Repo: demo"
    assert any(warning in w for w in claimed.json["warnings"])

    second = clone(first, tmp_path / "b" / "checkout", ORIGIN)
    before = sorted(p.name for p in machine_b.state.rglob("*"))
    refused = machine_b.run("bootstrap", "--agent", "claude", "--bucket", folder_store, cwd=second)
    tools.exited(refused, 2)
    assert "Several projects in" in refused.err and "demo, rival" in refused.err
    assert "Next: agent-memory bootstrap --project demo (or another of: rival)" in refused.err
    assert sorted(p.name for p in machine_b.state.rglob("*")) == before  # nothing was set up
    assert not (machine_b.home / ".claude").exists()
    chosen = bootstrap(machine_b, second, "--project", "rival", "--bucket", folder_store)
    tools.exited(chosen)
    assert chosen.json["project"] == "rival"


def test_bootstrap_refuses_an_origin_no_project_claims(machine, tmp_path, folder_store):
    unclaimed = repo(tmp_path / "repo", origin="https://example.org/nobody.git")
    refused = machine.run("bootstrap", "--agent", "claude", "--bucket", folder_store, cwd=unclaimed)
    tools.exited(refused, 2)
    assert "No project in" in refused.err and "claims the repository example.org/nobody" in refused.err
    assert "Next: agent-memory bootstrap --project NAME" in refused.err
    assert not (machine.home / ".claude").exists()


def test_bootstrap_refuses_a_folder_outside_any_repository(machine, tmp_path, folder_store):
    plain = tmp_path / "plain"
    plain.mkdir()
    refused = machine.run("bootstrap", "--agent", "claude", "--bucket", folder_store, cwd=plain)
    tools.exited(refused, 2)
    assert "in no git repository with an origin URL" in refused.err
    assert "Next: agent-memory bootstrap --project NAME" in refused.err


def test_bootstrap_without_project_in_a_worktree_uses_the_main_checkouts(machine, main, tmp_path, folder_store):
    linked = worktree(main, tmp_path / "wt")
    done = bootstrap(machine, linked, "--bucket", folder_store)
    tools.exited(done)
    assert done.json["project"] == "demo" and done.json["found"] == {"by": "worktree", "via": str(main)}


def test_an_origin_that_cannot_be_recorded_leaves_the_mapping_and_says_how_to_retry(machine, hub, tmp_path):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", BUCKET))
    hub.fault("tree", "fail", status=503, times=0)
    mapped = machine.run("project", "map", "demo", str(checkout), "--json")
    tools.exited(mapped)
    assert mapped.json["origin"]["state"] == "failed"
    assert "could not be recorded in the bucket" in mapped.err
    assert f"agent-memory project map demo {checkout}" in mapped.err
    assert machine.run("project", "show", "--json", cwd=checkout).json["project"] == "demo"
    hub.clear_faults()
    assert machine.run("project", "map", "demo", str(checkout), "--json").json["origin"]["state"] == "recorded"


# -- names and origins that hold a credential -----------------------------------------------------------------

TOKEN_LIKE = "ghp_" + "k" * 36  # a GitHub token to the guard; never a real one


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize(
    "url",
    [
        f"https://github.com/Owner/Repo.git?access_token={TOKEN_LIKE}",
        f"https://github.com/Owner/Repo#{TOKEN_LIKE}",
        f"https://x-access-token:{TOKEN_LIKE}@github.com/Owner/Repo.git",
        f"https://{TOKEN_LIKE}@github.com/Owner/Repo",
        "https://user" + f":p@ss{TOKEN_LIKE}@github.com/Owner/Repo",  # assembled: a password to the guard otherwise
        f"{TOKEN_LIKE}@github.com:Owner/Repo.git?x={TOKEN_LIKE}",
    ],
)
def test_an_origin_keeps_neither_user_part_nor_query(url):
    assert normalise_url(url) == "github.com/Owner/Repo"


def test_a_token_as_a_project_name_is_refused_and_never_shown(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    config = machine.run("config", "show", "--json").json
    refused = machine.run("project", "map", TOKEN_LIKE, str(checkout))
    tools.exited(refused, 5)
    assert TOKEN_LIKE not in refused.out + refused.err
    assert "The project name looks like a credential (GitHub token (rule github-token))" in refused.err
    assert "Next: agent-memory project map NAME [DIR]" in refused.err
    assert machine.run("config", "show", "--json").json == config
    store = Path(folder_store[len("file://") :])
    assert not (store / "origins").exists()

    misshapen = tools.exited(machine.run("project", "map", f"{TOKEN_LIKE}/x", str(checkout)), 5)  # no echo either
    assert TOKEN_LIKE not in misshapen.out + misshapen.err and "looks like a credential" in misshapen.err
    bootstrapped = machine.run("bootstrap", "--agent", "claude", "--project", TOKEN_LIKE, cwd=checkout)
    tools.exited(bootstrapped, 5)
    assert TOKEN_LIKE not in bootstrapped.out + bootstrapped.err
    assert "Next: agent-memory bootstrap --project my-project" in bootstrapped.err
    assert not (machine.home / ".claude").exists() and machine.run("config", "show", "--json").json == config
    assert TOKEN_LIKE.encode() not in every_byte(machine.root) + every_byte(store)


# -- who made a claim: withdrawals, and claims no machine of the bucket's history made --------------------------


@pytest.fixture(params=["folder", "hub"])
def bucket(request, tmp_path):
    """The bucket both machines use, a folder store or the Hub emulator; how to plant an object in it, and every
    byte it holds."""
    if request.param == "folder":
        root = tmp_path / "store"
        root.mkdir(mode=0o700)

        def plant(path: str, data: bytes) -> None:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)

        return f"file://{root}", plant, lambda: every_byte(root)
    hub = request.getfixturevalue("hub")

    def held() -> bytes:
        return b"".join(hub.read_file(BUCKET, path) for path in hub.list_paths(BUCKET))

    return BUCKET, lambda path, data: hub.put_file(BUCKET, path, data), held


def test_project_map_with_a_token_in_the_origin_query_prints_and_writes_none(machine, tmp_path, bucket):
    uri, _plant, held = bucket
    checkout = repo(tmp_path / "repo", origin=f"https://github.com/Owner/Repo.git?access_token={TOKEN_LIKE}")
    tools.exited(machine.run("config", "set", "bucket", uri))
    for args in (["--json"], []):
        mapped = machine.run("project", "map", "demo", str(checkout), *args)
        tools.exited(mapped)
        assert TOKEN_LIKE not in mapped.out + mapped.err and "access_token" not in mapped.out + mapped.err
    assert b"github.com/Owner/Repo" in held()  # the claim, as written
    for written in (every_byte(machine.root), held()):
        assert TOKEN_LIKE.encode() not in written and b"access_token" not in written
    shown = machine.run("project", "show", "--json", cwd=clone(checkout, tmp_path / "other", ORIGIN))
    tools.exited(shown)
    assert shown.json["via"] == "github.com/Owner/Repo"


def two_machines(machine, machine_b, tmp_path, uri):
    """Machine desk bootstrapped in a checkout as project demo; a clone of it on machine laptop, not set up."""
    machine.own_env["AGENT_MEMORY_MACHINE"] = "desk"
    machine_b.own_env["AGENT_MEMORY_MACHINE"] = "laptop"
    first = repo(tmp_path / "a" / "repo")
    done = bootstrap(machine, first, "--project", "demo", "--bucket", uri)
    tools.exited(done)
    return first, clone(first, tmp_path / "b" / "checkout", ORIGIN)


def test_a_withdrawn_claim_is_not_followed_and_a_newer_claim_is(machine, machine_b, tmp_path, bucket):
    uri, _plant, _held = bucket
    first, second = two_machines(machine, machine_b, tmp_path, uri)
    unmapped = machine.run("project", "unmap", str(first), "--origin", "--json")
    tools.exited(unmapped)
    assert unmapped.json == {
        "project": "demo",
        "root": str(first),
        "origin": {"origin": "github.com/Owner/Repo", "state": "withdrawn"},
    }
    tools.exited(machine.run("project", "show", cwd=first), 3)  # unmapped here too
    refused = machine_b.run("bootstrap", "--agent", "claude", "--bucket", uri, cwd=second)
    tools.exited(refused, 2)
    assert "No project in" in refused.err and "Next: agent-memory bootstrap --project NAME" in refused.err
    again = machine.run("project", "unmap", str(first), "--origin")  # not mapped any more: nothing to do
    tools.exited(again, 2)
    assert f"{first} is not mapped on this machine" in again.err

    tools.exited(machine.run("project", "map", "demo", str(first)))  # a claim newer than the withdrawal
    found = bootstrap(machine_b, second, "--bucket", uri)
    tools.exited(found)
    assert found.json["project"] == "demo" and found.json["found"]["machine"] == "desk"


def test_unmap_without_origin_keeps_the_claim_and_refuses_what_is_not_mapped(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    tools.exited(machine.run("project", "map", "demo", str(checkout)))
    inner = machine.run("project", "unmap", str(checkout / "sub"))
    tools.exited(inner, 2)
    assert f"it is inside {checkout}, mapped to project demo" in inner.err
    assert f"Next: agent-memory project unmap {checkout}" in inner.err
    text = machine.run("project", "unmap", str(checkout))
    tools.exited(text)
    assert text.out == f"Unmapped {checkout} (it was mapped to project demo).\n"
    store = Path(folder_store[len("file://") :])
    assert [claim["action"] for claim in claims(store).values()] == ["claim"]
    plain = tmp_path / "plain"
    plain.mkdir()
    tools.exited(machine.run("project", "map", "other", str(plain)))
    refused = machine.run("project", "unmap", str(plain), "--origin")
    tools.exited(refused, 2)
    assert "in no git repository with an origin URL" in refused.err
    assert machine.run("project", "show", "--json", cwd=plain).json["project"] == "other"  # nothing changed


def test_a_claim_no_machine_of_the_bucket_made_is_shown_and_refused(machine, machine_b, tmp_path, bucket):
    uri, plant, _held = bucket
    key = origins.folder("github.com/Owner/Repo")
    elsewhere = repo(tmp_path / "planted", origin="https://github.com/Victim/Repo")
    planted = {
        "action": "claim",
        "machine": "ghost",
        "origin": "github.com/Victim/Repo",
        "project": "attacker-inbox",
        "time": "2026-01-02T03:04:05Z",
    }
    plant(
        f"{origins.folder('github.com/Victim/Repo')}/attacker-inbox/20260102T030405000000Z-0badc0de-claim.json",
        json.dumps(planted).encode(),
    )
    tools.exited(machine.run("config", "set", "bucket", uri))
    refused = machine.run("bootstrap", "--agent", "claude", "--bucket", uri, cwd=elsewhere)
    tools.exited(refused, 2)
    assert "is claimed by project attacker-inbox, by machine ghost on 2026-01-02T03:04:05Z, which no note of " \
        "project attacker-inbox names" in refused.err  # fmt: skip
    assert "Next: agent-memory bootstrap --project attacker-inbox" in refused.err
    assert not (machine.home / ".claude").exists() and "projects" not in machine.run("config", "show", "--json").json

    # a claim written before claims said who made them: read, as by an unknown machine, and not followed
    first, second = two_machines(machine, machine_b, tmp_path, uri)
    tools.exited(machine.run("project", "unmap", str(first), "--origin"))
    plant(f"{key}/legacy.json", json.dumps({"origin": "github.com/Owner/Repo", "project": "legacy"}).encode())
    unknown = machine_b.run("bootstrap", "--agent", "claude", "--bucket", uri, cwd=second)
    tools.exited(unknown, 2)
    assert "claimed by project legacy, by an unknown machine (a claim from an earlier version" in unknown.err
    assert "agent-memory project map legacy on the machine that uses it writes one that does" in unknown.err
    assert "Next: agent-memory bootstrap --project legacy (if that is this clone's project)" in unknown.err
    assert not (machine_b.home / ".claude").exists()
    # the machine that uses it maps it again and saves there: the claim says who made it, and is followed
    tools.exited(machine.run("project", "map", "legacy", str(first)))
    tools.exited(machine.run("save", "--title", "Legacy work", input="A note of project legacy.\n", cwd=first))
    followed = bootstrap(machine_b, second, "--bucket", uri)
    tools.exited(followed)
    assert followed.json["project"] == "legacy" and followed.json["found"]["machine"] == "desk"


def test_bootstrap_shows_the_claim_it_follows(machine, machine_b, tmp_path, folder_store):
    _first, second = two_machines(machine, machine_b, tmp_path, folder_store)
    text = machine_b.run("bootstrap", "--agent", "claude", "--bucket", folder_store, cwd=second)
    tools.exited(text)
    found = re.search(r"claimed by this project in the bucket \(by machine desk on (\S+)\)", text.out)
    assert found and re.fullmatch(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z", found.group(1)), text.out


def test_a_token_as_a_machine_name_is_refused_before_anything_changes(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    config = machine.run("config", "show", "--json").json
    secret = {"AGENT_MEMORY_MACHINE": TOKEN_LIKE}
    for args in (["project", "map", "demo", str(checkout)], ["bootstrap", "--agent", "claude", "--project", "demo"]):
        refused = machine.run(*args, env=secret, cwd=checkout)
        tools.exited(refused, 5)
        assert TOKEN_LIKE not in refused.out + refused.err
        assert "The machine name (AGENT_MEMORY_MACHINE) looks like a credential (GitHub token" in refused.err
        assert "Next: set AGENT_MEMORY_MACHINE to a plain name (like laptop), or unset it" in refused.err
        assert machine.run("config", "show", "--json").json == config
    store = Path(folder_store[len("file://") :])
    assert not (store / "origins").exists() and not (machine.home / ".claude").exists()
    assert TOKEN_LIKE.encode() not in every_byte(machine.root) + every_byte(store)


def test_a_claim_that_would_hold_a_token_is_not_written(machine, tmp_path, folder_store):
    """A token in the origin's path (not in its user part or query, which are dropped): the guard, run on the
    claim before it is written, keeps it out of the bucket, and nothing prints it."""
    checkout = repo(tmp_path / "repo", origin=f"https://github.com/{TOKEN_LIKE}/Repo.git")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    for args in (["--json"], []):
        mapped = tools.exited(machine.run("project", "map", "demo", str(checkout), *args))
        assert TOKEN_LIKE not in mapped.out + mapped.err
        assert "was not written to the bucket: it looks like it holds a credential (GitHub token" in mapped.err
    assert mapped.err.count("github.com/[redacted]/Repo") == 1
    store = Path(folder_store[len("file://") :])
    assert not (store / "origins").exists() and TOKEN_LIKE.encode() not in every_byte(store)
    assert tools.exited(machine.run("project", "show", "--json", cwd=checkout)).json["project"] == "demo"


def test_a_token_given_as_the_bucket_is_refused_and_never_shown(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    token = "hf_" + "Q" * 34  # a Hugging Face token to the guard; never a real one
    for given in (token, f"{token}/agent-memory", f"hf://buckets/alice/{token}"):
        refused = tools.exited(machine.run("config", "set", "bucket", given), 5)
        assert token not in refused.out + refused.err
        assert "The bucket looks like a credential (Hugging Face token (rule hf-token))" in refused.err
        assert "Next: agent-memory config set bucket OWNER/NAME" in refused.err
    booted = tools.exited(machine.run("bootstrap", "--agent", "claude", "--bucket", token, cwd=checkout), 5)
    assert token not in booted.out + booted.err and "Next: agent-memory bootstrap --bucket OWNER/NAME" in booted.err
    assert not machine.run("config", "show", "--json").json.get("bucket")
    assert not (machine.home / ".claude").exists() and token.encode() not in every_byte(machine.root)


def test_a_damaged_or_far_future_claim_is_never_followed(machine, machine_b, tmp_path, bucket):
    """The newest claim decides: one that is not what we write (not JSON, too large, another project's fields)
    says no machine, so it is refused; one dated far ahead is ignored, never allowed to outrank the others."""
    uri, plant, _held = bucket
    _first, second = two_machines(machine, machine_b, tmp_path, uri)
    key = origins.folder("github.com/Owner/Repo")
    fields = {"action": "claim", "machine": "desk", "origin": "github.com/Owner/Repo", "project": "demo"}
    future = json.dumps({**fields, "time": "2099-12-31T23:59:59Z"}).encode()
    plant(f"{key}/demo/20991231T235959000000Z-0000beef-claim.json", future)
    followed = tools.exited(bootstrap(machine_b, second, "--bucket", uri))
    assert followed.json["found"]["by"] == "bucket" and followed.json["found"]["time"] < "2099"
    damaged = {
        "not json": b"{not json",
        "too large": json.dumps({**fields, "time": "2030-01-01T00:00:00Z", "pad": "x" * 5000}).encode(),
        "another project": json.dumps({**fields, "project": "other", "time": "2030-01-01T00:00:00Z"}).encode(),
    }
    tools.exited(machine_b.run("project", "unmap", str(second)))  # a refused bootstrap maps nothing again
    for number, (case, data) in enumerate(damaged.items()):
        stamp = (datetime.now(timezone.utc) + timedelta(seconds=number + 1)).strftime("%Y%m%dT%H%M%S%fZ")
        plant(f"{key}/demo/{stamp}-0000000{number}-claim.json", data)
        refused = tools.exited(bootstrap(machine_b, second, "--bucket", uri), 2, about=case)
        assert "claimed by project demo, by an unknown machine" in refused.err, case
