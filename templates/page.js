// The Space's form: loads Python (Pyodide) from this site, loads the setup-command generator, and turns the
// form's answers into commands. Every request goes to this page's origin.
//
// Python starts from a memory snapshot made by build.py: CPython started and the generator imported from
// the same files (restoring takes a fraction of a second, starting and importing take seconds). The
// runtime's large files come gzipped by the build. Every file the page runs (Pyodide's loader, the wasm,
// the standard library, the snapshot and, without it, the generator's files) is kept in Cache Storage under
// its SHA-256, so that a second visit downloads nothing big again (a Space's file storage serves binary files
// `no-store`: the browser's HTTP cache cannot keep them), and each is checked against the SHA-256 the build
// wrote into this page every time it is used, whether it was just downloaded or taken from the cache.

const config = JSON.parse(document.getElementById("space-config").textContent);
const body = document.body;
const form = document.getElementById("setup-form");
const output = document.getElementById("setup-commands");
const copyButton = document.getElementById("copy");
const copyStatus = document.getElementById("copy-status");
const statusLine = document.getElementById("status");
const FIELDS = ["os", "installer", "agent", "project", "bucket", "hooks", "codex_sandbox", "sync", "skills"];
const MODULE_ROOT = "/home/pyodide/space/";
const INDEX_URL = new URL("pyodide/", document.baseURI).href;
const CACHE = "agent-memory-space";
const networkFetch = globalThis.fetch; // the page's own downloads bypass what loadPython gives Pyodide
// The SHA-256 of every file the page runs, by its path on the site: the only bytes it will use
const EXPECTED = {
  ...config.runtime,
  ...Object.fromEntries(Object.entries(config.modules).map(([path, digest]) => [`py/${path}`, digest])),
};
let generate = null;
let submitted = false;

function fail(message) {
  if (body.dataset.state === "error") return;
  forgetRuntime(); // whatever went wrong, the next visit downloads the runtime again
  clearTimeout(window.setupWatchdog);
  body.dataset.state = "error";
  statusLine.setAttribute("role", "alert");
  statusLine.textContent = message;
  output.textContent = "The commands cannot be generated here. bootstrap.md lists the same steps.";
}

function cannotStart(error) {
  const reason = String(error.message || error).replace(/\.$/, "");
  fail(`Python could not start in this page: ${reason}. Reload it; if that does not help, use bootstrap.md.`);
}

function ready() {
  clearTimeout(window.setupWatchdog);
  statusLine.textContent = "Ready: the commands update as you fill in the form.";
  body.dataset.state = "ready";
  update();
  performance.mark("ready"); // read by bench/page.py, with python-ready and generator-ready
}

// `again`: after a download that did not match, so that no cache between here and the server answers twice
async function download(path, again) {
  let response;
  try {
    response = await networkFetch(new URL(path, document.baseURI), again ? { cache: "reload" } : undefined);
  } catch (error) {
    throw new Error(`Could not download ${path} (${error.message}).`);
  }
  if (!response.ok) throw new Error(`Could not download ${path} (HTTP ${response.status}).`);
  return new Uint8Array(await response.arrayBuffer());
}

// Cache Storage exists only in secure contexts (https, localhost): elsewhere every visit downloads.
async function openCache() {
  try {
    return await caches.open(CACHE);
  } catch {
    return null;
  }
}

function forgetRuntime() {
  globalThis.caches?.delete(CACHE).catch(() => {});
}

// The file's hash is part of its key: a revision of the page never even looks at another's entry.
function cacheKey(path) {
  return new URL(`${path}?sha256=${EXPECTED[path]}`, document.baseURI).href;
}

