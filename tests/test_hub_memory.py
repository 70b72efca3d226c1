"""Notes in a Hugging Face bucket, through the real huggingface_hub and hf_xet against the Hub emulator."""

from __future__ import annotations

import json
import time

import pytest

import tools
from conftest import BUCKET, OWNER, TOKEN

HF_BUCKET = f"hf://buckets/{BUCKET}"


@pytest.fixture
def alice_laptop(machine_b, hub, tmp_path):
    # another checkout path, mapped to the same project name
    machine_b.work = machine_b.root / "elsewhere" / "repo"
    machine_b.work.mkdir(parents=True)
    return machine_b.setup(HF_BUCKET)


def _note_paths(hub):
    return [p for p in hub.list_paths(BUCKET) if p.startswith("projects/")]


def test_both_bucket_forms_are_accepted_and_stored_canonically(machine, hub):
    for form in (BUCKET, HF_BUCKET, f" {HF_BUCKET}/ "):
        assert machine.run("config", "set", "bucket", form, "--json").json["bucket"] == HF_BUCKET
    for bad in ("alice", "alice/memory/extra", "s3://x/y", "alice/me--mory", "file://relative/path"):
        result = machine.run("config", "set", "bucket", bad)
        tools.exited(result, 2, about=bad)
        assert "Malformed" in result.err
    assert machine.run("config", "show", "--json").json["bucket"] == HF_BUCKET


def test_two_machines_share_notes(alice, alice_laptop, hub):
    saved = alice.save("# Decision\n\nWe pin huggingface_hub to 2.4.0.\n", "--source", "pyproject.toml")
    tools.exited(saved)
    note = saved.json
    assert note["bucket"] == HF_BUCKET and note["status"] == "saved"
    assert _note_paths(hub) == [note["path"]]
    remote = hub.read_file(BUCKET, note["path"])

    found = alice_laptop.run("search", "pin HUGGINGFACE_hub", "--json")
    tools.exited(found)
    assert found.json["freshness"] == {
        "status": "fresh",
        "reason": None,
        "detail": None,
        "kind": "listing",
        "skipped": [],
        "gone": [],
    }
    assert [r["id"] for r in found.json["results"]] == [note["id"]]
    assert found.json["results"][0]["matches"] == [{"line": 3, "text": "We pin huggingface_hub to 2.4.0."}]

    read = alice_laptop.run("read", note["id"], "--json").json
    assert read["source"] == "cache"
    assert read["content"].encode() == remote
    fresh = alice_laptop.run("read", note["id"], "--fresh", "--json").json
    assert fresh["source"] == "bucket" and fresh["content"].encode() == remote
    assert alice_laptop.run("read", note["id"]).out.encode() == remote


def test_read_fetches_a_note_that_is_not_cached_yet(alice, alice_laptop, hub):
    note = alice.save("fetched on demand").json
    read = alice_laptop.run("read", note["id"], "--json")
    tools.exited(read)
    assert read.json["source"] == "bucket"
    assert alice_laptop.run("read", note["id"], "--json").json["source"] == "cache"


def test_append_only_corrections(alice, hub):
    first = alice.save("The queue lives in ~/.cache.").json
    info = hub.file_info(BUCKET, first["path"])
    second = alice.save("Correction: the queue lives in the state folder.", "--corrects", first["id"]).json
    assert sorted(_note_paths(hub)) == sorted([first["path"], second["path"]])
    assert hub.file_info(BUCKET, first["path"]) == info  # untouched, date and all
    assert info["writes"] == 1
    assert f"corrects: {first['id']}" in hub.read_file(BUCKET, second["path"]).decode()


