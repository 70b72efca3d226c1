// The start-up options of the Space's page, one at a time, for bench/space_page.py (table 9b). Each is a
// cold or warm load of Pyodide from the built site, chosen by the query string; the page marks
// `python-ready` and `ready` and sets data-state as the real page does.
//
//   lock=file       loadPyodide fetches pyodide-lock.json (the default: the lock is passed inline)
//   worker=1        Pyodide starts in a Web Worker created at page start
//   stdlib=trimmed  a standard library holding only the modules that the generator and Pyodide import
//   snapshot=page   from build.py's memory snapshot (the generator imported), the wasm and it gzipped
//   snapshot=python from a snapshot of Python alone (made by the bench), gzipped the same way
//   cache=1         with a snapshot: the runtime's files kept in Cache Storage (as the page)
//   generator=after|start   then import the generator, its files fetched after Python is ready, or at once
const options = new URLSearchParams(location.search);
const config = JSON.parse(document.getElementById("options-config").textContent);
const INDEX_URL = new URL("pyodide/", document.baseURI).href;
const networkFetch = globalThis.fetch;
const mark = (name) => performance.mark(name);

function pyodideOptions() {
  const result = { indexURL: INDEX_URL, stdout: () => {} };
  if (options.get("lock") !== "file") result.lockFileContents = config.lock;
  if (options.get("stdlib") === "trimmed") result.stdLibURL = new URL("bench-stdlib-trimmed.zip", document.baseURI).href;
  return result;
}

async function bytes(path, cache) {
  const key = new URL(path, document.baseURI).href;
  const cached = cache && (await cache.match(key));
  if (cached) return new Uint8Array(await cached.arrayBuffer());
  const data = new Uint8Array(await (await networkFetch(new URL(path, document.baseURI))).arrayBuffer());
  if (cache) await cache.put(key, new Response(data));
  return data;
}

const gunzip = (data, type) =>
  new Response(new Blob([data]).stream().pipeThrough(new DecompressionStream("gzip")), { headers: { "Content-Type": type } });

async function fromSnapshot(loadPyodide) {
  const cache = options.get("cache") === "1" ? await caches.open("bench-options") : null;
  const wasm = bytes("pyodide/pyodide.asm.wasm.gz", cache).then((data) => gunzip(data, "application/wasm"));
  const stdlib = bytes("pyodide/python_stdlib.zip", cache).then((data) => new Response(data));
  const snapshotFile = options.get("snapshot") === "page" ? "snapshot.bin.gz" : "bench-snapshot-python.bin.gz";
  const snapshot = bytes(`pyodide/${snapshotFile}`, cache)
    .then((data) => gunzip(data, "application/octet-stream").arrayBuffer())
    .then((buffer) => new Uint8Array(buffer));
  const served = { [`${INDEX_URL}pyodide.asm.wasm`]: wasm, [`${INDEX_URL}python_stdlib.zip`]: stdlib };
  globalThis.fetch = (resource, init) => served[String(resource)] || networkFetch(resource, init);
  try {
    return await loadPyodide({ ...pyodideOptions(), _loadSnapshot: snapshot });
  } finally {
    globalThis.fetch = networkFetch;
  }
}

const generatorFiles = () =>
  Promise.all(config.modules.map(async (path) => [path, new Uint8Array(await (await fetch(`py/${path}`)).arrayBuffer())]));

async function importGenerator(pyodide, files) {
  for (const [path, data] of await files) {
    const target = `/home/pyodide/space/${path}`;
    pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    pyodide.FS.writeFile(target, data);
  }
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/space/'); import space.generator");
}

async function main() {
  const early = options.get("generator") === "start" ? generatorFiles() : null;
  if (options.get("worker") === "1") {
    const worker = new Worker("bench-space-worker.js", { type: "module" });
    const { stdout, ...cloneable } = pyodideOptions(); // a function cannot be posted
    worker.postMessage({ options: cloneable });
    await new Promise((resolve, reject) => {
      worker.onmessage = resolve;
      worker.onerror = reject;
    });
    mark("python-ready");
  } else {
    const { loadPyodide } = await import(`${INDEX_URL}pyodide.mjs`);
    const pyodide = options.get("snapshot") ? await fromSnapshot(loadPyodide) : await loadPyodide(pyodideOptions());
    mark("python-ready");
    if (options.get("generator")) await importGenerator(pyodide, early || generatorFiles());
  }
  mark("generator-ready");
  mark("ready");
  document.body.dataset.state = "ready";
}

main().catch((error) => {
  document.body.textContent = String(error);
  document.body.dataset.state = "error";
});

