// Makes the Space's memory snapshot of Pyodide, for build.py: CPython started and the generator imported
// (from the checkout's files, the ones the tests check), so that the page skips Python's start-up and the
// generator's compilation (seconds) and only restores memory (a fraction of a second).
//
//   node space/snapshot.mjs PYODIDE_DIR < REQUEST.json     (the snapshot's bytes on stdout)
//
// REQUEST: {"root": folder in Pyodide, "files": {path under root: text}, "imports": [module, ...]}.
//
// The same inputs give the same bytes: the clock and the random bytes Pyodide and CPython read while
// starting are fixed here (the page reseeds `random` after restoring; the string hash seed stays fixed,
// which only matters to a server hashing untrusted keys). TZ and LANG are set by build.py.
import nodeCrypto from "node:crypto";
import { readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const pyodideDir = process.argv[2];
const request = JSON.parse(readFileSync(0, "utf8"));
let clock = Date.UTC(2026, 0, 1);
let monotonic = 0;
Date.now = () => (clock += 1);
performance.now = () => (monotonic += 1);
let seed = 1;
function fixedBytes(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    bytes[i] = seed >>> 24;
  }
  return view;
}
nodeCrypto.randomFillSync = fixedBytes; // what Emscripten's getrandom() calls in Node
if (globalThis.crypto) globalThis.crypto.getRandomValues = fixedBytes; // a global from Node 19 on

const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const lock = JSON.parse(readFileSync(join(pyodideDir, "pyodide-lock.json"), "utf8"));
const pyodide = await loadPyodide({
  indexURL: pyodideDir,
  lockFileContents: { info: lock.info, packages: {} },
  env: { PYTHONHASHSEED: "0" },
  stdout: (line) => process.stderr.write(`${line}\n`),
  _sysExecutable: "python", // else the path of this script, which would then differ between checkouts
  _makeSnapshot: true,
});
for (const [path, text] of Object.entries(request.files)) {
  const target = request.root + path;
  pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
  pyodide.FS.writeFile(target, text);
}
// the files are not in the snapshot (Emscripten's file system lives outside Python's memory): every module
// the page needs must be imported here, the standard library's included
pyodide.globals.set("request", pyodide.toPy(request));
pyodide.runPython(`
import importlib, sys
if request["files"]:  # else no folder: the import system would remember that it has none
    sys.path.insert(0, request["root"])
for name in request["imports"]:
    importlib.import_module(name)
del request
`);
const snapshot = pyodide.makeMemorySnapshot();
for (let done = 0; done < snapshot.length; ) done += writeSync(1, snapshot, done);