@pytest.mark.slow
def test_twenty_concurrent_saves_from_two_homes(alice, alice_laptop, hub):
    # twenty processes share the cores: each one's budget and the wait for it grow with the machine's load
    env = {"AGENT_MEMORY_TIMEOUT": f"{tools.scaled(60):.0f}"}
    procs = [
        (alice if i % 2 else alice_laptop).popen(
            "save", "--json", "--title", f"note {i}", input=f"body {i}".encode(), env=env
        )
        for i in range(20)
    ]
    results = {}
    for i, proc in enumerate(procs):
        ended = tools.exited(tools.finished(proc, timeout=tools.scaled(180)))
        out = ended.stdout
        results[i] = json.loads(out)
    assert len({r["id"] for r in results.values()}) == 20
    assert sorted(_note_paths(hub)) == sorted(r["path"] for r in results.values())
    for i, r in results.items():
        assert hub.file_info(BUCKET, r["path"])["writes"] == 1
        assert f"title: note {i}\n" in hub.read_file(BUCKET, r["path"]).decode()
    listed = alice.run("search", "body", "--limit", "50", "--json").json["results"]
    assert len(listed) == 20


def test_failed_upload_stays_pending_and_retry_sends_the_same_bytes(alice, hub):
    hub.fault("batch", "fail", status=500)
    result = alice.save("Finding: flock is advisory.")
    tools.exited(result, 75)
    note = result.json
    assert note["status"] == "pending"
    assert "Not shared yet" in note["message"] and "upload failed" in note["message"]
    assert _note_paths(hub) == []
    plan_folder = alice.state / "state" / "outbox" / f"note-{note['id']}"
    plan = json.loads((plan_folder / "plan.json").read_text())
    assert (plan["bucket"], plan["objects"][0]["path"]) == (HF_BUCKET, note["path"])
    kept = (plan_folder / "objects" / "0").read_bytes()

    retried = alice.run("save", "--retry", note["id"], "--json")
    tools.exited(retried)
    assert retried.json["status"] == "saved" and retried.json["path"] == note["path"]
    assert _note_paths(hub) == [note["path"]]
    assert hub.read_file(BUCKET, note["path"]) == kept
    assert not plan_folder.exists()


def test_unknown_outcome_is_confirmed_by_reading_back(alice, hub):
    hub.fault("batch", "apply-then-fail", status=500)
    result = alice.save("Applied, but the answer was lost.")
    tools.exited(result)
    assert result.json["status"] == "saved"
    assert _note_paths(hub) == [result.json["path"]]
    assert hub.file_info(BUCKET, result.json["path"])["writes"] == 1
    assert alice.run("status", "--json").json["pending"] == []


def test_unknown_outcome_that_cannot_be_confirmed_stays_pending_then_retry_writes_nothing(alice, hub):
    hub.fault("batch", "apply-then-fail", status=502)
    hub.fault("paths-info", "fail", status=500)
    note = alice.save("Applied remotely, not confirmed locally.").json
    assert note["status"] == "pending"
    assert _note_paths(hub) == [note["path"]]
    retried = alice.run("save", "--retry", note["id"], "--json").json
    assert retried["status"] == "saved"
    assert _note_paths(hub) == [note["path"]]
    assert hub.file_info(BUCKET, note["path"])["writes"] == 1  # confirmed, not uploaded again


def test_a_process_killed_after_the_remote_write_is_recovered_by_retry(alice, hub):
    hub.fault("batch", "apply-then-hang", seconds=60)
    proc = alice.popen("save", "--json", input=b"Killed mid-flight.")
    deadline = time.monotonic() + 60
    while not _note_paths(hub):
        assert time.monotonic() < deadline, "the batch never reached the emulator"
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    pending = alice.run("status", "--json").json["pending"]
    assert len(pending) == 1
    hub.clear_faults()
    retried = alice.run("save", "--retry-all", "--json")
    tools.exited(retried)
    assert [r["status"] for r in retried.json["results"]] == ["saved"]
    assert _note_paths(hub) == [pending[0]["path"]]
    assert hub.file_info(BUCKET, pending[0]["path"])["writes"] == 1


