#!/usr/bin/env python3
"""Build the agent-memory Space into site/, and serve or publish it.

    python build.py                        build site/ (commands point at http://127.0.0.1:8000/)
    python build.py --serve [--port N]     build, then serve site/ on 127.0.0.1 (port 0: any free port)
    python build.py --base-url URL         point the generated commands at another server
    python build.py --deploy OWNER/NAME    publish to a static Hugging Face Space, pinned by revision

Three phases: gather (every input read and checked, the helper wheel built), render (every output file, in
memory), write (site/ replaced as a whole). Nothing is written until everything is gathered and rendered.
"""

from __future__ import annotations

import argparse
import ast
import base64
import gzip
import hashlib
import http.server
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "helper"))  # this checkout's helper, whatever is installed

from agent_memory import __version__, errors  # noqa: E402
from agent_memory.errors import ACCESS, AgentMemoryError, UsageError  # noqa: E402
from space import generator  # noqa: E402

TEMPLATES = REPO / "templates"
PYODIDE = REPO / "node_modules" / "pyodide"
DEFAULT_PORT = 8000
LOCAL_REVISION = "local"  # what a build that is not published records as its Space revision
LOAD_TIMEOUT_S = 90  # the page gives up on Python after this long (a phone on a slow network needs time)
ZIP_EPOCH = 315532864  # 1980-01-01 00:01:04 UTC: zip cannot store earlier times (and DOS time has 2 s steps)

# What the page needs from the npm package: the loader, the runtime and the standard library. The lock
# file's `info` goes into the page with no packages, so nothing is ever fetched from a CDN.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
# What the build makes from them (space/snapshot.mjs): Python's memory once started, and the runtime,
# gzipped, because a Space's file storage serves binary files as they are. Making them takes seconds, so
# they are kept under build/ by the hash of everything they are made from.
SNAPSHOT_SCRIPT = REPO / "space" / "snapshot.mjs"
DERIVED_CACHE = REPO / "build" / "space-runtime"
GZIP_LEVEL = 6  # 9 gains 1 % for five times the time
# The page's own Python (the reseed after restoring, the generator's folder without the snapshot) imports these
PAGE_IMPORTS = ("random", "sys")
MODULE_ROOT = "/home/pyodide/space/"  # where the page, and the snapshot, put the generator's files
ASSETS = ("page.js", "page.css", "favicon.svg", "favicon.ico")  # copied from templates/ as they are
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".py": "text/x-python; charset=utf-8",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".whl": "application/zip",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}


@dataclass(frozen=True)
class Inputs:
    """Everything the site is made of, read and checked: nothing here depends on where it will be served."""

    wheel_name: str
    wheel: bytes
    pyodide_version: str
    pyodide: dict[str, bytes]
    lock_info: dict[str, Any]
    derived: dict[str, bytes]
    modules: dict[str, bytes]
    assets: dict[str, bytes]

    @property
    def sha256(self) -> str:
        """The helper wheel's SHA-256: what the commands check before installing."""
        return hashlib.sha256(self.wheel).hexdigest()


# -- gather -------------------------------------------------------------------------------------------------


def gather(epoch: int) -> Inputs:
    """Read and check every input, and build the helper wheel (zip times from `epoch`)."""
    version, runtime, lock_info = pyodide_runtime()
    modules = {path: (REPO / source).read_bytes() for path, source in generator.RUNTIME_FILES.items()}
    assets = {name: (TEMPLATES / name).read_bytes() for name in ASSETS}
    derived = derived_runtime(runtime, modules)
    wheel_name, wheel = build_wheel(epoch)
    return Inputs(wheel_name, wheel, version, runtime, lock_info, derived, modules, assets)


