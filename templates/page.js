// The Space's form: loads Python (Pyodide) from this site, loads the setup-command generator after checking
// each file's SHA-256, and turns the form's answers into commands. Every request goes to this page's origin.
//
// Python starts from a memory snapshot made by build.py: CPython started and the generator imported from
// the same files (restoring takes a fraction of a second, starting and importing take seconds). The
// runtime's large files come gzipped by the build and are kept in Cache Storage by their SHA-256, so that a
// second visit downloads nothing big again (a Space's file storage serves binary files `no-store`: the
// browser's HTTP cache cannot keep them). Both the snapshot and, without it, the generator's files are
// checked against the SHA-256 the build wrote into this page.

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

function ready() {
  clearTimeout(window.setupWatchdog);
  statusLine.textContent = "Ready: the commands update as you fill in the form.";
  body.dataset.state = "ready";
  update();
  performance.mark("ready"); // read by bench/page.py, with python-ready and generator-ready
}

// Pyodide compiles its .wasm with instantiateStreaming, which refuses any Content-Type but application/wasm
// (some static hosts send application/octet-stream), and Pyodide then waits forever instead of failing.
// Compiling from the downloaded bytes works whatever the type; a failed download is reported at once.
function installWasmFallback() {
  const streaming = WebAssembly.instantiateStreaming?.bind(WebAssembly);
  WebAssembly.instantiateStreaming = async (source, imports) => {
    let response;
    try {
      response = await source;
    } catch (error) {
      fail(`Could not download Python's runtime (${error.message}). Reload the page to try again.`);
      throw error;
    }
    if (!response.ok) {
      fail(`Could not download ${response.url} (HTTP ${response.status}). Reload the page to try again.`);
      throw new Error(`HTTP ${response.status} for ${response.url}`);
    }
    const type = (response.headers.get("Content-Type") || "").split(";")[0].trim().toLowerCase();
    if (streaming && type === "application/wasm") {
      body.dataset.wasm = "streaming";
      return streaming(response, imports);
    }
    body.dataset.wasm = "buffered";
    return WebAssembly.instantiate(await response.arrayBuffer(), imports);
  };
}

async function download(path) {
  let response;
  try {
    response = await networkFetch(new URL(path, document.baseURI));
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

function cacheKey(path) {
  return new URL(`${path}?sha256=${config.runtime[path]}`, document.baseURI).href;
}

// One of the runtime's files, from Cache Storage or else downloaded, checked against the SHA-256 the build
// wrote into this page (a captive portal's page or a cut download must never be kept for later visits).
// crypto.subtle, like Cache Storage, exists only in secure contexts: over plain http neither is used, and
// there the page itself could be anything anyway.
async function runtimeFile(path, cache) {
  const cached = cache && (await cache.match(cacheKey(path)));
  if (cached) {
    body.dataset.runtime = "cache";
    return new Uint8Array(await cached.arrayBuffer());
  }
  const data = await download(path);
  if (crypto.subtle) {
    const digest = await crypto.subtle.digest("SHA-256", data);
    const actual = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    if (actual !== config.runtime[path]) throw new Error(`${path} has SHA-256 ${actual}, not ${config.runtime[path]}`);
  }
  if (cache) cache.put(cacheKey(path), new Response(data)).catch(() => {}); // a full disk: downloaded next time
  return data;
}

function gunzip(data, type) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream, { headers: { "Content-Type": type } });
}

// Drops the files of earlier versions of the page from Cache Storage (their SHA-256 differ).
async function forgetOtherVersions(cache) {
  const keep = new Set(Object.keys(config.runtime).map(cacheKey));
  for (const request of await cache.keys()) if (!keep.has(request.url)) await cache.delete(request);
}

// The snapshot's runtime, downloads started at once (before Pyodide's loader is even imported).
function snapshotRuntime(cache) {
  const wasm = runtimeFile("pyodide/pyodide.asm.wasm.gz", cache).then((data) => gunzip(data, "application/wasm"));
  const stdlib = runtimeFile("pyodide/python_stdlib.zip", cache).then((data) => new Response(data));
  const snapshot = runtimeFile("pyodide/snapshot.bin.gz", cache)
    .then((data) => gunzip(data, "application/octet-stream").arrayBuffer())
    .then((buffer) => new Uint8Array(buffer));
  for (const promise of [wasm, stdlib, snapshot]) promise.catch(() => {}); // reported where they are awaited
  return { wasm, stdlib, snapshot };
}

// Python from the snapshot. Pyodide downloads its .wasm and standard library itself: during loadPyodide,
// fetch() answers those two URLs with the runtime's files (decompressed), and everything else as usual.
async function loadPython(loadPyodide, { wasm, stdlib, snapshot }) {
  const served = { [`${INDEX_URL}pyodide.asm.wasm`]: wasm, [`${INDEX_URL}python_stdlib.zip`]: stdlib };
  globalThis.fetch = (resource, init) => served[String(resource)] || networkFetch(resource, init);
  try {
    const pyodide = await loadPyodide({ ...pyodideOptions(), _loadSnapshot: snapshot });
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

// The generator's files are checked against the SHA-256 that the build wrote into this page before Python
// may import them (hashlib, inside Pyodide: it works on http://localhost and https alike).
async function checkedGenerator(pyodide, downloads) {
  const entries = Object.entries(config.modules);
  const contents = await downloads;
  entries.forEach(([path], i) => {
    const target = MODULE_ROOT + path;
    pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    pyodide.FS.writeFile(target, contents[i]);
  });
  const check = pyodide.runPython(`
import hashlib, pathlib, sys
def check(root, expected):
    for path, digest in expected.items():
        actual = hashlib.sha256(pathlib.Path(root, path).read_bytes()).hexdigest()
        if actual != digest:
            return f"{path} has SHA-256 {actual}, not {digest}"
    sys.path.insert(0, root)
    return ""
check`);
  const problem = check(MODULE_ROOT, pyodide.toPy(config.modules));
  if (problem) throw new Error(`The generator's files do not match this page (${problem}).`);
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

  installWasmFallback();
  // without DecompressionStream (browsers before 2023), Python starts the slow way, from the plain files
  const snapshot = Boolean(globalThis.DecompressionStream);
  const downloads = snapshot ? null : Promise.all(Object.keys(config.modules).map((path) => download(`py/${path}`)));
  downloads?.catch(() => {}); // reported by checkedGenerator
  const cache = await openCache();
  const runtime = snapshot ? snapshotRuntime(cache) : null;
  try {
    const { loadPyodide } = await import(`${INDEX_URL}pyodide.mjs`);
    const pyodide = snapshot ? await loadPython(loadPyodide, runtime) : await loadPyodide(pyodideOptions());
    performance.mark("python-ready");
    generate = snapshot ? generator(pyodide) : await checkedGenerator(pyodide, downloads);
    performance.mark("generator-ready");
    if (cache) forgetOtherVersions(cache).catch(() => {});
  } catch (error) {
    fail(`Python could not start in this page: ${error.message || error}. Reload it; if that does not help, use bootstrap.md.`);
    return;
  }
  ready();
}

main();
