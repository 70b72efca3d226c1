"""The view's page in headless Chromium (Debian's, through Playwright), opened from its `file://` address as a user
would: the timeline, its filters and its search (the same notes, in the same order, as `search --json` on shared
cases), a note's page with its correction chain, a sync conflict side by side with its diff, the health list, the
picture, keyboard use and accessible names; and a corpus of XSS vectors in titles, bodies, tags, synced file names
and texts that runs nothing and loads nothing.

`VIEW_SCREENSHOT=docs/view.png` also saves the screenshot of the README (from the sync test's page)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from space_browser import chromium_fixture, contrast  # noqa: F401
from test_sync import claude_folder, diverge, sync_now, two_machines

import tools

pytestmark = pytest.mark.slow


class Watched:
    """A page of the site, and everything it did that a page of notes must never do."""

    def __init__(self, browser: Any, url: str) -> None:
        self.out = url.rsplit("/", 1)[0] + "/"
        self.context = browser.new_context(viewport={"width": 1100, "height": 900})
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.goto(url)
        self.ready()

    def ready(self) -> None:
        self.page.wait_for_selector("body:not([data-state=loading])")
        assert self.page.evaluate("document.body.dataset.state") == "ready", self.page.inner_text("#summary")

    def go(self, hash_: str) -> None:
        self.page.evaluate("h => { location.hash = h; }", hash_)
        self.page.wait_for_timeout(50)
        self.ready()

    def search(self, query: str, **chosen: str) -> list[str]:
        """The ids the timeline shows for `query` typed in the box, with the filters `chosen` (their labels)."""
        self.go("#timeline")
        for label, value in chosen.items():
            self.page.get_by_label(label, exact=True).select_option(value)
        box = self.page.get_by_role("searchbox", name="Search the notes")
        box.fill(query)
        wanted = "newest first" if not query.strip() and not any(chosen.values()) else "matching notes"
        self.page.get_by_role("status").filter(has_text=wanted).wait_for()
        # the list drawn for this query (the box waits a moment before it searches, longer on a loaded machine)
        drawn = json.dumps([query], ensure_ascii=False)[:-1] + ","
        self.page.wait_for_function(
            "drawn => (document.getElementById('results').dataset.shown || '').startsWith(drawn)",
            arg=drawn,
            timeout=tools.scaled(10) * 1000,
        )
        links = self.page.locator("#results h3 a")
        return [href.split("/", 1)[1] for href in links.evaluate_all("links => links.map(a => a.hash)")]

    def clean(self) -> None:
        """Nothing ran, nothing was loaded but the site's own files, nothing complained."""
        assert self.dialogs == [] and self.errors == []
        assert [url for url in self.requests if not url.startswith(self.out)] == []
        assert self.page.evaluate("typeof window.__xss") == "undefined"


@pytest.fixture
def watched(chromium) -> Iterator[Any]:
    opened: list[Watched] = []

    def open_site(url: str) -> Watched:
        opened.append(Watched(chromium, url))
        return opened[-1]

    yield open_site
    for page in opened:
        page.context.close()


def written(machine, out: Path, *args: str) -> str:
    done = machine.run("view", "--json", "--out", str(out), *args)
    tools.exited(done)
    return done.json["url"]


NOTES = [  # (body, agent, machine, extra save options)
    ("# WAL mode\n\nEnable WAL before the first write to the database.", "codex", "laptop", ("--tag", "db")),
    (
        "# Release process\n\nTag the release on Tuesday, then write the changelog.",
        "claude",
        "desktop",
        ("--kind", "checkpoint", "--tag", "release"),
    ),
    ("# Database locks\n\nThe write lock is held during WAL checkpoints.", "codex", "desktop", ()),
    ("# Straße names\n\nÉCOLE and straße are lowercased the same way.", "claude", "laptop", ()),
    ("# Tagged only\n\nNothing else here.", "codex", "laptop", ("--tag", "zebra")),
]
SHARED_CASES = [
    "",
    "wal",
    "WAL write",
    "write wal",
    '"first write"',
    '"write first"',
    "zebra",
    "wal tuesday",
    "école",
    "STRAßE",
    "lock",
    "release tuesday changelog",
    '"the write',
    "nothing",
]