def test_pending_keeps_its_destination_when_the_configuration_changes(alice, hub, tmp_path):
    hub.fault("batch", "fail", status=500)
    note = alice.save("Destined for alice/memory and project demo.").json
    assert note["status"] == "pending"
    hub.create_bucket(f"{OWNER}/other")
    alice.run("config", "set", "bucket", f"{OWNER}/other")
    alice.run("project", "map", "renamed")
    retried = alice.run("save", "--retry", note["id"], "--json").json
    assert (retried["bucket"], retried["project"], retried["path"]) == (HF_BUCKET, "demo", note["path"])
    assert hub.list_paths(f"{OWNER}/other") == []
    assert _note_paths(hub) == [note["path"]]


def test_retry_all_reports_each_and_exits_75_while_any_stays_pending(alice, hub):
    hub.fault("batch", "fail", status=500, times=0)
    ids = [alice.save(f"pending {i}").json["id"] for i in range(2)]
    still = alice.run("save", "--retry-all", "--json")
    tools.exited(still, 75)
    assert [r["id"] for r in still.json["results"]] == ids
    assert {r["status"] for r in still.json["results"]} == {"pending"}
    hub.clear_faults()
    done = alice.run("save", "--retry-all", "--json")
    tools.exited(done)
    assert [r["status"] for r in done.json["results"]] == ["saved", "saved"]
    assert alice.run("save", "--retry-all", "--json").json == {"results": [], "damaged": []}


def test_a_failed_or_partial_listing_preserves_the_cache(alice, alice_laptop, hub):
    first = [alice.save(f"cached note {i}").json["id"] for i in range(4)]
    assert len(alice_laptop.run("search", "cached note", "--json").json["results"]) == 4
    alice.save("cached note, newer")
    hub.feed_off()  # the listing is what is tested here: without the feed, every refresh lists
    hub.page_size = 2
    hub.fault("tree", "fail", status=500, after=1)  # the second page fails
    stale = alice_laptop.run("search", "cached note", "--json")
    tools.exited(stale)
    assert stale.json["freshness"]["status"] == "stale" and stale.json["freshness"]["reason"] == "error"
    assert sorted(r["id"] for r in stale.json["results"]) == sorted(first)
    hub.clear_faults()  # the 500 is remembered as an outage: --online asks the Hub before its wait is over
    assert len(alice_laptop.run("search", "cached note", "--online", "--json").json["results"]) == 5


def test_an_interrupted_download_never_appears_as_a_cached_note(alice, alice_laptop, hub):
    note = alice.save("needs downloading").json
    hub.fault("xet-read-token", "fail", status=403, times=0)
    result = alice_laptop.run("search", "downloading", "--json")
    assert result.json["freshness"]["status"] == "stale"
    assert result.json["results"] == []
    cache = alice_laptop.state / "cache"
    assert [p for p in cache.rglob("*") if p.is_file() and p.suffix == ".md"] == []
    assert [p for p in cache.rglob(".download-*")] == []
    hub.clear_faults()
    again = alice_laptop.run("search", "downloading", "--json").json
    assert [r["id"] for r in again["results"]] == [note["id"]]


