"""Sync that deletes only what was deleted: on two machines, through a folder store and the Hub emulator, a memory
folder that is gone, replaced by a file, unreadable or a link deletes nothing anywhere and is told; many deletions
at once wait for `sync now --allow-deletes` (here and on the machine that receives them); a repository's settings
point sync at no folder the user did not trust and name; Claude Code's `team/` folder is never touched."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sync import claude_folder, codex_folder, hook, reminder, sync_now, two_machines

import tools
from conftest import BUCKET, Machine

# Claude Code's memory folder of a checkout in no repository: see conftest's outside_tmp
pytestmark = pytest.mark.outside_tmp

NOBODY = 65534  # the tests run as root, whom no permission stops: an unreadable folder is tried as this user


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (links not followed), by its path in it."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def tombstones(machine: Machine) -> list[str]:
    """The deleted versions (tombstones) this machine knows of, by file: none may come from a folder lost."""
    found = []
    for record in (machine.state).rglob("versions.json"):
        versions = json.loads(record.read_text())["versions"]
        found += sorted(meta["path"] for meta in versions.values() if meta["hash"] is None)
    return found


def fill(folder: Path, files: dict[str, str]) -> dict[str, bytes]:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return files_of(folder)


def told_line(folder: Path, why: str, fix: str, scope: str = "claude demo") -> str:
    return f"Not synced: {folder} ({scope}): {why}; nothing in it is deleted, here or elsewhere. Next: {fix}"


MEMORY = {"MEMORY.md": "# Index\n- [Parser](parser.md): lookahead 2\n", "parser.md": "Lookahead is 2.\n"}


def test_a_gone_checkout_folder_deletes_nothing_anywhere(machine, machine_b, bucket):
    """Two checkouts of one project on machine A; the older one's memory folder is removed: nothing is deleted in
    the live checkout's folder or on machine B, and the user is told where and what to do."""
    a, b = two_machines(machine, machine_b, bucket)
    old = a.root / "work" / "old-clone"
    old.mkdir(parents=True)
    tools.exited(a.run("project", "map", "demo", cwd=old))
    fill(claude_folder(a, old), MEMORY)
    sync_now(a)
    sync_now(a)  # the live checkout's folder receives them (its pass ran before the old one's pushed)
    sync_now(b)
    kept = {"a": files_of(claude_folder(a)), "b": files_of(claude_folder(b))}
    assert kept["a"] == kept["b"] == files_of(claude_folder(a, old))

    shutil.rmtree(claude_folder(a, old))  # a cleanup of ~/.claude/projects
    gone = claude_folder(a, old)
    fix = f"mkdir -p {gone} && agent-memory sync now (its files come back from the bucket)"
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    assert told_line(gone, "it is gone", fix) in done.err
    (state,) = [f for f in done.json["folders"] if f["folder"] == str(gone)]
    assert (
        state["blocked"]
        == [{"agent": "claude", "scope": "demo", "folder": str(gone), "why": "it is gone", "next": fix}]
        and not state["pushed"]
    )
    for _ in range(2):
        sync_now(b)
        sync_now(a)
    assert files_of(claude_folder(a)) == kept["a"] and files_of(claude_folder(b)) == kept["b"]
    assert tombstones(a) == tombstones(b) == [] and not gone.exists()  # nothing deleted, nothing written there
    assert f"  {told_line(gone, 'it is gone', fix)}" in a.run("sync", "status").out
    assert f"  {told_line(gone, 'it is gone', fix)}" in a.run("status").out
    assert a.run("status", "--json").json["sync"]["blocked"] == state["blocked"]
    context = reminder(a, cwd=old)
    assert f"agent-memory sync: Not synced: {gone} (claude demo): it is gone; nothing in it is deleted" in context

    gone.mkdir(parents=True)  # made again (by Claude Code, or as told): its files come back, nothing is deleted
    sync_now(a)
    assert files_of(gone) == kept["a"] and a.run("status", "--json").json["sync"]["blocked"] == []


def synced_with_topics(machine: Machine, machine_b: Machine, bucket: str) -> tuple[Machine, Machine, dict]:
    """Two machines in step on a memory folder with a subfolder `topics/`; machine B's files."""
    a, b = two_machines(machine, machine_b, bucket)
    fill(claude_folder(a), {**MEMORY, "topics/one.md": "One.\n", "topics/two.md": "Two.\n"})
    sync_now(a)
    sync_now(b)
    return a, b, files_of(claude_folder(b))