def save_as(machine, body: str, agent: str, host: str, *options: str) -> str:
    saved = machine.save(body, "--agent", agent, *options, env={"AGENT_MEMORY_MACHINE": host})
    tools.exited(saved)
    return saved.json["id"]


def test_timeline_filters_search_and_a_note_with_its_corrections(ready, watched, tmp_path):
    ids = [save_as(ready, body, agent, host, *options) for body, agent, host, options in NOTES]
    fix = save_as(
        ready, "# WAL is the default\n\nWAL is on by default since 3.2.", "claude", "desktop", "--corrects", ids[0]
    )
    site = watched(written(ready, tmp_path / "site"))

    # the timeline: newest first, each correction right before the note it corrects
    page = site.page
    assert site.search("") == [fix, ids[0], ids[4], ids[3], ids[2], ids[1]]
    first = page.locator("#results li").first
    assert "WAL is the default" in first.inner_text() and "claude@desktop" in first.inner_text()
    assert "corrected by " + fix in page.locator("#results li").nth(1).inner_text()

    # the search box answers as the command does, on every shared case
    for query in SHARED_CASES:
        cli = ready.run("search", query, "--offline", "--limit", "1000", "--json").json["results"]
        assert site.search(query) == [hit["id"] for hit in cli], query
    site.search("wal tuesday")
    assert "no note holds every term" in page.get_by_role("status").inner_text()
    current = ready.run("search", "wal", "--current", "--offline", "--limit", "1000", "--json").json["results"]
    page.get_by_label("Leave out corrected notes").check()
    assert site.search("wal") == [hit["id"] for hit in current]
    page.get_by_label("Leave out corrected notes").uncheck()
    for kind in ("checkpoint", "note"):
        cli = ready.run("search", "", "--kind", kind, "--offline", "--limit", "1000", "--json").json["results"]
        assert site.search("", Kind=kind) == [hit["id"] for hit in cli]

    # filters by agent, machine and tag
    assert site.search("", Kind="", Agent="claude") == [fix, ids[3], ids[1]]
    assert site.search("", Agent="", Machine="desktop") == [fix, ids[2], ids[1]]
    assert site.search("", Machine="", Tag="db") == [ids[0]]
    assert site.search("wal", Tag="") == [fix, ids[0], ids[2]]

    # a note's page: its Markdown, its fields, the chain both ways, its use
    site.go("#timeline")
    page.get_by_role("searchbox", name="Search the notes").fill("")
    page.get_by_role("status").filter(has_text="newest first").wait_for()
    page.get_by_role("link", name="WAL mode", exact=True).click()
    site.ready()
    assert page.get_by_role("heading", level=2).filter(has_text="WAL mode").is_visible()
    assert page.locator("#note-banner").inner_text().startswith(f"Corrected: {fix} corrects this note")
    assert page.locator("#note-body.corrected h1").inner_text() == "WAL mode"  # the old text, marked as corrected
    assert "tags:\n- db" in page.locator("#note-front").inner_text()
    assert "Not recalled yet" in page.locator("#note-usage").inner_text()  # saved a moment ago: not "never"
    page.locator("#note-chain").get_by_role("link", name=fix).click()
    site.ready()
    assert page.locator("#note-title").inner_text() == "WAL is the default"
    assert page.locator("#note-chain").inner_text() == f"It corrects {ids[0]}"
    assert page.locator("#note-banner").is_hidden() and "Not recalled yet" in page.locator("#note-usage").inner_text()

    # the receipts of use: a search that returned it and a read are told on its page
    ready.run("search", "WAL default", "--offline")
    tools.exited(ready.run("read", fix))
    again = watched(written(ready, tmp_path / "site"))
    again.go(f"#note=0/{fix}")
    usage = again.page.locator("#note-usage").inner_text()
    assert "Last found by a search" in usage and "Last read" in usage and "recalled" not in usage
    site.clean()
    again.clean()


