"""The outbox: every upload is planned on disk first, claimed before it is read, confirmed before it goes away;
racing workers agree, and damaged plans are shown and kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tools
from conftest import BUCKET, OWNER

HF_BUCKET = f"hf://buckets/{BUCKET}"


def outbox(machine) -> Path:
    return machine.state / "state" / "outbox"


def plans(machine) -> list[str]:
    folder = outbox(machine)
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.name != "done")


def notes_in(hub) -> list[str]:
    return [p for p in hub.list_paths(BUCKET) if p.startswith("projects/")]


def pending_notes(alice, hub, count: int) -> list[str]:
    hub.fault("batch", "fail", status=500, times=count)
    ids = [alice.save(f"Pending finding number {i}.").json["id"] for i in range(count)]
    assert notes_in(hub) == []
    hub.clear_faults()
    return ids


# -- racing workers -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_four_concurrent_retry_all_all_succeed_and_upload_each_note_once(alice, hub):
    ids = pending_notes(alice, hub, 6)
    procs = [alice.popen("save", "--retry-all", "--json") for _ in range(4)]
    outputs = [(proc.wait(timeout=120), *proc.communicate()) for proc in procs]
    for code, out, err in outputs:
        assert code == 0, err.decode()
        results = json.loads(out)["results"]
        assert {r["status"] for r in results} == {"saved"}, results
        assert {r["id"] for r in results} <= set(ids)
    # every note was reported saved by some worker, and each exists exactly once, written once
    reported = {r["id"] for _c, out, _e in outputs for r in json.loads(out)["results"]}
    assert reported == set(ids)
    assert len(notes_in(hub)) == 6
    assert all(hub.file_info(BUCKET, path)["writes"] == 1 for path in notes_in(hub))
    assert plans(alice) == []
    assert alice.run("status", "--json").json["pending"] == []


@pytest.mark.slow
def test_concurrent_retries_of_one_note_all_report_it_saved(alice, hub):
    (note_id,) = pending_notes(alice, hub, 1)
    procs = [alice.popen("save", "--retry", note_id, "--json") for _ in range(4)]
    for proc in procs:
        ended = tools.exited(tools.finished(proc, timeout=120))
        out = ended.stdout
        assert json.loads(out)["status"] == "saved"
    assert hub.file_info(BUCKET, notes_in(hub)[0])["writes"] == 1


def test_retry_of_a_note_saved_earlier_reports_it_saved(alice, hub):
    saved = alice.save("Already shared.").json
    again = alice.run("save", "--retry", saved["id"], "--json")
    tools.exited(again)
    assert (again.json["status"], again.json["path"]) == ("saved", saved["path"])
    assert hub.file_info(BUCKET, saved["path"])["writes"] == 1


def test_retry_of_a_note_shared_from_another_machine_reports_it_saved(alice, machine_b, hub):
    other = machine_b.setup(BUCKET)
    saved = other.save("Saved on the laptop.").json
    again = alice.run("save", "--retry", saved["id"], "--json")
    tools.exited(again)
    assert again.json["status"] == "saved" and "already in" in again.json["message"]


def test_retry_of_an_unknown_note_is_an_error_with_next(alice, hub):
    result = alice.run("save", "--retry", "20260101-000000-000000-0000000000")
    tools.exited(result, 1)
    assert "No pending note" in result.err and "Next: agent-memory pending" in result.err


def test_one_retry_verb_names_every_upload_and_the_old_spellings_say_the_same(alice, hub, tmp_path):
    """`pending retry ID` retries one note or publication; `save --retry` and `publish-skill --retry` are its
    aliases, with the same output; every hint names `pending retry`."""
    hub.fault("batch", "fail", status=500, times=0)
    note = alice.save("Kept while the Hub is away.").json
    source = tmp_path / "skill"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: waiting\ndescription: Waits.\n---\n\nBody.\n")
    skill = alice.run("publish-skill", str(source), "--json")
    assert note["status"] == "pending"
    tools.exited(skill, 75)
    assert note["next"].endswith(f"agent-memory pending retry {note['id']}")
    assert f"agent-memory pending retry {skill.json['revision']}" in skill.err
    assert "run agent-memory pending retry." in alice.run("search", "kept").err
    still = alice.run("pending", "retry", note["id"], "--json")
    tools.exited(still, 75)
    assert still.json.keys() == note.keys() and still.json["status"] == "pending"
    hub.clear_faults()
    assert alice.run("pending", "retry", "--help").out.count("ID") >= 1
    by_verb = alice.run("pending", "retry", note["id"], "--json")
    by_alias = alice.run("save", "--retry", note["id"], "--json")  # done already: reported as shared
    tools.exited(by_verb)
    tools.exited(by_alias)
    assert by_verb.json["status"] == by_alias.json["status"] == "saved"
    published = alice.run("pending", "retry", skill.json["revision"])
    tools.exited(published)
    assert published.out == f"Published: waiting revision {skill.json['revision']} (1 file)\n"
    again = alice.run("publish-skill", "--retry", skill.json["revision"])
    tools.exited(again, 1)
    assert "No pending publication" in again.err
    unknown = alice.run("pending", "retry", "20260101-000000-000000-0000000000")
    tools.exited(unknown, 1)
    assert "Nothing with the id" in unknown.err and "Next: agent-memory pending" in unknown.err
    tools.exited(alice.run("pending", "retry", "../x"), 2)


@pytest.mark.slow
def test_three_concurrent_publish_retries_all_report_it_published(alice, hub, tmp_path):
    source = tmp_path / "skill"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: racer\ndescription: Races.\n---\n\nBody.\n")
    (source / "notes.md").write_text("supporting\n")
    hub.fault("batch", "fail", status=500)
    pending = alice.run("publish-skill", str(source), "--json")
    tools.exited(pending, 75)
    revision = pending.json["revision"]
    hub.clear_faults()
    procs = [alice.popen("publish-skill", "--retry", revision, "--json") for _ in range(3)]
    for proc in procs:
        ended = tools.exited(tools.finished(proc, timeout=120))
        out = ended.stdout
        assert json.loads(out)["status"] == "published"
    assert hub.file_info(BUCKET, f"skills/racer/{revision}/SKILL.md")["writes"] == 1
    assert alice.run("status", "--json").json["pending_skills"] == []


# -- damaged plans ------------------------------------------------------------------------------------------


def _one_pending(alice, hub) -> tuple[str, Path]:
    hub.fault("batch", "fail", status=500)
    note = alice.save("A note whose plan gets damaged.").json
    hub.clear_faults()
    return note["id"], outbox(alice) / f"note-{note['id']}"


@pytest.mark.parametrize("damage", ["plan-cut-short", "plan-missing", "bytes-cut-short", "bytes-changed"])
def test_a_damaged_plan_is_shown_never_skipped_and_its_bytes_are_kept(alice, hub, tmp_path, damage):
    note_id, folder = _one_pending(alice, hub)
    original = (folder / "objects" / "0").read_bytes()
    if damage == "plan-cut-short":
        plan = folder / "plan.json"
        plan.write_bytes(plan.read_bytes()[:40])
    elif damage == "plan-missing":
        (folder / "plan.json").unlink()
    elif damage == "bytes-cut-short":
        (folder / "objects" / "0").write_bytes(original[:10])
    else:
        (folder / "objects" / "0").write_bytes(original.replace(b"damaged", b"DAMAGED"))
    kept = (folder / "objects" / "0").read_bytes()

    status = alice.run("status", "--json").json
    assert [(d["id"], d["kind"], d["file"]) for d in status["damaged"]] == [(note_id, "note", str(folder))]
    assert "DAMAGED note " + note_id in alice.run("status").out

    retried = alice.run("save", "--retry-all", "--json")
    tools.exited(retried, 1)
    assert note_id in retried.err and "Next: agent-memory pending export" in retried.err
    assert retried.json["damaged"][0]["id"] == note_id
    single = alice.run("save", "--retry", note_id)
    tools.exited(single, 1)
    assert "damaged" in single.err and f"pending export {note_id}" in single.err
    assert notes_in(hub) == []  # a damaged plan is never uploaded
    assert (folder / "objects" / "0").read_bytes() == kept  # nor changed

    exported = alice.run("pending", "export", note_id, "--to", str(tmp_path / "rescued.md"), "--json")
    tools.exited(exported)
    assert Path(exported.json["written"][0]).read_bytes() == kept
    discarded = alice.run("pending", "discard", note_id, "--json")
    tools.exited(discarded)
    assert (Path(discarded.json["kept"]) / "objects" / "0").read_bytes() == kept
    assert alice.run("status", "--json").json["damaged"] == []
    tools.exited(alice.run("save", "--retry-all"))


def test_pending_lists_exports_and_discards_on_purpose(alice, hub, tmp_path):
    note_id, folder = _one_pending(alice, hub)
    listed = alice.run("pending", "--json")
    tools.exited(listed)
    assert [n["id"] for n in listed.json["notes"]] == [note_id]
    assert set(listed.json) == {"notes", "skills", "sync", "damaged"}
    assert note_id in alice.run("pending", "list").out

    target = tmp_path / "exported.md"
    tools.exited(alice.run("pending", "export", note_id, "--to", str(target)))
    assert target.read_bytes() == (folder / "objects" / "0").read_bytes()
    again = alice.run("pending", "export", note_id, "--to", str(target))
    tools.exited(again, 2)
    assert "never overwrites" in again.err and "Next:" in again.err

    unknown = alice.run("pending", "discard", "20260101-000000-000000-0000000000")
    tools.exited(unknown, 1)
    assert "Next: agent-memory pending" in unknown.err
    invalid = alice.run("pending", "export", "../x", "--to", str(tmp_path / "x"))
    tools.exited(invalid, 2)
    assert "Invalid id" in invalid.err
    discarded = alice.run("pending", "discard", note_id)
    tools.exited(discarded)
    assert "kept in" in discarded.out
    assert not folder.exists()
    assert alice.run("pending", "--json").json["notes"] == []
    assert alice.run("save", "--retry-all", "--json").json == {"results": [], "damaged": []}


def test_a_save_killed_before_its_plan_is_complete_leaves_nothing_that_looks_pending(alice, hub):
    staging = outbox(alice) / ".tmp-note-20260101-000000-000000-0000000000-dead"
    (staging / "objects").mkdir(parents=True)
    (staging / "objects" / "0").write_bytes(b"half")
    assert alice.run("status", "--json").json["pending"] == []
    assert alice.run("save", "--retry-all", "--json").json == {"results": [], "damaged": []}


def test_a_bucket_that_is_gone_keeps_the_note_pending_until_it_is_exported_or_discarded(alice, hub, tmp_path):
    hub.create_bucket(f"{OWNER}/doomed", private=True)
    alice.run("config", "set", "bucket", f"{OWNER}/doomed")
    hub.fault("batch", "fail", status=500)
    note = alice.save("Written for a bucket that is deleted later.").json
    hub.clear_faults()
    hub.delete_bucket(f"{OWNER}/doomed")
    retried = alice.run("save", "--retry-all", "--json")
    tools.exited(retried, 75)
    assert retried.json["results"][0]["status"] == "pending"
    tools.exited(alice.run("pending", "export", note["id"], "--to", str(tmp_path / "n.md")))
    tools.exited(alice.run("pending", "discard", note["id"]))
    tools.exited(alice.run("save", "--retry-all"))
