"""A folder store never leads outside itself: a symbolic link anywhere below its root, or a file with another hard
link, is never read. The one bad note is skipped (and said so) while the others are searched as usual; a skill
revision with one bad file is refused whole; what the store creates is owner-only."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import tools

SKILL = "---\nname: db-migrations\ndescription: Write safe database migrations.\n---\n\n# db-migrations\n"
LINK = "is a symbolic link (never followed out of the folder store)"
HARD_LINK = "has 2 hard links (another name may be a file outside the folder store)"


@pytest.fixture
def store(folder_store) -> Path:
    return Path(folder_store[len("file://") :])


@pytest.fixture
def writer(machine, folder_store):
    """Machine A on the folder store, with three notes in project demo and one in project other."""
    machine.setup(folder_store)
    machine.ids = [machine.save(f"Finding {i}: widgets need grease.").json["id"] for i in range(3)]
    other = machine.work.parent / "other"
    other.mkdir()
    tools.exited(machine.run("project", "map", "other", cwd=other))
    machine.other_dir = other
    saved = machine.run("save", "--json", input="Finding: other widgets.", cwd=other)
    machine.other_id = saved.json["id"]
    return machine


@pytest.fixture
def reader(machine_b, folder_store):
    """Machine B on the same store, with nothing cached yet."""
    return machine_b.setup(folder_store)


def note_file(store: Path, note_id: str, project: str = "demo") -> Path:
    return store / "projects" / project / "notes" / f"{note_id}.md"


def symlinked_note(store, tmp_path, note_id):
    file = note_file(store, note_id)
    outside = tmp_path / "outside.md"
    outside.write_bytes(file.read_bytes())  # a valid note: following the link would find it
    file.unlink()
    file.symlink_to(outside)
    return f"projects/demo/notes/{note_id}.md", LINK, outside


def hard_linked_note(store, tmp_path, note_id):
    file = note_file(store, note_id)
    outside = tmp_path / "outside.md"
    outside.write_bytes(file.read_bytes())
    os.chmod(outside, 0o600)
    file.unlink()
    os.link(outside, file)
    return f"projects/demo/notes/{note_id}.md", HARD_LINK, outside


def symlinked_folder(level: str):
    def plant(store, tmp_path, _note_id):
        folder = store / level
        outside = tmp_path / "outside-folder"
        shutil.move(folder, outside)
        folder.symlink_to(outside, target_is_directory=True)
        return level, LINK, outside

    return plant


def snapshot(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "plant",
    [
        symlinked_note,
        hard_linked_note,
        symlinked_folder("projects/demo/notes"),
        symlinked_folder("projects/demo"),
    ],
    ids=["symlinked-note", "hard-linked-note", "symlinked-notes-folder", "symlinked-project-folder"],
)
def test_search_skips_the_bad_object_finds_the_others_and_says_so(writer, reader, store, tmp_path, plant):
    bad_id = writer.ids[1]
    bad, why, outside = plant(store, tmp_path, bad_id)
    before = snapshot(outside)
    whole_folder = not bad.endswith(".md")
    good = [] if whole_folder else [writer.ids[2], writer.ids[0]]

    found = reader.run("search", "widgets", "--json")
    tools.exited(found)
    assert [r["id"] for r in found.json["results"]] == good
    local = store / bad
    assert found.json["freshness"] == {
        "status": "fresh",
        "reason": None,
        "detail": None,
        "kind": "listing",
        "skipped": [
            {
                "path": bad,
                "reason": "unsafe",
                "detail": f"{bad} {why}, so it was not read",
                "next": f"rm {local} (agent-memory never writes such an entry), then run the command again",
            }
        ],
        "gone": [],
    }
    assert f"Skipped an object of the folder store: {bad} {why}" in found.err
    assert f"\nNext: rm {local} (agent-memory never writes such an entry)" in found.err
    text = reader.run("search", "widgets")
    tools.exited(text)
    assert bad_id not in text.out and f"Skipped an object of the folder store: {bad}" in text.err

    read = reader.run("read", bad_id)
    tools.exited(read, 5)
    assert "so it was not read" in read.err and "Next: rm " in read.err and read.out == ""
    assert not list(reader.state.joinpath("cache").rglob(f"{bad_id}.md"))  # never copied into the cache

    # another project of the same store is untouched by the bad object
    other = reader.work.parent / "other"
    other.mkdir()
    reader.run("project", "map", "other", cwd=other)
    elsewhere = reader.run("search", "widgets", "--json", cwd=other)
    assert [r["id"] for r in elsewhere.json["results"]] == [writer.other_id]
    assert elsewhere.json["freshness"]["skipped"] == []

    # the machine that wrote the note keeps its verified copy: a skipped object is never dropped from a cache
    mine = writer.run("search", "widgets", "--json")
    tools.exited(mine)
    assert bad_id in [r["id"] for r in mine.json["results"]]
    assert [s["path"] for s in mine.json["freshness"]["skipped"]] == [bad]

    assert snapshot(outside) == before  # nothing outside the store was changed either

    local.unlink()  # what Next says
    cleared = reader.run("search", "widgets", "--json")
    tools.exited(cleared)
    assert cleared.json["freshness"]["skipped"] == [] and cleared.err == ""


def test_a_save_never_writes_through_a_linked_folder(writer, store, tmp_path):
    outside = tmp_path / "outside-folder"
    shutil.move(store / "projects" / "demo", outside)
    (store / "projects" / "demo").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    saved = writer.save("Finding: must not land outside the store.")
    tools.exited(saved, 75)
    assert "projects/demo is a symbolic link" in saved.json["message"]
    assert snapshot(outside) == before
    (store / "projects" / "demo").unlink()
    retried = writer.run("save", "--retry", saved.json["id"], "--json")
    tools.exited(retried)
    assert note_file(store, saved.json["id"]).is_file()


def test_a_note_a_writer_is_still_linking_into_place_is_accepted(writer, reader, store):
    # `put` links its temporary into place, then unlinks it: here a writer killed in between left it behind
    note = note_file(store, writer.ids[0])
    os.link(note, note.parent / ".tmp-0123456789abcdef")
    found = reader.run("search", "widgets", "--json")
    tools.exited(found)
    assert found.json["freshness"]["skipped"] == []
    assert writer.ids[0] in [r["id"] for r in found.json["results"]]
    tools.exited(reader.run("read", writer.ids[0]))

    # but a third name, or a second one that is not a temporary beside it, is not the writer's
    os.link(note, note.parent.parent / "elsewhere.md")
    third = reader.run("read", writer.ids[0], "--fresh")
    tools.exited(third, 5)
    assert "has 3 hard links" in third.err


def test_a_planted_fifo_is_skipped_without_blocking(writer, reader, store):
    bad = note_file(store, writer.ids[0])
    bad.unlink()
    os.mkfifo(bad, 0o600)
    found = reader.run("search", "widgets", "--json", timeout=60)
    tools.exited(found)
    assert found.json["freshness"]["skipped"][0]["detail"].endswith("is not a regular file, so it was not read")
    tools.exited(reader.run("read", writer.ids[0], timeout=60), 5)


def test_a_note_swapped_for_a_link_after_the_listing_is_skipped_by_the_download(writer, store, tmp_path, monkeypatch):
    """The download checks each object again as it opens it: one replaced between listing and fetch is skipped,
    and the notes before and after it are cached."""
    from agent_memory.memory.cache import ProjectCache
    from agent_memory.memory.refresh import refresh
    from agent_memory.store.local import FolderStore

    monkeypatch.setenv("AGENT_MEMORY_HOME", str(tmp_path / "in-process"))
    folder = FolderStore(store)
    listing = folder.list("projects/demo/notes")
    monkeypatch.setattr(folder, "list", lambda prefix: listing)  # the listing taken before the swap
    symlinked_note(store, tmp_path, writer.ids[1])
    cache = ProjectCache(f"file://{store}", "demo")
    skipped = refresh(folder, cache).skipped
    assert [s.path for s in skipped] == [f"projects/demo/notes/{writer.ids[1]}.md"]
    assert sorted(cache.verified_checksums()) == sorted([writer.ids[0], writer.ids[2]])


# -- skills ---------------------------------------------------------------------------------------------------


@pytest.fixture
def published(machine, folder_store, store, tmp_path):
    machine.setup(folder_store)
    source = tmp_path / "src" / "db-migrations"
    (source / "references").mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL)
    (source / "references" / "checklist.md").write_text("- back up first\n")
    result = machine.run("publish-skill", str(source), "--json")
    tools.exited(result)
    machine.revision = result.json["revision"]
    machine.revision_dir = store / "skills" / "db-migrations" / machine.revision
    return machine


def _symlinked_revision(revision_dir: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "outside-revision"
    shutil.move(revision_dir, outside)
    revision_dir.symlink_to(outside, target_is_directory=True)
    return outside


def _hard_linked_file(revision_dir: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "private.txt"
    outside.write_text("- back up first\n")  # the same size as the listed file
    os.chmod(outside, 0o600)
    (revision_dir / "references" / "checklist.md").unlink()
    os.link(outside, revision_dir / "references" / "checklist.md")
    return outside


def _symlinked_file(revision_dir: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "private.txt"
    outside.write_text("- back up first\n")
    (revision_dir / "references" / "checklist.md").unlink()
    (revision_dir / "references" / "checklist.md").symlink_to(outside)
    return outside


@pytest.mark.parametrize(
    "plant, shown",
    [
        (_symlinked_revision, "skills/db-migrations/{revision} is a symbolic link"),
        (_hard_linked_file, "skills/db-migrations/{revision}/references/checklist.md has 2 hard links"),
        (_symlinked_file, "skills/db-migrations/{revision}/references/checklist.md is a symbolic link"),
    ],
    ids=["symlinked-revision-folder", "hard-linked-file", "symlinked-file"],
)
def test_a_skill_revision_with_a_bad_object_is_refused_whole(
    published, machine_b, folder_store, tmp_path, plant, shown
):
    outside = plant(published.revision_dir, tmp_path)
    before = snapshot(outside)
    reader = machine_b.setup(folder_store)
    result = reader.run("install-skill", "db-migrations", "--revision", published.revision)
    tools.exited(result, 5)
    assert f"db-migrations@{published.revision} was refused: {shown.format(revision=published.revision)}" in result.err
    assert "\nNext: agent-memory search --skills db-migrations (then install another revision)" in result.err
    for root in (reader.home / ".agents" / "skills", reader.home / ".claude" / "skills"):
        assert not root.exists() or list(root.iterdir()) == []  # nothing installed, no staging left behind
    assert not list(reader.state.joinpath("state").rglob("skill-download-*"))
    refused = reader.run(
        "read", "--skill", "db-migrations", "--revision", published.revision, "references/checklist.md"
    )
    tools.exited(refused, 5)
    assert "so it was not read" in refused.err
    assert snapshot(outside) == before


def test_an_unsafe_modes_object_refuses_the_install(published, machine_b, folder_store, tmp_path):
    modes = published.revision_dir.parent / f"{published.revision}.modes.json"
    outside = tmp_path / "modes.json"
    outside.write_text(json.dumps({"executable": ["SKILL.md"]}))
    modes.symlink_to(outside)
    reader = machine_b.setup(folder_store)
    result = reader.run("install-skill", "db-migrations", "--revision", published.revision)
    tools.exited(result, 5)
    assert f"{published.revision}.modes.json is a symbolic link" in result.err
    assert not (reader.home / ".agents" / "skills" / "db-migrations").exists()


# -- what the store creates -------------------------------------------------------------------------------------


def test_everything_the_store_creates_is_owner_only_whatever_the_umask(machine, folder_store, store, tmp_path):
    previous = os.umask(0o000)
    try:
        machine.setup(folder_store)
        tools.exited(machine.save("Finding: private by default."))
        source = tmp_path / "src" / "db-migrations"
        (source / "references").mkdir(parents=True)
        (source / "SKILL.md").write_text(SKILL)
        (source / "references" / "checklist.md").write_text("- back up first\n")
        os.chmod(source / "references" / "checklist.md", 0o777)
        tools.exited(machine.run("publish-skill", str(source)))
    finally:
        os.umask(previous)
    entries = list(store.rglob("*"))
    assert any(p.is_dir() for p in entries) and any(p.is_file() for p in entries)
    wrong = [
        f"{p} {oct(stat.S_IMODE(p.lstat().st_mode))}"
        for p in entries
        if stat.S_IMODE(p.lstat().st_mode) != (0o700 if p.is_dir() else 0o600)
    ]
    assert wrong == []


# -- concurrency ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_concurrent_saves_never_make_a_search_skip_a_sound_note(machine, machine_b, folder_store):
    import threading

    writer = machine.setup(folder_store)
    reader = machine_b.setup(folder_store)
    searches = []
    done = threading.Event()

    def search_in_a_loop():
        while not done.is_set():
            searches.append(reader.run("search", "widgets", "--json"))

    looping = threading.Thread(target=search_in_a_loop)
    looping.start()
    try:
        for round_ in range(6):  # two saves at once, again and again
            saves = [writer.popen("save", "--json", input=f"Finding {round_}-{i}: widgets.".encode()) for i in (0, 1)]
            for proc in saves:
                tools.exited(tools.finished(proc, timeout=120))
    finally:
        done.set()
        looping.join()
    assert len(searches) > 1, "the searches ran while the saves did"
    for found in searches:
        tools.exited(found)
        assert found.json["freshness"]["skipped"] == [], found.json["freshness"]
    final = reader.run("search", "widgets", "--limit", "100", "--json")
    assert len(final.json["results"]) == 12 and final.json["freshness"]["skipped"] == []
