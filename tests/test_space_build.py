"""build.py: a reproducible site, made of the right files, written whole or not at all, served with the content
types Pyodide needs."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
import space_site
import yaml

import tools
from agent_memory import __version__
from space import generator

PYODIDE = space_site.REPO / "node_modules" / "pyodide"


def test_two_builds_give_the_same_bytes_whatever_the_clock_and_the_file_times(tmp_path: Path) -> None:
    first = space_site.built(tmp_path / "one")
    # a copy of the sources with other file times, built at another time of day in another time zone
    checkout = space_site.copy_checkout(tmp_path / "checkout")
    for path in checkout.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (1_000_000_000, 1_000_000_000))
    time.sleep(1.1)
    proc = space_site.build(tmp_path / "two", repo=checkout, env={"TZ": "Pacific/Kiritimati"})
    tools.exited(proc)
    second = json.loads(proc.stdout)
    assert second["sha256"] == first["sha256"]
    one, two = space_site.tree(tmp_path / "one"), space_site.tree(tmp_path / "two")
    assert one.keys() == two.keys()
    assert [path for path in one if one[path] != two[path]] == []
    wheel = tmp_path / "one" / "helper" / first["wheel"]
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == first["sha256"]


def test_source_date_epoch_sets_the_times_inside_the_wheel(tmp_path: Path) -> None:
    default = space_site.built(tmp_path / "default")
    dated = space_site.built(tmp_path / "dated", env={"SOURCE_DATE_EPOCH": "1767225600"})  # 2026-01-01
    again = space_site.built(tmp_path / "again", env={"SOURCE_DATE_EPOCH": "1767225600"})
    assert dated["sha256"] == again["sha256"] != default["sha256"]
    with zipfile.ZipFile(tmp_path / "dated" / "helper" / dated["wheel"]) as wheel:
        assert {info.date_time for info in wheel.infolist()} == {(2026, 1, 1, 0, 0, 0)}
    proc = space_site.build(tmp_path / "bad", env={"SOURCE_DATE_EPOCH": "yesterday"})
    tools.exited(proc, 2)
    assert "Error: SOURCE_DATE_EPOCH" in proc.stderr and "Next: " in proc.stderr
    assert not (tmp_path / "bad").exists()


def test_the_wheel_is_the_helper_with_its_core_skill_in_a_fixed_order(tmp_path: Path) -> None:
    report = space_site.built(tmp_path / "site")
    assert report["wheel"] == f"agent_memory-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(tmp_path / "site" / "helper" / report["wheel"]) as wheel:
        names = wheel.namelist()
        infos = wheel.infolist()
        entry_points = wheel.read(f"agent_memory-{__version__}.dist-info/entry_points.txt").decode()
        skill = wheel.read("agent_memory/core_skill/SKILL.md")
    assert names[-1].endswith(".dist-info/RECORD")
    packages = [name for name in names if ".dist-info/" not in name]
    assert packages == sorted(packages) and "agent_memory/names.py" in packages
    assert {f"agent_memory/view/page.{ext}" for ext in ("html", "js", "css")} <= set(packages)  # `view`'s page
    assert not any(name.startswith("space/") for name in packages)  # the page's generator is the Space's own
    assert skill == (space_site.REPO / "skill" / "SKILL.md").read_bytes()
    assert re.search(r"^agent-memory = agent_memory\.[a-z.]+:main$", entry_points, re.M), entry_points
    assert {(info.external_attr >> 16) & 0o777 for info in infos} == {0o644}
    assert {info.compress_type for info in infos} == {zipfile.ZIP_STORED}
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)


def test_the_site_has_the_pages_the_runtime_and_the_pinned_helper(tmp_path: Path) -> None:
    site = tmp_path / "site"
    report = space_site.built(site, "--base-url", "https://example.org/setup")
    files = space_site.tree(site)
    wheel_path = f"helper/{report['wheel']}"
    assert set(files) == {
        "index.html",
        "bootstrap.md",
        "bootstrap.html",
        "README.md",
        "llms.txt",
        "page.js",
        "page.css",
        "favicon.svg",
        "favicon.ico",
        wheel_path,
        *(f"py/{path}" for path in generator.RUNTIME_FILES),
        *(f"pyodide/{name}" for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")),
        "pyodide/pyodide.asm.wasm.gz",
        "pyodide/snapshot.bin.gz",
    }
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        assert files[f"pyodide/{name}"] == (PYODIDE / name).read_bytes()
    assert gzip.decompress(files["pyodide/pyodide.asm.wasm.gz"]) == files["pyodide/pyodide.asm.wasm"]
    assert len(gzip.decompress(files["pyodide/snapshot.bin.gz"])) > 10_000_000  # Python's memory, once started
    for path, source in generator.RUNTIME_FILES.items():
        assert files[f"py/{path}"] == (space_site.REPO / source).read_bytes()

    # the page carries the built helper and the hashes of the files it loads into Pyodide
    sha256 = hashlib.sha256(files[wheel_path]).hexdigest()
    url = f"https://example.org/setup/{wheel_path}"
    config = space_site.page_config((site / "index.html").read_text())
    assert config["helper"] == {"url": url, "sha256": sha256, "version": __version__, "revision": "local"}
    assert config["modules"] == {p: hashlib.sha256(files[f"py/{p}"]).hexdigest() for p in generator.RUNTIME_FILES}
    # and of every other file it runs (checked on each use, and their keys in Cache Storage): all of pyodide/
    runtime = sorted(path for path in files if path.startswith("pyodide/"))
    assert config["runtime"] == {path: hashlib.sha256(files[path]).hexdigest() for path in runtime}
    # the page's own script is checked by the browser, against the hash index.html names
    integrity = "sha256-" + base64.b64encode(hashlib.sha256(files["page.js"]).digest()).decode()
    assert files["index.html"].decode().count(f'src="page.js" integrity="{integrity}"') == 1
    # the lock file is in the page, with no packages: nothing is ever fetched from a CDN
    assert config["lock"] == {"info": json.loads((PYODIDE / "pyodide-lock.json").read_text())["info"], "packages": {}}
    index = files["index.html"].decode()
    assert sha256 in index and f"agent-memory {__version__}" in index and 'href="bootstrap.md"' in index
    assert 'data-state="loading"' in index
    for label in ("Project", "Bucket", "Operating system", "Installer", "Agent", "Hooks", "Extra skills"):
        assert re.search(rf'<label for="[a-z]+">{label}</label>', index), label
    assert 'aria-labelledby="setup-commands-label"' in index and ">Setup commands</h2>" in index

    # the commands the page's generator writes name exactly the built helper and revision
    helper = generator.Helper(**config["helper"])
    script = generator.script(generator.choices({"os": "linux", "installer": "venv", "project": "demo"}), helper)
    assert f'curl -fsSL --retry 2 -o "$wheel" {url}' in script and f'[ "$actual" = {sha256} ]' in script
    assert "--space-revision local </dev/null\n" in script

    # bootstrap.md, for agents: the pinned URL, version and hash, and the examples from the same generator
    bootstrap = files["bootstrap.md"].decode()
    assert url in bootstrap and sha256 in bootstrap and f"agent-memory {__version__}" in bootstrap
    assert script.replace("--project demo", "--project my-project") in bootstrap
    assert "<h1>Set up agent-memory on this machine</h1>" in files["bootstrap.html"].decode()
    assert "<table>" in files["bootstrap.html"].decode()
    assert "(bootstrap.md)" in files["llms.txt"].decode()

    # the Space card: a static Space whose page is index.html
    card = files["README.md"].decode()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["sdk"] == "static" and front["app_file"] == "index.html" and (site / front["app_file"]).is_file()
    assert {"title", "emoji", "colorFrom", "colorTo", "short_description", "license"} <= front.keys()
    assert len(front["short_description"]) <= 60 and sha256 in card


def test_html_in_a_value_is_escaped_and_a_bad_base_url_writes_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = space_site.build(site, "--base-url", 'https://example.org/"><script>alert(1)</script>')
    tools.exited(proc, 2)
    assert proc.stderr.startswith("Error: The helper URL") and "\nNext: " in proc.stderr
    assert not site.exists() and not list(tmp_path.iterdir())
    space_site.built(site, "--base-url", "https://example.org/a&b=<c>")
    index = (site / "index.html").read_text()
    assert "a&amp;b=&lt;c&gt;" in index and "a&b=<c>" not in index


def test_a_missing_or_different_pyodide_stops_the_build_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "previous.txt").write_text("the previous site")
    checkout = space_site.copy_checkout(tmp_path / "no-npm", node_modules=False)
    proc = space_site.build(out, repo=checkout)
    tools.exited(proc, 1)
    assert "Error: The npm package pyodide is not installed" in proc.stderr
    assert "Next: npm ci --no-audit --no-fund" in proc.stderr
    assert space_site.tree(out) == {"previous.txt": b"the previous site"}

    other = space_site.copy_checkout(tmp_path / "other-npm", node_modules=False)
    package = other / "node_modules" / "pyodide"
    package.mkdir(parents=True)
    for file in PYODIDE.iterdir():
        (package / file.name).symlink_to(file)
    (package / "package.json").unlink()
    (package / "package.json").write_text(json.dumps({"name": "pyodide", "version": "0.0.1"}))
    proc = space_site.build(out, repo=other)
    tools.exited(proc, 1)
    assert "node_modules has pyodide 0.0.1, but package-lock.json pins" in proc.stderr
    assert space_site.tree(out) == {"previous.txt": b"the previous site"}

    broken = space_site.copy_checkout(tmp_path / "broken-template", kept_runtime=True)
    (broken / "templates" / "llms.txt").write_text("{{ no_such_value }}\n")
    proc = space_site.build(out, repo=broken)
    assert proc.returncode != 0 and "no_such_value" in proc.stderr, proc.stdout + proc.stderr
    assert space_site.tree(out) == {"previous.txt": b"the previous site"}


@pytest.mark.slow
def test_a_build_killed_at_any_moment_leaves_a_whole_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = space_site.built(out)
    expected = space_site.tree(out)
    for delay in (0.05, 0.2, 0.35, 0.45, 0.55, 0.65, 0.8):
        proc = subprocess.Popen(
            [sys.executable, str(space_site.BUILD), "--out", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if out.exists():
            assert space_site.tree(out) == expected, f"killed after {delay} s"
        # the next build repairs whatever the kill left, and cleans up beside it
        assert space_site.built(out)["sha256"] == first["sha256"]
        assert space_site.tree(out) == expected
        assert [p.name for p in tmp_path.iterdir()] == ["site"]


@pytest.mark.slow
def test_parallel_builds_into_one_folder_leave_one_whole_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    expected = space_site.tree(out) if space_site.built(out) else {}
    procs = [
        subprocess.Popen([sys.executable, str(space_site.BUILD), "--out", str(out)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]  # fmt: skip
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 or "Error: Could not write the site" in err, err
    assert space_site.tree(out) == expected


def test_serve_uses_the_content_types_pyodide_needs(tmp_path: Path) -> None:
    with space_site.build_server(tmp_path / "site") as (url, report):
        assert report["helper_url"] == f"{url}helper/{report['wheel']}"
        expected = {
            "": "text/html",
            "pyodide/pyodide.asm.wasm": "application/wasm",
            "pyodide/pyodide.mjs": "text/javascript",
            "pyodide/snapshot.bin.gz": "application/gzip",
            "page.js": "text/javascript",
            "bootstrap.md": "text/markdown",
            "llms.txt": "text/plain",
            "favicon.ico": "image/x-icon",
            "favicon.svg": "image/svg+xml",
            f"helper/{report['wheel']}": "application/zip",
        }
        for path, content_type in expected.items():
            with urllib.request.urlopen(url + path) as response:
                assert response.headers.get_content_type() == content_type, path
                body = response.read()
            if path:
                assert body == (tmp_path / "site" / path).read_bytes()


def test_serve_on_a_busy_port_and_conflicting_options_are_usage_errors(tmp_path: Path) -> None:
    server = space_site.build_module().listen(0)
    try:
        port = str(server.server_address[1])
        proc = space_site.build(tmp_path / "site", "--serve", "--port", port)
        tools.exited(proc, 2)
        assert f"Error: Cannot listen on 127.0.0.1:{port}" in proc.stderr
        assert "Next: python build.py --serve --port 0" in proc.stderr
    finally:
        server.server_close()
    proc = space_site.build(tmp_path / "site", "--deploy", "alice/setup", "--base-url", "http://127.0.0.1:1/")
    tools.exited(proc, 2)
    assert "cannot be combined" in proc.stderr
    proc = space_site.build(tmp_path / "site", "--deploy", "not a space id")
    tools.exited(proc, 2)
    assert "Error: Invalid Space id" in proc.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_the_snapshot_kept_for_the_next_build_is_used_only_when_whole(tmp_path: Path) -> None:
    checkout = space_site.copy_checkout(tmp_path / "checkout")
    proc = space_site.build(tmp_path / "one", repo=checkout)
    tools.exited(proc)
    made = (tmp_path / "one" / "pyodide" / "snapshot.bin.gz").read_bytes()
    [kept] = (checkout / "build" / "space-runtime").iterdir()
    assert (kept / "snapshot.bin.gz").read_bytes() == made
    (kept / "snapshot.bin.gz").write_bytes(made[: len(made) // 2])  # a disk that lost half of it
    proc = space_site.build(tmp_path / "two", repo=checkout)
    tools.exited(proc)
    assert (tmp_path / "two" / "pyodide" / "snapshot.bin.gz").read_bytes() == made  # made again, the same
    assert [path.name for path in (checkout / "build" / "space-runtime").iterdir()] == [kept.name]
    assert (kept / "snapshot.bin.gz").read_bytes() == made
    # the generator is in the snapshot: another generator, another snapshot
    generator_py = checkout / "space" / "generator.py"
    generator_py.write_text(generator_py.read_text() + "\nCHANGED = True\n")
    proc = space_site.build(tmp_path / "three", repo=checkout)
    tools.exited(proc)
    assert (tmp_path / "three" / "pyodide" / "snapshot.bin.gz").read_bytes() != made
    assert [path.name for path in (checkout / "build" / "space-runtime").iterdir()] != [kept.name]


def test_a_build_without_node_says_what_to_install(tmp_path: Path) -> None:
    checkout = space_site.copy_checkout(tmp_path / "checkout")
    python_only = tmp_path / "bin"
    python_only.mkdir()
    (python_only / "python").symlink_to(sys.executable)
    proc = space_site.build(tmp_path / "site", repo=checkout, env={"PATH": str(python_only)})
    tools.exited(proc, 1)
    assert "Error: Node.js is needed" in proc.stderr and "Next: install Node.js" in proc.stderr
    assert not (tmp_path / "site").exists()


def test_a_snapshot_kept_whole_meanwhile_is_left_in_place_for_whoever_reads_it(tmp_path: Path) -> None:
    build = space_site.build_module()
    files = {"snapshot.bin.gz": b"made by the first build", "pyodide.asm.wasm.gz": b"its runtime"}
    folder = tmp_path / "space-runtime" / "key"
    build._keep(folder, files)
    (folder / "reader-was-here").write_text("")  # gone only if the folder is replaced
    build._keep(folder, files)  # a second build of the same inputs, finished later
    assert (folder / "reader-was-here").exists() and build._kept(folder, tuple(files)) == files
    (folder / "snapshot.bin.gz").write_bytes(b"made by the")  # damaged: replaced by the next build that keeps it
    build._keep(folder, files)
    assert not (folder / "reader-was-here").exists() and build._kept(folder, tuple(files)) == files
    assert [path.name for path in folder.parent.iterdir()] == ["key"]