def test_a_folder_replaced_by_a_file_deletes_nothing(machine, machine_b, bucket):
    a, b, before = synced_with_topics(machine, machine_b, bucket)
    shutil.rmtree(claude_folder(a) / "topics")
    (claude_folder(a) / "topics").write_text("a file where the folder was\n")
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    place = claude_folder(a) / "topics"
    fix = f"mv {place} {place}.moved && mkdir {place} && agent-memory sync now"
    assert told_line(place, "it is a file, not a folder", fix) in done.err
    sync_now(b)
    assert files_of(claude_folder(b)) == before and tombstones(a) == tombstones(b) == []
    assert (claude_folder(a) / "topics").read_text() == "a file where the folder was\n"  # never written over

    # the whole memory folder replaced by a file: the same
    shutil.rmtree(claude_folder(a))
    claude_folder(a).write_text("not a folder\n")
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    whole = claude_folder(a)
    assert (
        told_line(
            whole, "it is a file, not a folder", f"mv {whole} {whole}.moved && mkdir {whole} && agent-memory sync now"
        )
        in done.err
    )
    sync_now(b)
    assert files_of(claude_folder(b)) == before and tombstones(a) == tombstones(b) == []
    assert claude_folder(a).read_text() == "not a folder\n"


@contextlib.contextmanager
def reachable_by_others(*places: Path) -> Iterator[None]:
    """The folders above `places` (the checkout, the interpreter's environment) passable by another user for the
    block: a clone in a folder of `mktemp -d` (mode 0700) would keep that user from the helper's own code. Only the
    search bit (o+x) is added, where missing, and taken back after."""
    changed: dict[Path, int] = {}
    for place in places:
        for folder in [place.resolve(), *place.resolve().parents]:
            mode = folder.stat().st_mode
            if folder not in changed and not mode & 0o001:
                changed[folder] = mode
                folder.chmod((mode & 0o7777) | 0o001)
    try:
        yield
    finally:
        for folder, mode in changed.items():
            folder.chmod(mode & 0o7777)


def as_nobody(machine: Machine, *args: str) -> subprocess.CompletedProcess:
    """`agent-memory ARGS` run as an unprivileged user that owns the machine's files (and a folder store)."""
    with reachable_by_others(Path(__file__).parent.parent, Path(sys.prefix)):
        return _as_nobody(machine, *args)


def _as_nobody(machine: Machine, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            sys.executable,
            "-m",
            "agent_memory",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=machine.work,
        env=machine.env,
        timeout=120,
    )


@pytest.fixture(params=["folder", "hub"])
def bucket(request, tmp_path, base_env) -> Iterator[str]:
    """The two stores, a folder store in /var/tmp (which another user may be given: pytest's folder is root's)."""
    if request.param == "hub":
        request.getfixturevalue("hub")
        yield BUCKET
        return
    root = Path(tempfile.mkdtemp(prefix="agent-memory-store-", dir="/var/tmp"))
    (root / "store").mkdir(mode=0o700)
    yield f"file://{root / 'store'}"
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(shutil.which("setpriv") is None or os.geteuid() != 0, reason="gives a machine to another user")
def test_an_unreadable_folder_deletes_nothing(machine, machine_b, bucket):
    """A subfolder this user may not read (chmod 000; tried as an unprivileged user, whom the permission stops)."""
    a, b, before = synced_with_topics(machine, machine_b, bucket)
    owned = [a.root, *([Path(bucket.removeprefix("file://")).parent] if "://" in bucket else [])]
    topics = claude_folder(a) / "topics"
    try:
        for path in owned:
            subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(path)], check=True)
        topics.chmod(0)
        done = as_nobody(a, "sync", "now", "--json")
        assert done.returncode == 0, done.stderr
        fix = f"chmod u+rwx {topics} && agent-memory sync now"
        assert told_line(topics, "it could not be read (Permission denied)", fix) in done.stderr
        assert json.loads(done.stdout)["folders"][0]["pushed"] == []
    finally:
        topics.chmod(0o755)
        for path in owned:
            subprocess.run(["chown", "-R", "0:0", str(path)], check=True)
    sync_now(a)
    sync_now(b)
    assert files_of(claude_folder(b)) == before == files_of(claude_folder(a))
    assert tombstones(a) == tombstones(b) == []