@pytest.mark.outside_tmp
def test_setup_notes_under_their_kind_young_notes_and_a_synced_file_of_one_version(machine, folder_store, watched):
    """The setup note is counted apart and listed under kind `setup` only; a note saved a moment ago is "not
    recalled yet" (never "never recalled"); a synced file with one version shows its text."""
    ready = machine.setup(folder_store)
    boot = ready.run("bootstrap", "--project", "demo", "--bucket", folder_store, "--json")
    tools.exited(boot)
    setup_id = boot.json["verification"]["id"]
    note = save_as(ready, "# WAL mode\n\nEnable WAL first.", "codex", "laptop", "--kind", "checkpoint")
    tools.exited(ready.run("sync", "enable", "--agent", "claude"))
    folder = claude_folder(ready)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Index\n- release: Tuesday\n")
    sync_now(ready)
    site = watched(written(ready, ready.root / "site"))
    page = site.page
    assert (
        "demo: 1 note on this machine, and 1 setup verification note (kind setup)."
        in page.locator("header").inner_text()
    )
    assert site.search("") == [note]
    assert page.get_by_role("status").inner_text() == "1 notes, newest first."
    assert "not recalled yet" in page.locator("#results li").first.inner_text()
    kinds = page.get_by_label("Kind", exact=True).locator("option").all_inner_texts()
    assert kinds == ["any", "checkpoint", "setup"]  # each kind offered lists something
    for kind in kinds[1:]:
        assert site.search("", Kind=kind) == ([setup_id] if kind == "setup" else [note])
    cli = ready.run("search", "", "--kind", "setup", "--offline", "--json").json["results"]
    assert [hit["id"] for hit in cli] == [setup_id]

    site.go("#sync")
    file = page.get_by_role("article").filter(has_text="MEMORY.md")
    assert file.get_by_role("table", name="Versions of MEMORY.md").locator("tbody tr").count() == 1
    assert file.get_by_label("Text of MEMORY.md").inner_text() == "# Index\n- release: Tuesday"
    site.clean()


def test_keyboard_alone_and_accessible_names(ready, watched, tmp_path):
    ids = [save_as(ready, body, agent, host, *options) for body, agent, host, options in NOTES[:3]]
    site = watched(written(ready, tmp_path / "site"))
    page = site.page
    for role, name in (
        ("navigation", "Sections"),
        ("searchbox", "Search the notes"),
        ("combobox", "Kind"),
        ("combobox", "Agent"),
        ("combobox", "Machine"),
        ("combobox", "Tag"),
        ("checkbox", "Leave out corrected notes"),
        ("list", "Notes"),
        ("navigation", "Pages of the timeline"),
        ("button", "Older"),
        ("link", "Skip to the content"),
    ):
        assert page.get_by_role(role, name=name, exact=True).count() == 1, (role, name)
    # Tab to the search box, type, Tab to the first result, Enter: the note's page, its title focused
    focused = ""
    for _ in range(12):
        page.keyboard.press("Tab")
        focused = page.evaluate("document.activeElement.id")
        if focused == "q":
            break
    assert focused == "q"
    page.keyboard.type("write")
    page.get_by_role("status").filter(has_text="matching notes").wait_for()
    page.wait_for_timeout(300)
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('#results') !== null"):
            break
    assert page.evaluate("document.activeElement.tagName") == "A"
    page.keyboard.press("Enter")
    site.ready()
    # the title takes the focus once the note's page is drawn (its data file loads first): waited for, on a loaded
    # machine as on an idle one (by Playwright's own check: a string predicate that has to poll is evaluated with
    # eval, which the page's CSP refuses)
    expect(page.locator("#note-title")).to_be_focused(timeout=tools.scaled(10) * 1000)
    assert page.locator("#note-title").inner_text() in {"WAL mode", "Release process", "Database locks"}
    # back with the keyboard: the link before the title
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.textContent") == "Back to the timeline"
    page.keyboard.press("Enter")
    site.ready()
    assert page.locator("#timeline-view").is_visible()
    # the charts are images with names that say what they show
    site.go("#picture")
    assert page.get_by_role("img", name=re.compile(r"^Notes per week by agent, .*codex 2, claude 1")).count() == 1
    assert page.get_by_role("img", name=re.compile(r"^Notes per week by machine")).count() == 1
    assert page.get_by_role("img", name=re.compile(r"^Searches per week")).count() == 1
    assert len(ids) == 3
    site.clean()


CONTRASTED = ["h1", "header nav a", "#results h3 a", ".meta", ".help", ".flag", ".flag.warn", ".excerpt"]


