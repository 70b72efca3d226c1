"""Objects are bounded before they are fetched: a note or a skill file whose listed size is over its limit is never
downloaded, whatever it holds, and is reported (`sync.skipped`, `status`, stderr) with its path and the command
that removes it; the rest is found. A project with more objects than `refresh.MAX_NOTES` is refused, loudly.

Peak memory is the command's own (`RUSAGE_CHILDREN` of a small parent): a search that met a 64 MiB note costs no
more than one that did not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import tools
from agent_memory.memory import refresh
from agent_memory.memory.cache import NOTE_FILE_MAX
from agent_memory.memory.notes import MAX_BYTES
from agent_memory.skills import catalog
from agent_memory.skills.layout import FILE_MAX
from conftest import BUCKET

BIG = 64 << 20
GOOD = [f"20260101-000000-{i:06d}-00000000ee" for i in range(5)]
HUGE = "20260101-000000-999999-00000000ee"
SLACK = 24 << 20  # what two runs of the same search may differ by in peak memory, far below the big note


def _note(note_id: str, body: str = "bounded note") -> bytes:
    return f"---\nid: {note_id}\ntitle: Note {note_id[-12:]}\n---\n\n{body}\n".encode()


def _huge() -> bytes:
    head = _note(HUGE, "bounded note, and more")
    return head + b"x" * (BIG - len(head))


# Linux keeps a process's peak RSS across exec, and the test process (with the emulator, and the big object in its
# memory) is large: the command runs as the child of a small process, which reads its children's peak.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def _peak(machine, *args: str) -> tuple[int, int, str, str]:
    """`(exit code, peak RSS in bytes, stdout, stderr)` of `agent-memory ARGS` as a process of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(peak), sys.executable, "-m", "agent_memory", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=machine.work,
            env=machine.env,
            timeout=300,
            check=False,
        )
        return proc.returncode, int(peak.read_text()) * 1024, proc.stdout.decode(), proc.stderr.decode()


def _search(machine) -> tuple[dict, int, str]:
    code, peak, out, err = _peak(machine, "search", "bounded note", "--json")
    assert code == 0, err
    return json.loads(out), peak, err


@pytest.fixture(params=["hub", "folder"])
def bucket(request, machine, machine_b, tmp_path):
    """`(reader, writer of a path, removal command of a path)` over a bucket holding the GOOD notes."""
    if request.param == "hub":
        hub = request.getfixturevalue("hub")

        def put(path: str, data: bytes) -> None:
            hub.put_file(BUCKET, path, data)

        uri, removal = BUCKET, lambda path: f"hf buckets rm {BUCKET}/{path}"
    else:
        root = Path(request.getfixturevalue("folder_store").removeprefix("file://"))

        def put(path: str, data: bytes) -> None:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)

        uri, removal = f"file://{root}", lambda path: f"rm {root / path}"
    for note_id in GOOD:
        put(f"projects/demo/notes/{note_id}.md", _note(note_id))
    machine.setup(uri)
    machine_b.setup(uri)
    return machine, machine_b, put, removal


def test_an_oversized_note_is_never_downloaded_and_is_reported(bucket):
    before, reader, put, removal = bucket
    found, baseline, _err = _search(before)  # the same search without the big note: its peak memory
    assert sorted(r["id"] for r in found["results"]) == sorted(GOOD)

    path = f"projects/demo/notes/{HUGE}.md"
    put(path, _huge())
    found, peak, err = _search(reader)
    assert sorted(r["id"] for r in found["results"]) == sorted(GOOD)
    assert found["freshness"]["status"] == "fresh"
    detail = f"{path} is {BIG} bytes, more than the {NOTE_FILE_MAX} a note may have, so it was not read"
    skipped = {"path": path, "reason": "oversized", "detail": detail, "next": removal(path)}
    assert found["freshness"]["skipped"] == [skipped]
    assert f"Skipped an object of the bucket: {detail}.\nNext: {removal(path)}" in err
    assert peak < baseline + SLACK, (peak, baseline)
    assert not list(reader.state.joinpath("cache").rglob(f"{HUGE}.md"))
    assert reader.run("status", "--json").json["skipped"] == [skipped]

    code, read_peak, out, err = _peak(reader, "read", HUGE)  # refused before it is downloaded
    assert (code, out) == (5, "") and f"{detail}.\nNext: {removal(path)}" in err and read_peak < baseline + SLACK
    again, peak, _err = _search(reader)  # the feed or the listing: never downloaded, the rest found
    assert sorted(r["id"] for r in again["results"]) == sorted(GOOD) and peak < baseline + SLACK
    assert reader.run("status", "--json").json["skipped"] == [skipped]


