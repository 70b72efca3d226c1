// Runs the Space's generator under real Pyodide in Node, offline, from the pinned npm package.
//
//   node tests/space_pyodide.mjs REQUEST.json
//
// REQUEST: {"pyodide": dir of the npm package, "files": {path in Pyodide's site folder: path on disk},
//           "python": code to run, whose last expression is a string (printed as the "result"),
//           "snapshot": optional, a gzipped memory snapshot made by build.py to start from}.
// Prints one JSON object: {"result", "python_version", "load_ms", "run_ms", "fetches"}.
// Any fetch() is refused and reported: everything must come from the local package and files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

const request = JSON.parse(readFileSync(process.argv[2], "utf8"));
const fetches = [];
globalThis.fetch = async (url) => {
  fetches.push(String(url));
  throw new Error(`network access refused: ${url}`);
};

const { loadPyodide } = await import(pathToFileURL(join(request.pyodide, "pyodide.mjs")).href);
const lock = JSON.parse(readFileSync(join(request.pyodide, "pyodide-lock.json"), "utf8"));
const started = performance.now();
// The same lock file the site ships: the package's `info`, no packages (nothing to fetch from a CDN).
const pyodide = await loadPyodide({
  indexURL: request.pyodide,
  lockFileContents: { info: lock.info, packages: {} },
  ...(request.snapshot ? { _loadSnapshot: gunzipSync(readFileSync(request.snapshot)) } : {}),
});
const loaded = performance.now();

const root = "/home/pyodide/space/";
for (const [target, source] of Object.entries(request.files)) {
  const path = root + target;
  pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
  pyodide.FS.writeFile(path, readFileSync(source));
}
pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(root)})`);
const runStarted = performance.now();
const result = pyodide.runPython(request.python);
const finished = performance.now();

process.stdout.write(
  JSON.stringify({
    result,
    python_version: pyodide.runPython("import sys; sys.version"),
    load_ms: loaded - started,
    run_ms: finished - runStarted,
    fetches,
  }),
);