def test_text_is_readable_in_light_and_dark_mode(ready, watched, tmp_path):
    first = save_as(ready, "# WAL mode\n\nEnable WAL first.", "codex", "laptop")
    save_as(ready, "# WAL is the default\n\nSince 3.2.", "claude", "desktop", "--corrects", first)
    site = watched(written(ready, tmp_path / "site"))
    for scheme in ("light", "dark"):
        site.page.emulate_media(color_scheme=scheme)
        ratios = contrast(site.page, CONTRASTED)
        assert all(ratio >= 4.5 for ratio in ratios.values()), (scheme, ratios)
    site.clean()


@pytest.mark.outside_tmp
def test_sync_conflict_side_by_side_the_health_list_and_the_picture(machine, machine_b, folder_store, watched):
    a, b = two_machines(machine, machine_b, folder_store)
    base, on_a, on_b = (f"# Index\n- release: {day}\n- owner: ana\n" for day in ("Tuesday", "Wednesday", "Friday"))
    diverge(a, b, base, on_a, on_b)
    assert sync_now(b)["folders"][0]["conflicts"]
    for body, agent, host, options in NOTES:
        save_as(b, body, agent, host, *options)
    store = Path(folder_store.removeprefix("file://"))
    damaged = "20260101-000000-000000-0000000000"
    (store / "projects" / "demo" / "notes" / f"{damaged}.md").write_text("no frontmatter at all\n")
    huge = "projects/demo/notes/20260101-000000-000000-0000000001.md"
    (store / huge).write_bytes(b"x" * (5 << 20))  # larger than any note: never downloaded, reported
    tools.exited(b.run("search", "anything"))  # fetches it: cached, searched as text, its fields not shown
    store.rename(store.with_name("unmounted"))
    waiting = b.save("# Kept here\n\nSaved while the drive was away.")
    tools.exited(waiting, 75)
    store.with_name("unmounted").rename(store)

    b.outage.write_text(  # the bucket did not answer a moment ago: the commands remember it
        json.dumps(
            {"bucket": folder_store, "since": time.time() - 60, "until": time.time() + 240, "failures": 2}
            | {"reason": "offline", "detail": "the drive is away"}
        )
    )
    told = b.run("view", "--out", str(b.root / "told"))
    tools.exited(told)
    assert ": 7 notes, 1 sync conflict, 4 items needing attention." in told.err, told.err
    site = watched(written(b, b.root / "site"))
    page = site.page
    site.go("#sync")
    file = page.get_by_role("article").filter(has_text="claude (")
    assert "MEMORY.md" in file.get_by_role("heading", level=3).inner_text()
    versions = file.get_by_role("table", name="Versions of MEMORY.md")
    assert versions.locator("tbody tr").count() == 3
    conflict = file.locator(".conflict")
    assert conflict.get_by_role("heading").inner_text() == "Conflict: changed here and elsewhere"
    rows = conflict.locator("tbody tr.changed")
    assert rows.count() == 1
    sides = [rows.locator("td.text").nth(0).inner_text(), rows.locator("td.text").nth(1).inner_text()]
    assert sides == ["- release: Friday", "- release: Wednesday"]  # the file here first, and said so
    heading = conflict.locator("thead th").all_inner_texts()
    assert heading[1].endswith(" (the file here)") and heading[3].endswith(" (the other)")
    marked = versions.locator("tbody tr", has_text="here")
    assert marked.count() == 1 and marked.locator("td").nth(0).inner_text() == heading[1].split()[0]
    assert conflict.locator("tbody tr.same").count() == 2
    commands = conflict.locator("ul.commands code").all_inner_texts()
    assert len(commands) == 2 and all(c.startswith("agent-memory sync restore MEMORY.md --version ") for c in commands)
    kept = heading[1].split()[0], heading[3].split()[0]
    assert conflict.locator("ul.commands li").all_inner_texts() == [
        f"Keep the file here: agent-memory sync restore MEMORY.md --version {kept[0]} --agent claude",
        f"Keep the other: agent-memory sync restore MEMORY.md --version {kept[1]} --agent claude",
    ]
    # any two versions compared: the first with each of the others
    compare = file.locator(".compare")
    ids = compare.get_by_label("Compare version").locator("option").all_inner_texts()
    assert len(ids) == 3
    for other in (1, 2):
        compare.get_by_label("with version").select_option(index=other)
        shown = compare.locator(".pair:visible")
        assert shown.count() == 1 and shown.locator("tr.changed").count() == 1
        assert "- release: Tuesday" in shown.locator("tr.changed td.text").nth(0).inner_text()

    site.go("#health")
    health = page.locator("#health-view")
    pending = health.locator("ul[data-kind=pending] li")
    assert pending.count() == 1 and pending.locator("code").inner_text() == "agent-memory pending retry"
    assert ": 1 attempt, last error: offline: " in pending.inner_text()
    broken = health.locator("ul[data-kind=damaged] li")
    assert broken.count() == 1 and damaged in broken.inner_text()
    assert broken.locator("code").inner_text() == f"agent-memory read {damaged}"
    skipped = health.locator("ul[data-kind=skipped] li")
    assert skipped.count() == 1 and huge in skipped.inner_text() and skipped.locator("code").inner_text()
    outage = health.locator("ul[data-kind=outage] li")
    assert "the drive is away" in outage.inner_text()
    assert outage.locator("code").inner_text() == "agent-memory search --online"

    site.go("#picture")
    charts = page.locator("svg.chart")
    assert charts.count() == 3 and charts.nth(0).locator("rect").count() >= 1
    assert "codex 3, claude 2" in charts.nth(0).get_attribute("aria-label")

    site.go("#timeline")
    assert "pending: not shared yet" in page.locator("#results li").first.inner_text()
    if os.environ.get("VIEW_SCREENSHOT"):
        page.screenshot(path=os.environ["VIEW_SCREENSHOT"], full_page=False)
    site.clean()