async function sha256(data) {
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// One of the files the page runs, from Cache Storage or else downloaded, and in both cases checked against
// the SHA-256 this page carries before it is used: an entry planted or damaged in the cache, a captive
// portal's page or a cut download is never run, nor kept for later visits. What does not match is dropped
// and downloaded again; a second mismatch stops the page.
async function runtimeFile(path, cache) {
  const key = cacheKey(path);
  const cached = cache && (await cache.match(key));
  for (let attempt = 1; ; attempt += 1) {
    const fromCache = attempt === 1 && cached;
    const data = fromCache ? new Uint8Array(await cached.arrayBuffer()) : await download(path, attempt > 1);
    const actual = await sha256(data);
    if (actual === EXPECTED[path]) {
      if (fromCache) body.dataset.runtime = "cache";
      else if (cache) cache.put(key, new Response(data)).catch(() => {}); // a full disk: downloaded next time
      return data;
    }
    if (fromCache) {
      await cache.delete(key);
      console.warn(`${path} in Cache Storage does not match this page (SHA-256 ${actual}): dropped, downloaded again`);
    }
    if (attempt === 2) throw new Error(`${path} has SHA-256 ${actual}, not ${EXPECTED[path]}`);
  }
}

function gunzip(data, type) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream, { headers: { "Content-Type": type } });
}

// Drops from Cache Storage every entry that is not one of this revision's files under its SHA-256.
async function forgetOtherVersions(cache) {
  const keep = new Set(Object.keys(EXPECTED).map(cacheKey));
  for (const request of await cache.keys()) if (!keep.has(request.url)) await cache.delete(request);
}

// Python's files, downloads started at once (before Pyodide's loader is even imported): from the snapshot
// (the wasm and the snapshot gzipped), or, without DecompressionStream, the plain wasm and the generator's
// files, from which Python starts the slow way.
function pythonFiles(cache, snapshot) {
  const loader = ["pyodide/pyodide.mjs", "pyodide/pyodide.asm.mjs"].map((path) => runtimeFile(path, cache));
  const wasm = snapshot
    ? runtimeFile("pyodide/pyodide.asm.wasm.gz", cache).then((data) => gunzip(data, "application/wasm"))
    : runtimeFile("pyodide/pyodide.asm.wasm", cache).then((data) => wasmResponse(data));
  const stdlib = runtimeFile("pyodide/python_stdlib.zip", cache).then((data) => new Response(data));
  const memory = snapshot
    ? runtimeFile("pyodide/snapshot.bin.gz", cache)
        .then((data) => gunzip(data, "application/octet-stream").arrayBuffer())
        .then((buffer) => new Uint8Array(buffer))
    : null;
  const modules = snapshot
    ? null
    : Promise.all(Object.keys(config.modules).map((path) => runtimeFile(`py/${path}`, cache)));
  // a file that cannot be had is reported at once (Pyodide, missing one, may only log it and wait forever)
  for (const promise of [...loader, wasm, stdlib, memory, modules]) promise?.catch(cannotStart);
  return { loader: Promise.all(loader), wasm, stdlib, snapshot: memory, modules };
}

function wasmResponse(data) {
  return new Response(data, { headers: { "Content-Type": "application/wasm" } });
}

// Pyodide's loader, imported from the checked bytes (never from its URL, which could answer anything). Given
// its runtime module, the loader imports nothing else.
async function importLoader(loader) {
  const [main, runtime] = await loader;
  const imported = async (data) => {
    const url = URL.createObjectURL(new Blob([data], { type: "text/javascript" }));
    try {
      return await import(url);
    } finally {
      URL.revokeObjectURL(url);
    }
  };
  const [{ loadPyodide }, { default: createPyodideModule }] = await Promise.all([imported(main), imported(runtime)]);
  return (options) => loadPyodide({ ...options, createPyodideModule });
}

// Pyodide downloads its .wasm and standard library itself: during loadPyodide, fetch() answers those two
// URLs with the checked files (decompressed, the wasm typed application/wasm whatever the server sent), and
// everything else as usual.
async function loadPython(loadPyodide, { wasm, stdlib, snapshot }) {
  const served = { [`${INDEX_URL}pyodide.asm.wasm`]: wasm, [`${INDEX_URL}python_stdlib.zip`]: stdlib };
  globalThis.fetch = (resource, init) => served[String(resource)] || networkFetch(resource, init);
  try {
    const pyodide = await loadPyodide({ ...pyodideOptions(), ...(snapshot && { _loadSnapshot: snapshot }) });
    await stdlib; // Pyodide only logs a failed download of it, and the snapshot would start without it
    return pyodide;
  } finally {
    globalThis.fetch = networkFetch;
  }
}

function pyodideOptions() {
  return {
    indexURL: INDEX_URL,
    lockFileContents: config.lock, // no packages: nothing to fetch, not even the lock file
    stdout: () => {},
    stderr: (line) => console.warn(line),
  };
}