def source_date_epoch() -> int:
    """`SOURCE_DATE_EPOCH` if set, else a fixed time: the wheel's bytes never depend on the clock."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not value:
        return ZIP_EPOCH
    if not value.isdigit():
        raise UsageError(
            f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds.", next_step="unset SOURCE_DATE_EPOCH"
        )
    return max(int(value), ZIP_EPOCH)


def pyodide_runtime() -> tuple[str, dict[str, bytes], dict[str, Any]]:
    """The Pyodide files the page needs, from node_modules, checked against the version the lock file pins."""
    lock = json.loads((REPO / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/pyodide"]["version"]
    try:
        installed = json.loads((PYODIDE / "package.json").read_text())["version"]
        files = {name: (PYODIDE / name).read_bytes() for name in PYODIDE_FILES}
        lock_info = json.loads((PYODIDE / "pyodide-lock.json").read_text())["info"]
    except FileNotFoundError as exc:
        raise AgentMemoryError(
            f"The npm package pyodide is not installed ({exc.filename} is missing).",
            next_step="npm ci --no-audit --no-fund",
        ) from exc
    if installed != pinned:
        raise AgentMemoryError(
            f"node_modules has pyodide {installed}, but package-lock.json pins {pinned}.",
            next_step="npm ci --no-audit --no-fund",
        )
    return installed, files, lock_info


def snapshot_imports(modules: dict[str, bytes]) -> list[str]:
    """What the snapshot imports: every standard-library module the generator's files import (inside
    functions too: the snapshot has no files), those of the page, then the generator."""
    names = set(PAGE_IMPORTS)
    for data in modules.values():
        for node in ast.walk(ast.parse(data)):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    stdlib = sorted(name for name in names if name.split(".")[0] in sys.stdlib_module_names - {"__future__"})
    return [*stdlib, "space.generator"]


def derived_runtime(runtime: dict[str, bytes], modules: dict[str, bytes]) -> dict[str, bytes]:
    """`snapshot.bin.gz` and `pyodide.asm.wasm.gz`, from build/ when they were made from the same inputs."""
    node = shutil.which("node")
    if node is None:
        raise AgentMemoryError(
            "Node.js is needed to make the page's Python snapshot, and `node` is not on the PATH.",
            next_step="install Node.js 18 or later (the one that ran npm ci), then build again",
        )
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    request = {
        "root": MODULE_ROOT,
        "files": {path: data.decode() for path, data in modules.items()},
        "imports": snapshot_imports(modules),
    }
    key = hashlib.sha256()
    for part in (*(runtime[name] for name in PYODIDE_FILES), SNAPSHOT_SCRIPT.read_bytes()):
        key.update(hashlib.sha256(part).digest())
    key.update(json.dumps([request, node_version, GZIP_LEVEL, zlib_version()], sort_keys=True).encode())
    folder = DERIVED_CACHE / key.hexdigest()
    names = ("snapshot.bin.gz", "pyodide.asm.wasm.gz")
    kept = _kept(folder, names)
    if kept is not None:
        return kept
    proc = subprocess.run(
        [node, str(SNAPSHOT_SCRIPT), str(PYODIDE)],
        input=json.dumps(request).encode(),
        capture_output=True,
        # the C library reads the time zone and the locale while Python starts: the snapshot keeps them
        env={**os.environ, "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
        timeout=600,
    )
    if proc.returncode != 0 or not proc.stdout:
        raise AgentMemoryError(
            "Could not make the page's Python snapshot:\n" + proc.stderr.decode(errors="replace").strip()[-2000:],
            next_step="npm ci --no-audit --no-fund (the pinned Pyodide), then build again",
        )
    made = {
        "snapshot.bin.gz": gzip.compress(proc.stdout, compresslevel=GZIP_LEVEL, mtime=0),
        "pyodide.asm.wasm.gz": gzip.compress(runtime["pyodide.asm.wasm"], compresslevel=GZIP_LEVEL, mtime=0),
    }
    _keep(folder, made)
    return made


def zlib_version() -> str:
    import zlib

    return zlib.ZLIB_RUNTIME_VERSION  # another zlib may write other (equally valid) gzip bytes


def _kept(folder: Path, names: tuple[str, ...]) -> dict[str, bytes] | None:
    """The files kept in `folder`, if all are there and match the SHA-256 recorded beside them."""
    try:
        digests = json.loads((folder / "sha256.json").read_text())
        kept = {name: (folder / name).read_bytes() for name in names}
    except (OSError, ValueError):
        return None
    if not isinstance(digests, dict) or any(hashlib.sha256(kept[n]).hexdigest() != digests.get(n) for n in names):
        return None
    return kept


def _keep(folder: Path, files: dict[str, bytes]) -> None:
    """Keep `files` in `folder` for the next build, and only them (best effort: a build never fails for its
    cache; staged beside it, so that a build killed meanwhile leaves no half folder under that name)."""
    staged = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        if _kept(folder, tuple(files)) is not None:
            return  # kept whole by a build that ran meanwhile, which a third may be reading (parallel test processes)
        # made from other inputs (an older Pyodide), damaged, or left by a killed build; not what another
        # build may be writing at this moment
        for other in folder.parent.iterdir():
            if not (other.name.startswith(".") and time.time() - other.stat().st_mtime < 600):
                shutil.rmtree(other, ignore_errors=True)
        staged = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        for name, data in files.items():
            (staged / name).write_bytes(data)
        digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
        (staged / "sha256.json").write_text(json.dumps(digests))
        os.replace(staged, folder)
    except OSError:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)


def build_wheel(epoch: int) -> tuple[str, bytes]:
    """The helper wheel, built by the project's own build backend from a clean copy of the sources.

    A copy, so that stale files under build/ can never slip in; then the zip is rewritten with sorted
    entries, one time and fixed permissions, uncompressed (deflate output differs between zlib builds),
    so that the same sources give the same bytes on any machine and at any time.
    """
    with tempfile.TemporaryDirectory(prefix="agent-memory-wheel-") as tmp:
        source, dist = Path(tmp) / "source", Path(tmp) / "dist"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(REPO / name, source / name)
        for folder in ("helper", "skill"):
            shutil.copytree(REPO / folder, source / folder, symlinks=True, ignore=ignore)
        hook = "import sys, setuptools.build_meta as backend; print(backend.build_wheel(sys.argv[1]))"
        proc = subprocess.run(
            [sys.executable, "-c", hook, str(dist)],
            cwd=source,
            env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise AgentMemoryError(
                "Could not build the helper wheel:\n" + (proc.stderr.strip()[-2000:] or proc.stdout[-2000:]),
                next_step=".venv/bin/pip install -e '.[space]' (the build backend it pins), then build again",
            )
        name = proc.stdout.strip().splitlines()[-1]
        return name, normalized_zip((dist / name).read_bytes(), epoch)


def normalized_zip(data: bytes, epoch: int) -> bytes:
    """`data` (a zip) rewritten so that its bytes depend only on the names and contents of its files."""
    when = time.gmtime(epoch)[:6]
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist() if not info.is_dir()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        # dist-info last and RECORD at the very end, as wheel tools write them
        for name, content in sorted(entries, key=lambda e: (".dist-info/" in e[0], e[0].endswith("/RECORD"), e[0])):
            info = zipfile.ZipInfo(name, date_time=when)
            info.create_system = 3  # Unix, so that the permission bits below mean the same everywhere
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            target.writestr(info, content)
    return out.getvalue()


# -- render -------------------------------------------------------------------------------------------------


def render(inputs: Inputs, base_url: str, revision: str) -> dict[str, bytes]:
    """Every file of the site, by path, for commands that download the helper from `base_url`."""
    import jinja2
    from markdown_it import MarkdownIt

    if not base_url.endswith("/"):
        base_url += "/"
    helper = generator.Helper(
        url=f"{base_url}helper/{inputs.wheel_name}", sha256=inputs.sha256, version=__version__, revision=revision
    )
    examples = [
        (
            label,
            language,
            generator.script(generator.choices({"os": system, "installer": "venv", "project": "my-project"}), helper),
        )
        for label, language, system in (
            ("Linux", "sh", "linux"),
            ("macOS", "sh", "macos"),
            ("Windows (PowerShell)", "powershell", "windows"),
        )
    ]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    context = {
        "helper": helper,
        "pyodide_version": inputs.pyodide_version,
        "examples": examples,
        "operating_systems": generator.OPERATING_SYSTEMS,
        "installers": generator.INSTALLERS,
        "agents": generator.AGENTS,
        "load_timeout_s": LOAD_TIMEOUT_S,
        # the page's own script, which checks all the rest, is checked by the browser (Subresource Integrity)
        "page_js_integrity": "sha256-" + base64.b64encode(hashlib.sha256(inputs.assets["page.js"]).digest()).decode(),
        "config": {
            "helper": {"url": helper.url, "sha256": helper.sha256, "version": helper.version, "revision": revision},
            # every file the page runs, by SHA-256: checked each time it is used, and its key in Cache Storage
            "modules": {path: hashlib.sha256(data).hexdigest() for path, data in inputs.modules.items()},
            "runtime": {
                f"pyodide/{name}": hashlib.sha256(data).hexdigest()
                for name, data in sorted({**inputs.pyodide, **inputs.derived}.items())
            },
            "lock": {"info": inputs.lock_info, "packages": {}},
        },
    }
    bootstrap_md = env.get_template("bootstrap.md").render(context)
    if any("```" in text for _, _, text in examples):
        raise AgentMemoryError(
            "A generated example contains a Markdown code fence; bootstrap.md would break.",
            next_step="change the example in build.py so that it has no ``` (then build again)",
        )
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    files = {
        "index.html": env.get_template("index.html").render(context),
        "bootstrap.md": bootstrap_md,
        "bootstrap.html": env.get_template("document.html").render(
            context, title="Set up agent-memory", body=markdown.render(bootstrap_md)
        ),
        "README.md": env.get_template("README.md").render(context),
        "llms.txt": env.get_template("llms.txt").render(context),
    }
    site = {path: text.encode() for path, text in files.items()}
    site.update(inputs.assets)
    site.update({f"py/{path}": data for path, data in inputs.modules.items()})
    site.update({f"pyodide/{name}": data for name, data in inputs.pyodide.items()})
    site.update({f"pyodide/{name}": data for name, data in inputs.derived.items()})
    site[f"helper/{inputs.wheel_name}"] = inputs.wheel
    return site


# -- write --------------------------------------------------------------------------------------------------


def write(site: dict[str, bytes], out: Path) -> None:
    """Replace `out` with exactly these files: staged beside it, then swapped in, so that `out` is always a
    whole site (the old one or the new one), even if this process is killed or another build runs at once."""
    out = out.absolute()
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder.", next_step="python build.py --out ANOTHER_FOLDER")
    out.parent.mkdir(parents=True, exist_ok=True)
    _recover(out)
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-{os.getpid()}-", dir=out.parent))
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    try:
        for path, data in sorted(site.items()):
            target = staged / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.chmod(staged, 0o755)  # mkdtemp makes it owner-only; the site is public
        if out.exists():
            os.replace(out, old)
        os.replace(staged, out)
    except BaseException as exc:
        if old.exists() and not out.exists():
            os.replace(old, out)  # roll back: the previous site stays
        shutil.rmtree(staged, ignore_errors=True)
        if isinstance(exc, OSError):
            raise AgentMemoryError(
                f"Could not write the site to {out} ({exc.strerror or exc}); it was left as it was.",
                next_step="check the folder (and that no other build writes it at the same time), then build again",
            ) from exc
        raise
    shutil.rmtree(old, ignore_errors=True)


def _recover(out: Path) -> None:
    """Clean up after builds that were killed while writing: restore a site moved aside, drop staged ones."""
    for leftover in sorted(out.parent.glob(f".{out.name}.*-*")):
        kind, _, rest = leftover.name[len(out.name) + 2 :].partition("-")
        pid = rest.split("-")[0]
        if kind not in ("new", "old") or not pid.isdigit() or _alive(int(pid)):
            continue
        if kind == "old" and not out.exists():
            os.replace(leftover, out)  # killed between its two renames: the previous site comes back
        else:
            shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- serve --------------------------------------------------------------------------------------------------


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the content types Pyodide needs (`.wasm` as application/wasm, `.mjs` as JavaScript)."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **CONTENT_TYPES}

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")  # a rebuilt site shows at once
        super().end_headers()


def listen(port: int) -> http.server.ThreadingHTTPServer:
    """A server bound to 127.0.0.1:`port` (0: any free port), not yet serving."""
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), SiteHandler)
    except OSError as exc:
        raise UsageError(
            f"Cannot listen on 127.0.0.1:{port} ({exc.strerror}).", next_step="python build.py --serve --port 0"
        ) from exc


def serve(server: http.server.ThreadingHTTPServer, out: Path) -> None:
    """Serve `out` until interrupted (Ctrl-C or SIGTERM)."""
    server.RequestHandlerClass = lambda *args, **kwargs: SiteHandler(*args, directory=str(out), **kwargs)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that SIGTERM stops the server as cleanly as Ctrl-C


# -- deploy -------------------------------------------------------------------------------------------------


def deploy(repo_id: str, inputs: Inputs, out: Path) -> dict[str, Any]:
    """Publish in two commits: the helper first, then the pages pinned to that first commit's revision."""
    from huggingface_hub import HfApi, hf_hub_url
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="space", space_sdk="static", exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="agent-memory-helper-") as tmp:
            wheel = Path(tmp) / "helper" / inputs.wheel_name
            wheel.parent.mkdir()
            wheel.write_bytes(inputs.wheel)
            helper_commit = api.upload_folder(
                repo_id=repo_id,
                repo_type="space",
                folder_path=tmp,
                commit_message=f"Helper agent-memory {__version__} (sha256 {inputs.sha256})",
            )
        revision = helper_commit.oid
        base_url = hf_hub_url(repo_id, "", repo_type="space", revision=revision)
        site = render(inputs, base_url, revision)
        write(site, out)
        pages_commit = api.upload_folder(
            repo_id=repo_id,
            repo_type="space",
            folder_path=out,
            commit_message=f"Pages for agent-memory {__version__}, pinned at {revision}",
            delete_patterns="*",  # the Space holds exactly this build (older helpers stay at their revisions)
        )
    except AgentMemoryError:
        raise
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status in (401, 403):
            raise AgentMemoryError(
                f"The Hub refused to publish to the Space {repo_id} (HTTP {status}).",
                next_step="run `hf auth login` yourself with a token that can write to it, then deploy again",
                exit_code=ACCESS,
            ) from exc
        raise _publish_failed(repo_id, exc) from exc
    except Exception as exc:  # no connection, a Space card the Hub refuses...: huggingface_hub says which
        raise _publish_failed(repo_id, exc) from exc
    return {
        "space": repo_id,
        "helper_revision": revision,
        "pages_revision": pages_commit.oid,
        "helper_url": hf_hub_url(repo_id, f"helper/{inputs.wheel_name}", repo_type="space", revision=revision),
    }