VECTORS = [
    "<script>window.__xss=1;alert(1)</script>",
    '<img src=x onerror="window.__xss=1;alert(1)">',
    '<svg onload="window.__xss=1;alert(1)"><script>alert(2)</script></svg>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(3)></style></mglyph></table></mtext></math>",
    '"><script>alert(4)</script>',
    "'><img src=x onerror=alert(5)>",
    "</script><script>alert(6)</script>",
    "<scr<script>ipt>alert(7)</scr</script>ipt>",
    '<iframe src="https://evil.example/frame"></iframe>',
    "<link rel=stylesheet href=https://evil.example/x.css>",
    "<style>body{background:url(https://evil.example/bg.png)}</style>",
    '<a href="javascript:alert(8)">anchor</a>',
    "<!--",
    "<![CDATA[<script>alert(9)</script>]]>",
    "{{ 7*7 }} ${alert(10)}",
]
MARKDOWN_VECTORS = [
    "[click](javascript:alert(11))",
    "[click](JaVaScRiPt:alert(12))",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxMyk8L3NjcmlwdD4=)",
    "[file](file:///etc/passwd)",
    "<javascript:alert(14)>",
    "![pixel](https://evil.example/pixel.png)",
    "[ref][x]\n\n[x]: vbscript:msgbox(15)",
    "<details open ontoggle=alert(16)>",
]
FILE_NAMES = ["<img src=x onerror=alert(17)>.md", "<svg onload=alert(18)>.md", "\"'><b onmouseover=alert(19)>.md"]