def test_a_linked_subfolder_is_not_synced_and_deletes_nothing(machine, machine_b, bucket):
    """Codex's rollout_summaries/ moved to another disk and replaced by a link: never read as deleted (no tombstone
    pushed, so nothing is forgotten on another machine), nothing written through the link, and told."""
    a, b = two_machines(machine, machine_b, bucket, "codex")
    mine = codex_folder(a)
    fill(
        mine,
        {
            "memory_summary.md": "- small commits\n",
            "rollout_summaries/one.md": "One.\n",
            "rollout_summaries/two.md": "Two.\n",
        },
    )
    tools.exited(hook(a, "Stop", "codex"))
    reminder(b, "codex")
    generated_b = files_of(codex_folder(b))
    status = a.run("sync", "status", "--json").json
    scope = next(f["scope"] for agent in status["agents"] for f in agent["folders"] if agent["agent"] == "codex")
    other_disk = a.root / "other-disk"
    other_disk.mkdir()
    shutil.move(mine / "rollout_summaries", other_disk / "rollout_summaries")
    os.symlink(other_disk / "rollout_summaries", mine / "rollout_summaries")
    moved = files_of(other_disk)

    tools.exited(hook(a, "Stop", "codex"))
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    linked = mine / "rollout_summaries"
    fix = f"replace the link {linked} with the folder it points to (sync never follows a link out of the folder)"
    assert told_line(linked, "it is a link", fix, f"codex {scope}") in done.err
    sync_now(b)
    assert files_of(other_disk) == moved  # nothing written through the link
    assert tombstones(a) == tombstones(b) == []  # B's consolidation is told of no deleted summary
    assert files_of(codex_folder(b)) == generated_b  # B's own files are Codex's: never written
    assert f"  {told_line(linked, 'it is a link', fix, f'codex {scope}')}" in a.run("sync", "status").out
    context = reminder(a, "codex")
    assert f"agent-memory sync: Not synced: {linked} (codex {scope}): it is a link; nothing in it is deleted" in context

    os.unlink(linked)  # put back: in step again, nothing deleted
    shutil.move(other_disk / "rollout_summaries", linked)
    sync_now(a)
    assert "rollout_summaries/two.md" in files_of(mine) and tombstones(a) == []


def git_checkout(folder: Path) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(folder)], check=True)
    subprocess.run([*git, "-C", str(folder), "commit", "-q", "--allow-empty", "-m", "start"], check=True)


