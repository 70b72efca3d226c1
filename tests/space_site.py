"""Helpers for the Space tests: run build.py, serve a built site on 127.0.0.1, copy a checkout to break it."""

from __future__ import annotations

import contextlib
import html
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from tools import exited, require_npm_packages

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build.py"
SOURCES = ("build.py", "pyproject.toml", "README.md", "package.json", "package-lock.json")
SOURCE_FOLDERS = ("templates", "space", "helper", "skill")


def build(out: Path, *args: str, repo: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `build.py --json --out OUT ARGS` (of `repo`) to completion."""
    require_npm_packages()  # build.py copies Pyodide from node_modules
    return subprocess.run(
        [sys.executable, str(repo / "build.py"), "--json", "--out", str(out), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def built(out: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    """Build the site into `out`; its JSON report."""
    proc = exited(build(out, *args, env=env))
    return json.loads(proc.stdout)


def page_config(index_html: str) -> dict:
    """The JSON the page's script reads from index.html: the helper, and the generator files' hashes."""
    match = re.search(r'<script type="application/json" id="space-config">(.*?)</script>', index_html)
    assert match, "index.html has no space-config"
    return json.loads(html.unescape(match.group(1)))


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@contextlib.contextmanager
def build_server(out: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, dict]]:
    """`build.py --serve --port 0`: yields (its URL, its JSON report); stopped with SIGTERM at the end.

    Its request log goes to a file beside `out`: a pipe nobody reads would block the server once full."""
    require_npm_packages()  # build.py copies Pyodide from node_modules
    log = out.parent / f"{out.name}-serve.log"
    out.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(BUILD), "--serve", "--port", "0", "--json", "--out", str(out), *args],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, **(env or {})},
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, f"build.py --serve printed nothing: {log.read_text()[-3000:]}"
        report = json.loads(line)
        yield report["url"], report
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=10) == 0, log.read_text()[-3000:]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def serving(folder: Path, server: object | None = None) -> Iterator[str]:
    """Serve `folder` with build.py's own handler (content types included) on 127.0.0.1; yields its URL."""
    module = build_module()
    httpd = server or module.listen(0)
    httpd.RequestHandlerClass = lambda *a, **kw: module.SiteHandler(*a, directory=str(folder), **kw)
    with _running(httpd) as url:
        yield url


@contextlib.contextmanager
def _running(httpd: http.server.ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


# What a Space keeps in its file storage (Xet): binary files, whatever their size
SPACE_STORAGE = (".wasm", ".zip", ".gz", ".whl")


@contextlib.contextmanager
def space_like_serving(folder: Path) -> Iterator[str]:
    """Serve `folder` as a static Hugging Face Space appears to (docs/benchmarks.md, the page section): text
    files from the page's origin with `Cache-Control: no-cache` (revalidated, then 304), binary files by a
    `no-store` redirect to a freshly signed URL on another origin (a CDN) that sends them as
    application/octet-stream with CORS. The browser's HTTP cache can never answer for a binary file."""
    module = build_module()
    with _running(_cdn_server(folder)) as cdn:

        class SpaceHandler(module.SiteHandler):  # type: ignore[name-defined]
            def send_head(self):  # noqa: ANN202 - SimpleHTTPRequestHandler's own signature
                path = self.path.split("?")[0]
                if not path.endswith(SPACE_STORAGE):
                    return super().send_head()
                self.send_response(302)
                self.send_header("Location", f"{cdn}{path.lstrip('/')}?X-Amz-Signature={secrets.token_hex(16)}")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                pass  # one line per request would bury the bench's and the tests' own output

        httpd = module.listen(0)
        httpd.RequestHandlerClass = lambda *a, **kw: SpaceHandler(*a, directory=str(folder), **kw)
        with _running(httpd) as url:
            yield url


def _cdn_server(folder: Path) -> http.server.ThreadingHTTPServer:
    class CdnHandler(http.server.SimpleHTTPRequestHandler):
        def guess_type(self, path: str) -> str:  # noqa: ARG002 - every file alike, as object storage does
            return "application/octet-stream"

        def end_headers(self) -> None:
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Timing-Allow-Origin", "*")  # so that the page's resource timing sees the bytes
            super().end_headers()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CdnHandler)
    httpd.RequestHandlerClass = lambda *a, **kw: CdnHandler(*a, directory=str(folder), **kw)
    return httpd


def build_module() -> ModuleType:
    """build.py, imported (for its server and handler)."""
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))
    import build

    return build


def copy_checkout(dest: Path, *, node_modules: bool = True, kept_runtime: bool = False) -> Path:
    """A copy of what build.py reads, to break on purpose; node_modules/pyodide is linked, not copied.

    `kept_runtime`: with a copy of this checkout's kept snapshot (build/space-runtime), so that a build of the
    copy that fails after making it, or makes the same one, does not spend the tens of seconds making it."""
    dest.mkdir(parents=True)
    for name in SOURCES:
        shutil.copy2(REPO / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for folder in SOURCE_FOLDERS:
        shutil.copytree(REPO / folder, dest / folder, symlinks=True, ignore=ignore)
    if node_modules:
        (dest / "node_modules").mkdir()
        (dest / "node_modules" / "pyodide").symlink_to(REPO / "node_modules" / "pyodide")
    kept = REPO / "build" / "space-runtime"
    if kept_runtime and kept.is_dir():
        shutil.copytree(kept, dest / "build" / "space-runtime", ignore=shutil.ignore_patterns(".*"))
    return dest
