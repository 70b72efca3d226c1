"""How a directory that no mapping covers finds its project: linked worktrees, other clones of the same origin,
and, on another machine, the origins recorded in the bucket. With real git repositories; git is never run by
the helper (some tests take it off the PATH)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import tools
from agent_memory.config.repository import normalise_url
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


def test_project_map_records_the_origin_once(machine, tmp_path, folder_store):
    checkout = repo(tmp_path / "repo")
    tools.exited(machine.run("config", "set", "bucket", folder_store))
    first = machine.run("project", "map", "demo", str(checkout), "--json")
    assert first.json["origin"] == {"origin": "github.com/Owner/Repo", "state": "recorded", "others": []}
    again = machine.run("project", "map", "demo", str(checkout))
    assert "already recorded in the bucket" in again.out
    store = Path(folder_store[len("file://") :])
    assert list(claims(store).values()) == [{"origin": "github.com/Owner/Repo", "project": "demo"}]


def bootstrap(machine, cwd: Path, *args: str):
    return machine.run("bootstrap", "--agent", "claude", "--json", *args, cwd=cwd)


def test_bootstrap_on_another_machine_finds_the_project_by_its_origin(machine, machine_b, tmp_path, folder_store):
    first = repo(tmp_path / "a" / "repo")
    done = bootstrap(machine, first, "--project", "demo", "--bucket", folder_store)
    tools.exited(done)
    assert done.json["found"] == {"by": "option", "via": None}
    assert done.json["origin"]["state"] == "recorded"

    second = clone(first, tmp_path / "b" / "checkout", "https://github.com/Owner/Repo")
    found = bootstrap(machine_b, second, "--bucket", folder_store)
    tools.exited(found)
    assert found.json["project"] == "demo" and found.json["root"] == str(second)
    assert found.json["found"] == {"by": "bucket", "via": "github.com/Owner/Repo"}
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