def test_a_repository_settings_file_points_sync_at_no_folder_unasked(machine, machine_b, bucket):
    """A repository's `.claude/settings.local.json` sets autoMemoryDirectory to ~/Documents: untrusted, Claude Code
    ignores it and so does sync; trusted, it is Claude Code's folder, synced only once the user names it."""
    a, b = two_machines(machine, machine_b, bucket)
    git_checkout(a.work)
    (a.work / ".claude").mkdir()
    (a.work / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "~/Documents"}))
    documents = a.home / "Documents"
    private = fill(documents, {"diary.txt": "Dear diary\n", "taxes/2026.md": "Income: private\n"})
    fill(claude_folder(b), {"MEMORY.md": "- from B\n"})
    sync_now(b)

    sync_now(a)  # untrusted: the default folder, keyed by the checkout
    assert files_of(documents) == private
    assert files_of(claude_folder(a)) == {"MEMORY.md": b"- from B\n"}
    shown = a.run("sync", "status", "--json").json
    (state,) = next(agent for agent in shown["agents"] if agent["agent"] == "claude")["folders"]
    assert state["folder"] == str(claude_folder(a)) and state["source"] == f"Claude Code's folder for {a.work}"

    trust = {"projects": {str(a.work): {"hasTrustDialogAccepted": True}}}  # as the trust dialog records it
    (a.home / ".claude" / ".claude.json").write_text(json.dumps(trust))  # in $CLAUDE_CONFIG_DIR, which is set
    settings = a.work / ".claude" / "settings.local.json"
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    fix = f"agent-memory sync enable --agent claude --folder {documents}"
    said = (
        f"Not synced: {documents} (autoMemoryDirectory in {settings}) is outside Claude Code's own folder, so it is "
        f"synced only once you name it. Next: {fix}"
    )
    assert said in done.err
    assert files_of(documents) == private and done.json["folders"] == []
    assert said in a.run("sync", "status").out
    assert f"agent-memory sync: {said}".split(" Next:")[0] in reminder(a)
    sync_now(b)
    assert files_of(claude_folder(b)) == {"MEMORY.md": b"- from B\n"}  # nothing of Documents went anywhere

    named = a.run("sync", "enable", "--agent", "claude", "--folder", str(documents), "--json")
    tools.exited(named)
    assert named.json["folders"] == {"claude": [str(documents)]}
    sync_now(a)
    assert files_of(documents) == {**private, "MEMORY.md": b"- from B\n"}
    sync_now(b)
    assert files_of(claude_folder(b))["taxes/2026.md"] == b"Income: private\n"  # named: synced as asked
    shown = a.run("sync", "status", "--json").json
    claude = next(agent for agent in shown["agents"] if agent["agent"] == "claude")
    (state,) = [f for f in claude["folders"] if f["folder"] == str(documents)]
    assert (state["source"], state["synced"]) == (f"autoMemoryDirectory in {settings}", True)

    unnamed = a.run("sync", "disable", "--agent", "claude", "--folder", str(documents), "--json")
    tools.exited(unnamed)
    assert unnamed.json["folders"] == {"claude": []} and unnamed.json["enabled"] == ["claude"]
    fill(claude_folder(b), {"later.md": "After the name was taken back.\n"})
    sync_now(b)
    sync_now(a)
    assert "later.md" not in files_of(documents) and said in a.run("sync", "status").out