// Without the snapshot: the generator's files (checked by runtimeFile) written where the snapshot has them.
async function generatorFromFiles(pyodide, modules) {
  const contents = await modules;
  Object.keys(config.modules).forEach((path, i) => {
    const target = MODULE_ROOT + path;
    pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    pyodide.FS.writeFile(target, contents[i]);
  });
  pyodide.runPython(`import sys; sys.path.insert(0, ${JSON.stringify(MODULE_ROOT)})`);
  return generator(pyodide);
}

function generator(pyodide) {
  pyodide.runPython("import random; random.seed()"); // a snapshot's seed would be the same for everyone
  const fromForm = pyodide.pyimport("space.generator").from_form;
  return (request) => JSON.parse(fromForm(JSON.stringify(request)));
}

function answers() {
  const values = {};
  for (const name of FIELDS) {
    const control = form.elements[name];
    values[name] = control.type === "checkbox" ? control.checked : control.value;
  }
  return values;
}

function showError(field, message) {
  const target = document.getElementById(`${field || "form"}-error`) || document.getElementById("form-error");
  target.textContent = message;
  if (field && form.elements[field]) form.elements[field].setAttribute("aria-invalid", "true");
}

function update() {
  if (!generate) return;
  for (const name of FIELDS) {
    document.getElementById(`${name}-error`).textContent = "";
    form.elements[name].removeAttribute("aria-invalid");
  }
  for (const warning of document.querySelectorAll(".warning")) warning.textContent = "";
  document.getElementById("form-error").textContent = "";
  copyStatus.textContent = "";
  const values = answers();
  if (!values.project.trim() && !submitted) {
    output.textContent = "Fill in the project name to get the commands.";
    copyButton.disabled = true;
    return;
  }
  const result = generate({ helper: config.helper, form: values });
  if (result.ok) {
    output.textContent = result.script;
    copyButton.disabled = false;
    // the commands run, but the owner should know (a POSIX folder on Windows is one of the current drive)
    for (const { field, message } of result.warnings) {
      const target = document.getElementById(`${field}-warning`);
      if (target) target.textContent = `Note: ${message}`;
    }
  } else {
    showError(result.field, result.message);
    output.textContent = "Correct the field marked above to get the commands.";
    copyButton.disabled = true;
  }
}

async function copyCommands() {
  try {
    await navigator.clipboard.writeText(output.textContent);
    copyStatus.textContent = "Copied. Paste them into a terminal opened in your project's folder.";
  } catch {
    const range = document.createRange();
    range.selectNodeContents(output);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    copyStatus.textContent = "Your browser did not allow copying: the commands are selected, copy them with Ctrl+C (⌘C on a Mac).";
  }
}

function guessOs() {
  const platform = (navigator.userAgentData?.platform || navigator.userAgent || "").toLowerCase();
  if (platform.includes("win")) return "windows";
  if (platform.includes("mac")) return "macos";
  return "linux";
}

async function main() {
  form.elements.os.value = guessOs();
  const bootstrapLink = document.getElementById("bootstrap-link");
  bootstrapLink.textContent = new URL("bootstrap.md", document.baseURI).href;
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitted = true;
    update();
    if (!copyButton.disabled) output.focus();
  });
  copyButton.addEventListener("click", copyCommands);

  // crypto.subtle, like Cache Storage, exists only in secure contexts (https, localhost): without it no file
  // could be checked, and none is run
  if (!globalThis.crypto?.subtle) {
    fail(
      "This page checks every file it runs against its SHA-256, which browsers allow only over https (or on " +
        "this machine's own address): open it over https.",
    );
    return;
  }
  // without DecompressionStream (browsers before 2023), Python starts the slow way, from the plain files
  const snapshot = Boolean(globalThis.DecompressionStream);
  const cache = await openCache();
  const files = pythonFiles(cache, snapshot);
  try {
    const loadPyodide = await importLoader(files.loader);
    const pyodide = await loadPython(loadPyodide, files);
    performance.mark("python-ready");
    generate = snapshot ? generator(pyodide) : await generatorFromFiles(pyodide, files.modules);
    performance.mark("generator-ready");
    if (cache) forgetOtherVersions(cache).catch(() => {});
  } catch (error) {
    cannotStart(error);
    return;
  }
  ready();
}

main();