@pytest.mark.outside_tmp
def test_hostile_notes_and_synced_files_run_nothing_and_load_nothing(machine, folder_store, watched):
    ready = machine.setup(folder_store)
    tools.exited(ready.run("sync", "enable", "--agent", "claude"))
    folder = claude_folder(ready)
    folder.mkdir(parents=True)
    for number, name in enumerate(FILE_NAMES):
        (folder / name).write_text(f"# {name}\n\n{VECTORS[number]}\n{MARKDOWN_VECTORS[number]}\n")
    (folder / "MEMORY.md").write_text("\n".join(VECTORS) + "\n")
    sync_now(ready)
    (folder / "MEMORY.md").write_text("\n".join(reversed(VECTORS)) + "\n")  # a second version: a diff of vectors
    sync_now(ready)
    body = "\n\n".join(VECTORS + MARKDOWN_VECTORS)
    for number, vector in enumerate(VECTORS):
        options = ["--title", f"{vector} title {number}", "--tag", vector[:64], "--source", vector]
        host = {"AGENT_MEMORY_MACHINE": f"m{number}{vector}"[:64]}
        saved = ready.save(f"{vector} body\n\n{body}", *options, env=host)
        tools.exited(saved)
    site = watched(written(ready, ready.root / "site"))
    page = site.page
    assert page.locator("#results li").count() == len(VECTORS)
    assert page.locator("#results h3 a").all_inner_texts()[-1] == f"{VECTORS[0]} title 0"  # shown, as text
    for query in ("script", "onerror alert", '"javascript:alert"', "<svg"):
        assert site.search(query), query
    for option in page.locator("select[data-facet] option").all():  # the facets hold the vectors too
        assert option.get_attribute("value") is not None
    site.search("")
    hrefs = page.locator("#results h3 a").evaluate_all("links => links.map(a => a.hash)")
    for href in hrefs:
        site.go(href)
        assert page.locator("#note-body").inner_text().strip()
        assert "<script>window.__xss=1;alert(1)</script>" in page.locator("#note-body").inner_text()
    site.go("#sync")
    names = page.locator("#sync-view article h3").all_inner_texts()
    assert all(any(name in heading for heading in names) for name in FILE_NAMES), names
    for select in page.locator("#sync-view select").all():
        select.select_option(index=0)
    site.go("#health")
    site.go("#picture")
    site.go("#timeline")
    found = page.evaluate(
        """() => ({
        handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))
            .filter(name => name.startsWith('on')),
        links: [...document.querySelectorAll('[href]')].map(e => e.getAttribute('href')),
        scripts: [...document.scripts].map(s => s.src || s.type || 'inline'),
        elements: [...document.querySelectorAll('iframe, object, embed, img, link, math, video, audio, base, frame')]
            .map(e => e.tagName),
        styles: document.querySelectorAll('style').length,
        svgs: [...document.querySelectorAll('svg')].filter(s => !s.classList.contains('chart')).length,
    })"""
    )
    assert found["handlers"] == [] and found["elements"] == [] and found["styles"] == 1 and found["svgs"] == 0
    assert sorted(src for src in found["scripts"] if src not in ("inline", "application/json")) == [
        f"{site.out}data/{kind}-0.js" for kind in ("list", "note")
    ]
    for href in found["links"]:
        assert href.startswith(("#", "https://", "http://", "mailto:")) or ":" not in href.split("/")[0], href
    site.go(hrefs[0])
    links = page.locator("#note-body a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    # an image is a plain link (nothing loaded until someone clicks it); the others stay text
    assert links == ["https://evil.example/pixel.png"]
    assert "[click](javascript:alert(11))" in page.locator("#note-body").inner_text()
    site.clean()


def test_a_timeline_of_many_data_files_loads_what_each_page_needs(ready, watched, tmp_path, monkeypatch):
    from agent_memory.view import site as written_site

    ids = [save_as(ready, f"# Note {n}\n\nBody {n} of many.", "codex", "laptop") for n in range(56)]
    monkeypatch.setattr(written_site, "CHUNK", 10)  # the command runs in this process: 6 data files
    site = watched(written(ready, tmp_path / "site"))
    page = site.page
    loaded = sorted({url.rsplit("/", 1)[1] for url in site.requests if "/data/list-" in url})
    assert loaded == [f"list-{n}.js" for n in range(5)]  # the first page's 50 notes: 5 files, not the sixth
    expected = [hit["id"] for hit in ready.run("search", "", "--offline", "--limit", "1000", "--json").json["results"]]
    assert expected[:50] == site.search("") == list(reversed(ids))[:50]
    assert (
        page.locator("#page-number").inner_text() == "Page 1 of 2"
        and page.get_by_role("button", name="Newer").is_disabled()
    )
    page.get_by_role("button", name="Older").click()
    page.get_by_text("Page 2 of 2").wait_for()
    shown = page.locator("#results h3 a").evaluate_all("links => links.map(a => a.hash.split('/')[1])")
    assert shown == expected[50:] and page.get_by_role("button", name="Older").is_disabled()
    assert any("/data/list-5.js" in url for url in site.requests)
    assert site.search("many 3") == [
        hit["id"] for hit in ready.run("search", "many 3", "--offline", "--limit", "1000", "--json").json["results"]
    ]
    site.go(f"#note=5/{ids[0]}")  # the oldest note, in the last file: its page
    assert page.locator("#note-title").inner_text() == "Note 0"
    site.clean()