def test_an_oversized_skill_file_is_never_downloaded_and_is_reported(bucket):
    _before, reader, put, removal = bucket
    put("skills/tidy/20260101-000000/SKILL.md", b"---\nname: tidy\ndescription: Tidy up bounded notes.\n---\n\nTidy.\n")
    big = "skills/bloat/20260101-000000/SKILL.md"
    head = b"---\nname: bloat\ndescription: Bloated.\n---\n\n"
    put(big, head + b"x" * (FILE_MAX + 1 - len(head)))
    code, peak, out, err = _peak(reader, "search", "--skills", "--json")
    assert code == 0, err
    assert [s["name"] for s in json.loads(out)["skills"]] == ["tidy"]
    detail = f"{big} is {FILE_MAX + 1} bytes, more than the {FILE_MAX} a skill file may have, so it was not read"
    assert f"Skipped an object of the bucket: {detail}.\nNext: {removal(big)}" in err
    assert peak < (FILE_MAX + 1) * 4 + (200 << 20)
    refused = reader.run("install-skill", "bloat", "--revision", "20260101-000000")
    tools.exited(refused, 5)
    assert f"SKILL.md in bloat@20260101-000000 is {FILE_MAX + 1} bytes" in refused.err
    assert not list(reader.state.rglob("bloat*"))


def test_a_project_with_more_objects_than_the_bound_is_refused_loudly(ready, folder_store, monkeypatch):
    root = Path(folder_store.removeprefix("file://"))
    monkeypatch.setattr(refresh, "MAX_NOTES", 4)  # in this process: the command runs in it
    for note_id in GOOD:  # five
        path = root / "projects" / "demo" / "notes" / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_note(note_id))
    found = ready.run("search", "bounded note", "--json")
    tools.exited(found)
    sync = found.json["freshness"]
    assert (sync["status"], sync["reason"]) == ("stale", "error") and found.json["results"] == []
    assert sync["detail"] == (
        f"project demo holds 5 objects in file://{root}, more than the 4 agent-memory reads for one project, "
        "so none was downloaded"
    )
    assert "Results come from the local cache only (error: project demo holds 5 objects" in found.err
    assert not list(ready.state.joinpath("cache").rglob("*.md"))
    monkeypatch.setattr(refresh, "MAX_NOTES", 5)
    assert len(ready.run("search", "bounded note", "--json").json["results"]) == 5


def test_a_note_of_the_largest_body_is_not_oversized(ready, machine_b, folder_store):
    """The limit is on the object: a body of 1 MiB, with its frontmatter, is a note like any other."""
    body = ("bounded note " + "x" * MAX_BYTES)[:MAX_BYTES]
    saved = ready.run("save", "--json", "--title", "Largest", input=body)
    tools.exited(saved)
    machine_b.setup(folder_store)
    found = machine_b.run("search", "bounded note", "--json")
    tools.exited(found)
    assert found.json["freshness"]["skipped"] == []
    assert [r["id"] for r in found.json["results"]] == [saved.json["id"]]


def test_a_bucket_with_more_skill_objects_than_the_bound_is_refused_loudly(ready, folder_store, monkeypatch):
    root = Path(folder_store.removeprefix("file://"))
    monkeypatch.setattr(catalog, "MAX_OBJECTS", 2)  # in this process: the command runs in it
    for name in ("tidy", "sort", "lint"):
        path = root / "skills" / name / "20260101-000000" / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"---\nname: {name}\ndescription: Keep things {name}.\n---\n\nBody.\n".encode())
    found = ready.run("search", "--skills", "--json")
    assert found.code == 0 and found.json["skills"] == []
    assert f"the skills of file://{root} are 3 objects, more than the 2 agent-memory reads" in found.err
    monkeypatch.setattr(catalog, "MAX_OBJECTS", 3)
    assert len(ready.run("search", "--skills", "--json").json["skills"]) == 3