def test_offline_and_auth_failures_are_reported_differently(alice, hub):
    """Each says what happened and what fixes it, in words of the Hub alone (never of a folder store's drive)."""
    cached = alice.save("something cached").json
    alice.run("search", "")

    hub.stop()
    offline_save = alice.save("written while offline")
    tools.exited(offline_save, 75)
    pending = offline_save.json
    said = f"Not shared yet: {pending['id']} is kept on this machine only, because the bucket could not be reached: "
    assert pending["message"].startswith(said) and pending["message"].endswith("; do not save it again.")
    assert pending["next"] == f"check this machine's network, then run: agent-memory pending retry {pending['id']}"
    text = alice.run("save", input="written while offline, as text")
    tools.exited(text, 75)
    sentence, next_line = text.out.rstrip("\n").split("\n")
    assert sentence.startswith("Not shared yet: ") and next_line.startswith("Next: check this machine's network, ")
    failed = alice.run("read", cached["id"], "--fresh", "--json")
    tools.exited(failed, 1)
    again = f"agent-memory read {cached['id']} --fresh --json"
    assert failed.json["next"] == f"check this machine's network, then run: {again}"
    assert not any("folder" in told or "drive" in told for told in (pending["message"], pending["next"], failed.out))
    offline_search = alice.run("search", "cached", "--json")
    tools.exited(offline_search)
    assert offline_search.json["freshness"]["reason"] == "offline"
    assert len(offline_search.json["results"]) == 1
    text = alice.run("search", "cached")
    assert "local cache only (offline" in text.err

    hub.start()
    alice.base_env["HF_ENDPOINT"] = hub.url  # a restarted emulator listens on a new port
    for status in (401, 403):
        hub.fault("events", "fail", status=status)  # refused by the feed: the listing is asked, and says so too
        hub.fault("tree", "fail", status=status)
        denied = alice.run("search", "cached", "--online", "--json")  # before the outage's wait is over
        tools.exited(denied, 4, about=status)
        assert denied.json["freshness"]["status"] == "stale" and denied.json["freshness"]["reason"] == "auth"
        assert len(denied.json["results"]) == 1
        refused = (
            "\nNext: restore this machine's access to the Hugging Face bucket (hf auth login, yourself, in your own"
        )
        assert refused in denied.err and "folder" not in denied.err
    assert "Next:" not in offline_search.err  # stale but not refused: nothing to fix, exit 0
    bad_token = alice.save("with a wrong token", env={"HF_TOKEN": "hf_" + "x" * 34})
    tools.exited(bad_token, 75)
    assert "authentication or access" in bad_token.json["message"]


def test_a_hung_hub_makes_save_pending_and_search_stale_within_the_budget(alice, hub):
    env = {"AGENT_MEMORY_TIMEOUT": "3"}
    hub.fault("batch", "hang", seconds=60)
    started = time.monotonic()
    saved = alice.save("saved while the Hub hangs", env=env)
    tools.exited(saved, 75)
    assert "because the bucket could not be reached: the Hub did not answer" in saved.json["message"]
    hub.clear_faults()
    hub.fault("tree", "hang", seconds=60)
    searched = alice.run("search", "hangs", "--json", env=env)
    tools.exited(searched)
    assert searched.json["freshness"]["reason"] == "offline"
    assert searched.json["results"][0]["pending"] is True
    assert time.monotonic() - started < tools.scaled(25)  # the Hub hangs for 60 s


def test_credentials_are_never_stored_or_printed(alice, hub):
    hub.fault("batch", "fail", status=401)
    outputs = [alice.save("note one"), alice.run("status", "--json"), alice.run("search", "note", "--json")]
    hub.clear_faults()
    outputs.append(alice.run("save", "--retry-all", "--json"))
    for result in outputs:
        assert TOKEN not in result.out and TOKEN not in result.err
    for file in alice.state.rglob("*"):
        if file.is_file():
            assert TOKEN.encode() not in file.read_bytes(), file


def test_offline_search_and_cached_read_do_not_import_the_sdk(alice, hub):
    note = alice.save("a cached note").json
    for args in (("search", "cached", "--offline"), ("read", note["id"]), ("status",)):
        result = alice.run(*args, env={"PYTHONPROFILEIMPORTTIME": "1"})
        tools.exited(result)
        imported = result.err
        assert "agent_memory" in imported  # the import log is really there
        assert "huggingface_hub" not in imported and "hf_xet" not in imported and "yaml" not in imported, args


def test_no_credentials_on_a_private_bucket_is_an_access_problem(alice, hub):
    result = alice.run("search", "x", "--json", env={"HF_TOKEN": ""})
    tools.exited(result, 4)
    assert result.json["freshness"]["reason"] == "auth"