def test_claude_code_team_folder_is_never_read_or_written(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    mine = fill(claude_folder(a), {**MEMORY, "team/shared.md": "Team memory of A.\n"})
    theirs = fill(claude_folder(b), {"team/shared.md": "Team memory of B.\n"})
    sync_now(a)
    sync_now(b)
    sync_now(a)
    assert files_of(claude_folder(a)) == mine
    assert files_of(claude_folder(b)) == {**theirs, **{k: v for k, v in mine.items() if not k.startswith("team/")}}
    for one in (a, b):
        assert not any("team/" in record.read_text() for record in one.state.rglob("versions.json"))
    shutil.rmtree(claude_folder(a) / "team")  # its removal is no deletion either
    sync_now(a)
    sync_now(b)
    assert files_of(claude_folder(b))["team/shared.md"] == b"Team memory of B.\n" and tombstones(a) == []


def test_many_deletions_are_held_until_confirmed_on_each_machine(machine, machine_b, bucket):
    a, b = two_machines(machine, machine_b, bucket)
    notes = {f"note-{n}.md": f"Note {n}.\n" for n in range(5)}
    fill(claude_folder(a), notes)
    sync_now(a)
    sync_now(b)
    before = files_of(claude_folder(b))
    for n in range(4):
        (claude_folder(a) / f"note-{n}.md").unlink()

    names = "note-0.md, note-1.md, note-2.md, note-3.md"
    here = (
        f"Held: 4 files deleted here ({names}) in {claude_folder(a)} (claude demo): not deleted elsewhere until you "
        "confirm. Next: agent-memory sync now --allow-deletes"
    )
    stopped = hook(a, "Stop")  # the hook that sees them first holds them, and says so
    tools.exited(stopped)
    assert f"deletions held until confirmed ({names}): agent-memory sync now --allow-deletes" in stopped.err
    done = a.run("sync", "now", "--json")
    tools.exited(done)
    assert here in done.err and done.json["folders"][0]["pushed"] == []
    assert [(item["path"], item["why"]) for item in done.json["folders"][0]["held"]] == [
        (f"note-{n}.md", "deleted here") for n in range(4)
    ]
    sync_now(b)
    assert files_of(claude_folder(b)) == before and tombstones(a) == []
    assert f"  {here}" in a.run("sync", "status").out and f"  {here}" in a.run("status").out
    assert f"agent-memory sync: {here.split(' Next:')[0]}" in reminder(a)

    confirmed = a.run("sync", "now", "--allow-deletes", "--json")
    tools.exited(confirmed)
    assert confirmed.json["folders"][0]["pushed"] == [f"note-{n}.md" for n in range(4)]
    assert a.run("status", "--json").json["sync"]["held"] == []

    there = (
        f"Held: 4 files deleted on another machine ({names}) in {claude_folder(b)} (claude demo): not deleted here "
        "until you confirm. Next: agent-memory sync now --allow-deletes"
    )
    received = b.run("sync", "now", "--json")  # the receiving side holds them by the same bound
    tools.exited(received)
    assert there in received.err and files_of(claude_folder(b)) == before
    assert f"agent-memory sync: {there.split(' Next:')[0]}" in reminder(b)
    tools.exited(b.run("sync", "now", "--allow-deletes"))
    assert files_of(claude_folder(b)) == {"note-4.md": b"Note 4.\n"} == files_of(claude_folder(a))
    assert b.run("status", "--json").json["sync"]["held"] == []


def test_a_folder_removed_while_a_sync_runs_deletes_nothing(machine, machine_b, folder_store):
    """A subfolder removed at any moment of a sync (one file of ten: within the bound, so only the folder's own
    check keeps it) is never recorded as deleted."""
    a, b = two_machines(machine, machine_b, folder_store)
    notes = {f"note-{n}.md": f"Note {n}.\n" for n in range(9)}
    fill(claude_folder(a), {**notes, "topics/x.md": "Kept.\n"})
    sync_now(a)
    sync_now(b)
    rng = random.Random(34)
    for _ in range(12):
        fill(claude_folder(a), {"topics/x.md": "Kept.\n"})
        proc = a.popen("sync", "now", "--json")
        time.sleep(rng.uniform(0.0, 0.4))
        shutil.rmtree(claude_folder(a) / "topics", ignore_errors=True)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    sync_now(a)
    sync_now(b)
    assert tombstones(a) == tombstones(b) == []
    assert files_of(claude_folder(b))["topics/x.md"] == b"Kept.\n"


def test_an_old_checkout_unmapped_and_gone_is_told_no_more(machine, machine_b, folder_store):
    """The old clone's memory folder removed and its checkout unmapped: after one `sync now`, no session is told
    again that the folder is gone, and nothing was deleted anywhere."""
    a, b = two_machines(machine, machine_b, folder_store)
    old = a.root / "work" / "old-clone"
    old.mkdir(parents=True)
    tools.exited(a.run("project", "map", "demo", cwd=old))
    fill(claude_folder(a, old), MEMORY)
    for one in (a, a, b):
        sync_now(one)
    shutil.rmtree(claude_folder(a, old))
    sync_now(a)
    assert "it is gone" in tools.exited(a.run("status")).out  # told while the checkout is mapped
    tools.exited(a.run("project", "unmap", str(old)))

    sync_now(a)
    assert "it is gone" not in tools.exited(a.run("status")).out
    assert "it is gone" not in tools.exited(a.run("sync", "status")).out
    assert "it is gone" not in reminder(a)
    assert not claude_folder(a, old).exists()  # not made again
    for one in (a, b):
        assert {path: data.decode() for path, data in files_of(claude_folder(one)).items()} == MEMORY


def test_folder_names_for_both_agents_or_never_named_say_what_to_do(machine, folder_store, tmp_path):
    machine.setup(folder_store)
    tools.exited(machine.run("sync", "enable", "--agent", "claude"))
    documents = tmp_path / "Documents"
    before = machine.run("sync", "status", "--json").json
    both = tools.exited(machine.run("sync", "enable", "--agent", "both", "--folder", str(documents)), 2)
    fix = f"agent-memory sync enable --agent claude --folder {documents}"
    assert both.err.endswith(f"\nNext: {fix}\n")
    assert machine.run("sync", "status", "--json").json == before  # nothing changed
    never = tools.exited(machine.run("sync", "disable", "--agent", "claude", "--folder", str(documents)))
    assert never.out == f"{documents} was not named for Claude Code's own memory: nothing changed.\n"
    tools.exited(machine.run(*fix.split()[1:]))  # the Next line works as written
    taken = tools.exited(machine.run("sync", "disable", "--agent", "claude", "--folder", str(documents)))
    assert taken.out.startswith(f"{documents} is no longer synced.")