def _publish_failed(repo_id: str, exc: Exception) -> AgentMemoryError:
    detail = str(exc).strip() or type(exc).__name__
    return AgentMemoryError(
        f"Publishing to the Space {repo_id} failed: {detail}",
        next_step=f"python build.py --deploy {repo_id} (what was published stays; it finishes the rest)",
    )


def check_space_id(repo_id: str) -> str:
    """`repo_id` if it is a valid OWNER/NAME, else UsageError."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise UsageError(
            f"Invalid Space id {repo_id!r}: {exc}", next_step="python build.py --deploy OWNER/NAME"
        ) from exc
    if repo_id.count("/") != 1:
        raise UsageError(
            f"Invalid Space id {repo_id!r}: expected OWNER/NAME.", next_step="python build.py --deploy OWNER/NAME"
        )
    return repo_id


# -- command line -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Parse, run, and render errors as `Error:` / `Next:` on stderr with the contract's exit codes."""
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "site", help="output folder (default: site/)")
    parser.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1 after building it")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"with --serve (default {DEFAULT_PORT})")
    parser.add_argument("--base-url", help="where the commands download the helper from (default: this server)")
    parser.add_argument("--deploy", metavar="OWNER/NAME", help="publish to this static Hugging Face Space")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    options = parser.parse_args(argv)
    try:
        result = _run(options)
    except AgentMemoryError as exc:
        print(errors.render(exc.message, exc.next_step), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    return 0 if result is None else result


def _run(options: argparse.Namespace) -> int | None:
    if options.deploy and (options.serve or options.base_url):
        raise UsageError(
            "--deploy pins its own URLs: it cannot be combined with --serve or --base-url.",
            next_step="python build.py --deploy OWNER/NAME (alone)",
        )
    if options.deploy:
        repo_id = check_space_id(options.deploy)
        inputs = gather(source_date_epoch())
        _report(options, {"site": str(options.out), **_describe(inputs), **deploy(repo_id, inputs, options.out)})
        return None
    server = listen(options.port) if options.serve else None
    try:
        port = server.server_address[1] if server else DEFAULT_PORT
        base_url = options.base_url or f"http://127.0.0.1:{port}/"
        inputs = gather(source_date_epoch())
        write(render(inputs, base_url, LOCAL_REVISION), options.out)
        url = f"http://127.0.0.1:{port}/" if server else None
        _report(
            options,
            {
                "site": str(options.out),
                **_describe(inputs),
                "helper_url": f"{base_url}helper/{inputs.wheel_name}",
                "url": url,
            },
        )
    except BaseException:
        if server:
            server.server_close()
        raise
    if server:
        print(f"Serving {options.out} at http://127.0.0.1:{port}/ (Ctrl-C to stop)", file=sys.stderr, flush=True)
        serve(server, options.out.absolute())
    return None


def _describe(inputs: Inputs) -> dict[str, Any]:
    return {
        "version": __version__,
        "wheel": inputs.wheel_name,
        "sha256": inputs.sha256,
        "pyodide": inputs.pyodide_version,
    }


def _report(options: argparse.Namespace, result: dict[str, Any]) -> None:
    if options.json:
        print(json.dumps(result), flush=True)
        return
    lines = [f"{key}: {value}" for key, value in result.items() if value is not None]
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())
