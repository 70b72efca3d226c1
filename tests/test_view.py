"""`agent-memory view` as a command: where it writes (only under --out, owner-only, never through a link or over
someone's folder), its errors, --open, the links a note's Markdown may keep, and a memory larger than one data file
(paged, not timed: the timing is bench/view_page.py's)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import tools
from agent_memory.view import site
from agent_memory.view.markdown import safe_link, to_html


def view(machine, *args: str, **options):
    return machine.run("view", "--json", *args, **options)


def test_help_names_every_option(ready):
    shown = ready.run("view", "--help")
    tools.exited(shown)
    for option in ("--project", "--all-projects", "--open", "--out", "--days", "--render-all", "--json"):
        assert option in shown.out
    assert "view" in ready.run("--help").out


def test_the_site_is_written_owner_only_under_the_state_folder(ready):
    saved = ready.save("# WAL mode\n\nEnable WAL before the first write.").json["id"]
    done = view(ready)
    tools.exited(done)
    out = Path(done.json["out"])
    assert out == ready.state / "state" / "view"
    assert done.out.strip().startswith("{") and done.json["url"] == (out / "index.html").as_uri()
    assert done.json["notes"] == 1 and done.json["projects"] == ["demo"] and done.json["opened"] is False
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path
    listed = (out / "data" / "list-0.js").read_text()
    assert saved in listed and "Enable WAL before the first write." in listed
    plain = ready.run("view")
    tools.exited(plain)
    assert plain.err.strip() == "Wrote the view of 1 project: 1 note, 0 sync conflicts, 0 items needing attention."
    assert plain.out.strip() == (out / "index.html").as_uri()  # the address alone on stdout
    # nothing else beside it: the staging folders and the previous site are gone
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".view")) == []


def test_an_out_that_is_a_link_or_someone_elses_folder_is_refused(ready, tmp_path):
    ready.save("A note.")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(theirs)
    # ... and a folder inside a file, or inside a folder that is not there
    for out in (link, theirs, theirs / "keep.txt", theirs / "keep.txt" / "site", tmp_path / "gone" / "site"):
        refused = view(ready, "--out", str(out))
        tools.exited(refused, 1)
        assert refused.json["next"] == "agent-memory view --out NEW_FOLDER"
    assert sorted(p.name for p in theirs.iterdir()) == ["keep.txt"] and (theirs / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    fresh = tmp_path / "site"
    tools.exited(view(ready, "--out", str(fresh)))
    first = (fresh / "index.html").stat().st_ino
    tools.exited(view(ready, "--out", str(fresh)))  # a site it wrote is replaced whole
    assert (fresh / "index.html").stat().st_ino != first
    empty = tmp_path / "empty"
    empty.mkdir()
    tools.exited(view(ready, "--out", str(empty)))
    assert (empty / "index.html").is_file() and not empty.is_symlink()


def test_a_planted_link_inside_a_previous_site_is_never_followed(ready, tmp_path):
    ready.save("A note.")
    out = tmp_path / "site"
    tools.exited(view(ready, "--out", str(out)))
    target = tmp_path / "bashrc"
    target.write_text("original\n")
    (out / "data" / "list-0.js").unlink()
    (out / "data" / "list-0.js").symlink_to(target)
    tools.exited(view(ready, "--out", str(out)))
    assert target.read_text() == "original\n" and not (out / "data" / "list-0.js").is_symlink()


def test_bad_input_says_what_to_run(ready, machine_b):
    ready.save("A note.")
    unknown = view(ready, "--project", "nothing-here")
    tools.exited(unknown, 3)
    assert unknown.json["next"] == "agent-memory view --all-projects" and "nothing-here" in unknown.json["error"]
    assert "Next: agent-memory view --all-projects" in ready.run("view", "--project", "nothing-here").err
    tools.exited(view(ready, "--project", "Not A Name!"), 2)
    tools.exited(view(ready, "--days", "0"), 2)
    tools.exited(view(ready, "--project", "demo", "--all-projects"), 2)
    empty = view(ready, "--out", " ")  # an empty folder name is no folder: not the default one taken silently
    tools.exited(empty, 2)
    assert empty.json["next"] == "agent-memory view" and not (ready.state / "state" / "view").exists()
    not_set_up = view(machine_b)
    tools.exited(not_set_up, 3)
    assert not_set_up.json["next"].startswith("agent-memory bootstrap")
    assert not (machine_b.state / "state" / "view").exists()


def test_all_projects_and_one_other_project(ready, tmp_path):
    ready.save("In demo.")
    other = tmp_path / "other"
    other.mkdir()
    tools.exited(ready.run("project", "map", "other", cwd=other))
    tools.exited(ready.run("save", input="In other.", cwd=other))
    both = view(ready, "--all-projects")
    tools.exited(both)
    assert both.json["projects"] == ["demo", "other"] and both.json["notes"] == 2
    one = view(ready, "--project", "other")
    tools.exited(one)
    assert one.json["projects"] == ["other"] and one.json["notes"] == 1


def test_open_runs_the_browser_named_by_BROWSER(ready, tmp_path):
    ready.save("A note.")
    seen = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {seen}\n")
    browser.chmod(0o700)
    done = view(ready, "--open", env={"BROWSER": str(browser)}, process=True)
    tools.exited(done)
    assert done.json["opened"] is True and seen.read_text() == done.json["url"]
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o700)
    told = ready.run("view", "--open", env={"BROWSER": str(failing)}, process=True)
    tools.exited(told)
    assert f"open {told.out.strip()} in yours" in told.err


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "\u200bjavascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "data:image/png;base64,AAAA",
        "file:///etc/passwd",
        "//evil.example/x",
        "\\\\evil\\share",
        "chrome://settings",
    ],
)
def test_links_that_could_run_or_load_are_dropped(url):
    assert not safe_link(url)
    html = to_html(f"[click]({url}) and <{url}>")
    assert "href" not in html.lower() or "javascript" not in html.lower()
    assert "<a" not in to_html(f"[click]({url})")


def test_plain_links_stay_and_raw_html_is_text():
    for url in ("https://example.com/x", "http://example.com", "mailto:me@example.com", "#note=0/x", "notes.md"):
        assert safe_link(url), url
    html = to_html("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n![pic](https://example.com/a.png)\n")
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert 'rel="noopener noreferrer nofollow"' in to_html("[a](https://example.com)")


def test_a_memory_larger_than_one_data_file_is_paged(ready, folder_store, tmp_path, monkeypatch):
    """Written in files of CHUNK notes, newest first, each chain of corrections together (as `search` orders them)."""
    ids = [ready.save(f"# Note {n}\n\nBody {n}.").json["id"] for n in range(7)]
    fix = ready.save("# Note 1, corrected\n\nBody one.", "--corrects", ids[1]).json["id"]
    monkeypatch.setattr(site, "CHUNK", 3)
    monkeypatch.setattr(site, "WRITE_SECONDS", -1.0)  # out of time at once: the newest CHUNK notes alone rendered
    for name, value in ready.env.items():  # the build runs in this process, on machine A's folders
        monkeypatch.setenv(name, value)
    out = tmp_path / "paged"
    written = site.build(folder_store, ["demo"], out, days=30)
    assert written["notes"] == 8 and written["rendered"] == 3
    chunks = sorted((out / "data").iterdir())
    assert [p.name for p in chunks] == [f"{kind}-{n}.js" for kind in ("list", "note") for n in range(3)]
    order = []
    for n in range(3):
        text = (out / "data" / f"list-{n}.js").read_text()
        assert text.startswith(f'amChunk("list",{n},')
        order += [record["i"] for record in json.loads(text[len(f'amChunk("list",{n},') : -3])]
        shown = json.loads((out / "data" / f"note-{n}.js").read_text()[len(f'amChunk("note",{n},') : -3])
        assert all((record["h"] is None) == (n > 0) for record in shown)  # the rest is shown as text
    expected = ready.run("search", "--offline", "--limit", "100", "--json").json["results"]
    assert order == [hit["id"] for hit in expected]
    assert order.index(fix) + 1 == order.index(ids[1])  # the correction right before the note it corrects


def test_a_machine_with_no_notes_and_no_state_folder_yet(ready):
    assert not (ready.state / "state").exists()
    done = view(ready)
    tools.exited(done)
    assert done.json["notes"] == 0 and done.json["health"] == 0
    assert stat.S_IMODE((ready.state / "state").stat().st_mode) == 0o700
    assert not (Path(done.json["out"]) / "data").exists()  # no notes: no data files, the page alone
    assert (Path(done.json["out"]) / "index.html").is_file()


def test_a_note_younger_than_days_is_not_recalled_yet_an_older_one_never_recalled():
    """A note written a minute ago had no time to be recalled: told apart from one no session used in `--days`."""
    import time

    from agent_memory.view.sources import Note

    def note(created: str, note_id: str = "20200101-000000-000000-0a0b0c0d0e") -> Note:
        return Note("demo", {"id": note_id, "created": created, "title": "A note"})

    now = int(time.time())
    since = now - 30 * site.DAY
    minute_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60))
    long_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 40 * site.DAY))
    assert site._recall(note(minute_ago), 0, since) == site.NOT_YET
    assert site._recall(note(long_ago), 0, since) == site.NEVER_RECALLED
    assert site._recall(note(long_ago), now - 5, since) == 0  # found or read in the window
    # no usable `created`: the time in its id tells its age
    assert site._recall(note("garbage"), 0, since) == site.NEVER_RECALLED
    fresh_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now - 60)) + "-000000-0a0b0c0d0e"
    assert site._recall(note("garbage", fresh_id), 0, since) == site.NOT_YET


def test_the_kinds_offered_are_those_the_timeline_lists(ready, tmp_path):
    """A setup verification note is listed under kind `setup` alone: its own kind, agent or machine is not offered
    where choosing it would list nothing, and the header counts it apart from the notes."""
    from agent_memory.view.sources import Note

    setup = Note("demo", {"id": "setup-0123456789abcdef", "title": "Memory setup verification", "kind": "reference"})
    plain = Note("demo", {"id": "20261205-064000-000000-0a0b0c0d0e", "title": "WAL", "kind": "note", "agent": "codex"})
    assert site._facets([setup, plain])["kind"] == ["note"]
    assert site._facets([setup, plain])["agent"] == ["codex"]
