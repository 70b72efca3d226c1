"""The same generator cases under real Pyodide (the pinned npm package, in Node, offline): every answer must
be byte-for-byte the one CPython gives, so everything test_space_generator checks holds in the browser too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import space_generator_cases as cases
import space_site

import tools
from space import generator
from tools import require_npm_packages

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
PYODIDE = REPO / "node_modules" / "pyodide"
RUNNER = TESTS / "space_pyodide.mjs"


def offline_prefix() -> list[str]:
    """`unshare -n --` where this machine allows a process without network (root, or user namespaces)."""
    probe = subprocess.run(["unshare", "-n", "--", "true"], capture_output=True)
    return ["unshare", "-n", "--"] if probe.returncode == 0 else []


def run_in_pyodide(python: str, tmp_path: Path, snapshot: Path | None = None) -> dict:
    """Run `python` (its last expression a string) in Pyodide with the page's files and the shared cases;
    from `snapshot` (build.py's), only the cases: the generator must then come from the snapshot itself."""
    require_npm_packages()
    files = {path: str(REPO / source) for path, source in generator.RUNTIME_FILES.items()} if not snapshot else {}
    files["space_generator_cases.py"] = str(TESTS / "space_generator_cases.py")
    request = tmp_path / "pyodide-request.json"
    fields = {"pyodide": str(PYODIDE), "files": files, "python": python, "snapshot": str(snapshot or "")}
    request.write_text(json.dumps(fields))
    proc = subprocess.run(
        [*offline_prefix(), "node", str(RUNNER), str(request)], capture_output=True, text=True, timeout=300
    )
    tools.exited(proc)
    result = json.loads(proc.stdout)
    assert result["fetches"] == []  # nothing was fetched: not even a try
    return result


@pytest.mark.slow
@pytest.mark.parametrize("start", ["files", "snapshot"])
def test_pyodide_gives_the_same_answer_as_cpython_to_every_case(start: str, tmp_path: Path) -> None:
    python = (
        "import json, sys\n"
        "import space_generator_cases as cases\n"
        "from space.generator import from_form\n"
        "json.dumps({'platform': sys.platform, 'answers': cases.run_all(from_form)})\n"
    )
    snapshot = None
    if start == "snapshot":  # what the page runs: the generator imported into the build's snapshot
        space_site.built(tmp_path / "site")
        snapshot = tmp_path / "site" / "pyodide" / "snapshot.bin.gz"
    result = run_in_pyodide(python, tmp_path, snapshot)
    assert result["python_version"].startswith("3.14")  # Pyodide's interpreter, not the host's
    answers = json.loads(result["result"])
    assert answers["platform"] == "emscripten"
    expected = cases.run_all(generator.from_form)
    assert answers["answers"].keys() == expected.keys()
    different = [case for case in expected if answers["answers"][case] != expected[case]]
    assert not different, different
    # and the answers are real ones: scripts for the matrix, refusals for the hostile cases that expect them
    assert all(json.loads(expected[case])["ok"] for case in cases.matrix())
    refused = [case for case, (_f, _v, want, _d) in cases.hostile().items() if want == "refused"]
    assert refused and not any(json.loads(expected[case])["ok"] for case in refused)
