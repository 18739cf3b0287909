// Module Web Worker of the calculators: advisor (the wheel) on the self-hosted Pyodide.
// Protocol (Pyodide's web-worker guide): the page posts {id, fn, params} (plain JSON); the
// worker answers {id, json} (advisor.webapi.call's JSON text) or {id, fail} (a runtime failure;
// bad input is not a failure: webapi returns {"error": {...}} inside json). {id: 0, ready} once.
// Two ways to start, chosen per visit by what is cheaper for this reader (`chooseStart`):
// - "snapshot": the build-time memory snapshot (advisor imported, catalog loaded): about 0.4 s
//   of CPU on a desktop, but 5.6 MB to download;
// - "plain": the runtime starts Python itself (its standard library compiled to bytecode at
//   build time), installs the compiled copies of the wheels of advisor-lock.json
//   (`plainStart`) and builds the catalog from its JSON documents: about 0.2 MB instead of
//   5.6 MB on top of the runtime, but interactive after 1.17-1.28 s on a desktop (2 cores).
// Measured on the phone profile of issue 12 (scripts/bench_calculators.py --mobile: 9 Mbit/s,
// CPU x4; 2026-12-04, 2 cores): the first visit is interactive after 4.94-5.26 s plain (3.8 MB);
// from the snapshot it would need 9.3 MB, 8 s of transfer alone; a reload from the snapshot in
// the HTTP cache (0.98-1.36 s) is quicker than a plain one. So: the snapshot when this browser
// has fetched it before (the page keeps a note in localStorage; the HTTP cache itself cannot be
// asked without a console error) or on a device with a fine pointer (a desktop: cold start
// <= 1 s); on a phone or tablet, or with Save-Data, a plain start, and once ready the snapshot
// is fetched at low priority for the next page view (not with Save-Data).
// navigator.connection's downlink is no guide: headless Chromium on localhost reports 1.4
// Mbit/s. A failed snapshot start falls back to a plain one.
import { loadPyodide } from "../pyodide/pyodide.mjs";
import { installStored, mountStdlibRest } from "./unzip.mjs"; // not py.unpackArchive: unzip.mjs says why
import { gzipName, unsparse } from "./sparse.mjs";

const base = new URL("../pyodide/", import.meta.url).href;
const lockFileURL = base + "advisor-lock.json";

// ms since the worker's time origin; `origin` places them on the page's clock (calc.mjs)
export const timings = { origin: performance.timeOrigin, worker_start: performance.now() };

// The snapshot start's memory image. advisor.snapshot.gz holds it less its zero blocks
// (sparse.mjs); once inflated, those 16.6 MB are also kept in Cache Storage (SNAPSHOT_STORE,
// one entry), and the next start whose file carries the same tag reads them from there instead
// of inflating the gzip again: 29-38 ms instead of 109-111 ms in Chromium on 2 cores, on every
// reload. The tag is the file's own name for its content, in its gzip header
// (advisor.snapshot.SHA256: sparse.mjs gzipName), read from the response's first bytes; so a
// kept copy serves only the very bytes it was inflated from, whatever the host's ETag or
// Last-Modified say. (Only where a host sends the file already inflated, Content-Encoding: gzip,
// is there no header to read: then ETag or Last-Modified and the length, or nothing kept.)
// The entry is written once the reader pauses (`keepWhenIdle`) and only after a snapshot start
// that worked, replaced when the tag changes (a new build), and skipped where Cache Storage is
// refused; an entry that does not unpack is ignored.
const SNAPSHOT_STORE = "gpu-advisor-snapshot";
let keepSnapshot = null; // () => Promise: the write, once the start is over

function hostTag(res) {
  const v = res.headers.get("etag") || res.headers.get("last-modified");
  return v ? `${v}|${res.headers.get("content-length") || ""}` : null;
}

async function openStore() {
  try {
    return self.caches ? await self.caches.open(SNAPSHOT_STORE) : null;
  } catch {
    return null; // refused (an opaque origin, storage off)
  }
}

// The body's first `n` bytes (or all, if shorter) and a stream of the whole body, those included.
async function peek(body, n) {
  const reader = body.getReader();
  const chunks = [];
  let have = 0;
  while (have < n) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    have += value.length;
  }
  const head = chunks.length === 1 ? chunks[0] : new Uint8Array(have);
  if (chunks.length > 1) chunks.reduce((at, c) => (head.set(c, at), at + c.length), 0);
  const whole = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
    },
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) c.close();
      else c.enqueue(value);
    },
    cancel: (why) => reader.cancel(why),
  });
  return { head: head.subarray(0, n), whole };
}

async function snapshotMemory() {
  const res = await fetch(snapshotURL);
  if (!res.ok || !res.body) throw new Error(`advisor.snapshot.gz: HTTP ${res.status}`);
  const { head, whole } = await peek(res.body, 256);
  const inflated = head.length >= 4 && String.fromCharCode(...head.subarray(0, 4)) === "ASP1";
  const tag = inflated ? hostTag(res) : gzipName(head);
  const store = tag ? await openStore() : null;
  if (store) {
    try {
      const kept = await store.match(snapshotURL);
      if (kept && kept.headers.get("x-snapshot-tag") === tag) {
        const memory = unsparse(new Uint8Array(await kept.arrayBuffer()));
        whole.cancel().catch(() => {});
        timings.snapshot_ready = performance.now();
        timings.snapshot_from = "cache-storage";
        return memory;
      }
    } catch {
      /* unreadable or damaged: inflated below, and written anew */
    }
  }
  const stream = inflated ? whole : whole.pipeThrough(new DecompressionStream("gzip"));
  const sparse = new Uint8Array(await new Response(stream).arrayBuffer());
  timings.snapshot_ready = performance.now();
  const memory = unsparse(sparse);
  timings.unsparsed = performance.now();
  if (store) {
    keepSnapshot = () =>
      store.put(snapshotURL, new Response(sparse, { headers: { "x-snapshot-tag": tag } })).catch(() => {});
  }
  return memory;
}

// The zips the worker fetches whole (the standard library and the compiled wheels, their
// members stored) lie on the site three ways (calcruntime/build write_zip): NAME.zip,
// NAME.zip.gz and NAME.zip.br. A host that sends the precompressed NAME.br for NAME
// (`Content-Encoding: br`: nginx brotli_static, Caddy precompressed; the phone profile of
// issue 12) says so for the small zip-encoding.zip, asked first: then every zip is asked for by
// its own name, and the browser unpacks the brotli (the standard library 496 + 77 kB instead of
// 639 + 92 kB). On any other host NAME.zip.gz, unpacked here by the browser's own gunzip. The page
// notes the answer (localStorage, calc.mjs) and hands it to the next worker (zbr=1|0 in its
// name), which then asks for the standard library at once, without waiting for the probe.
const noted = new URLSearchParams(self.name || "").get("zbr");
const brZips =
  noted === "1" || noted === "0"
    ? Promise.resolve(noted === "1")
    : fetch(base + "zip-encoding.zip")
        .then(async (res) => {
          await res.arrayBuffer(); // read to the end: one HTTP cache entry, which boot.js shares
          const br = res.ok && res.headers.get("content-encoding") === "br";
          if (res.ok) self.postMessage({ zipBrotli: br });
          return br;
        })
        .catch(() => false);
const zipURL = async (name) => base + ((await brZips) ? name : name + ".gz");

// A zip fetched as zipURL gives it: a gzip file (NAME.zip.gz) is unpacked here; a host that
// sends it with `Content-Encoding: gzip` (Apache's `AddEncoding x-gzip .gz`) has the browser
// unpack it already, as it does a NAME.zip sent brotli-compressed: then it starts "PK".
async function gunzipped(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url.slice(base.length)}: HTTP ${res.status}`);
  const raw = new Uint8Array(await res.arrayBuffer());
  if (raw[0] === 0x50 && raw[1] === 0x4b) return raw;
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) throw new Error(`${url.slice(base.length)}: neither gzip nor zip`);
  const unpacked = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(unpacked).arrayBuffer());
}

// The runtime's standard library (python_stdlib.zip: only the modules the calculators use, as
// bytecode), fetched at once for either start; loadPyodide reads it from a blob: address.
const stdlib = zipURL("python_stdlib.zip").then(gunzipped);
stdlib.catch(() => {}); // reported by the start that awaits it
async function stdLibURL() {
  return URL.createObjectURL(new Blob([await stdlib], { type: "application/zip" }));
}
// Its second zip (python_stdlib_rest.zip: the modules the calculators use that Python's start
// does not, 77 kB with brotli), mounted after loadPyodide (unzip.mjs mountStdlibRest): the plain
// start asks for it once the wasm is in, with the wheels (on a phone network it would otherwise
// take the wasm's bandwidth). A snapshot start needs it not: the snapshot holds every module
// of it imported (calcruntime/node/pyodide_snapshot.mjs).
let stdlibRest = null;
function fetchStdlibRest() {
  stdlibRest ||= zipURL("python_stdlib_rest.zip").then(gunzipped);
  stdlibRest.catch(() => {}); // reported by the start that awaits it
  return stdlibRest;
}

const snapshotURL = base + "advisor.snapshot.gz";
// From the page (boot.js, calc.mjs), in the worker's name: coarse=1 on a phone or tablet (a
// coarse pointer), snap=1 when this browser has fetched the snapshot before (localStorage),
// start=plain|snapshot to force.
const hint = new URLSearchParams(self.name || "");

function chooseStart() {
  const forced = hint.get("start");
  if (forced === "snapshot" || forced === "plain") return forced;
  if (hint.get("snap") === "1") return "snapshot";
  const c = self.navigator.connection;
  if (c && c.saveData) return "plain";
  return hint.get("coarse") === "1" ? "plain" : "snapshot";
}

// The plain start installs the packages of advisor-lock.json itself: for each, the compiled
// copy of its wheel that the lock entry names (tool["gpu-advisor"]: the same files with every
// NAME.py as bytecode, NAME.pyc, compiled at build time by calcruntime/build
// compiled_wheels: the browser then compiles no Python source), fetched, its sha256 checked
// against the lock, and unpacked into site-packages. Unlike loadPyodide's `packages` option
// (the wheels) this lets it choose when:
// - the wheels the calculators import are fetched the moment the runtime's wasm has arrived
//   and been compiled (`whenWasmCompiled`), not while it downloads (on a phone network they
//   took its bandwidth: the wasm is the long pole and Python cannot start without it); they
//   then arrive while Python starts. (The page used to fetch them once its own early fetch of
//   the wasm had ended, boot.js; on the phone profile its throttled main thread learnt of that
//   0-0.4 s late, and Python then waited for the wheels.)
// - REPORT_ONLY (Jinja2 and its MarkupSafe: the report renderer, advisor.report.render; PyYAML:
//   the profile's reader, advisor.core.yamlsafe, since the catalog comes as JSON documents) are
//   fetched only when the page first asks for a report (reports/new), 204 kB less for a
//   calculator. The calculators do not import them (tests/test_webapi.py checks it).
const REPORT_ONLY = ["jinja2", "markupsafe", "pyyaml"];
const lockText = fetch(lockFileURL).then((res) => {
  if (!res.ok) throw new Error(`advisor-lock.json: HTTP ${res.status}`);
  return res.text();
});
lockText.catch(() => {}); // reported by the start that awaits it

function closure(lock, name, out = []) {
  if (out.includes(name)) return out;
  const entry = lock.packages[name];
  if (!entry) throw new Error(`advisor-lock.json: no package ${name}`);
  for (const dep of entry.depends) closure(lock, dep, out);
  out.push(name); // dependencies first
  return out;
}

const compiled = (entry) => {
  const c = entry.tool && entry.tool["gpu-advisor"];
  if (!c || !c.compiled || !c.compiled_sha256)
    throw new Error(`advisor-lock.json: ${entry.name} has no compiled copy`);
  return { file: c.compiled, sha256: c.compiled_sha256 };
};

// the compiled copy (NAME.pyc.zip, fetched as zipURL says), its sha256 checked against the lock
async function fetchCompiled(entry) {
  const { file, sha256 } = compiled(entry);
  const bytes = await gunzipped(await zipURL(file));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== sha256) throw new Error(`${file}: sha256 ${hex} is not the lock's ${sha256}`);
  return bytes;
}

// `fn` runs the moment the runtime's wasm has been compiled and instantiated: when the
// WebAssembly.instantiateStreaming that loadPyodide calls settles, before loadPyodide goes on
// (a reaction registered first runs first). The wasm has then arrived, and for the next 0.5-0.8 s
// this thread starts Python without a break.
function whenWasmCompiled(fn) {
  const native = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = function (source, imports) {
    WebAssembly.instantiateStreaming = native;
    timings.wasm_asked = performance.now();
    const compiling = native.call(WebAssembly, source, imports);
    compiling.then(() => (timings.wasm = performance.now()), () => {});
    compiling.then(fn, () => {});
    return compiling;
  };
}

let reportPackages = null; // the REPORT_ONLY install, once (plain start only)

function fetchCatalogDocs() {
  return fetch(new URL("catalog-docs.json", import.meta.url)).then((res) => {
    if (!res.ok) throw new Error(`catalog-docs.json: HTTP ${res.status}`);
    return res.text();
  });
}

async function plainStart() {
  const lock = JSON.parse(await lockText);
  const names = closure(lock, "advisor");
  const now = names.filter((n) => !REPORT_ONLY.includes(n));
  const later = names.filter((n) => REPORT_ONLY.includes(n));
  // What Python needs only once it has started: the wheels and the catalog's documents (JSON,
  // parsed from catalog/ at build time). Asked for once the wasm is in (before, they would
  // take its bandwidth); they arrive while this thread starts Python.
  let wheels = null;
  let docs = null;
  const fetchAfterWasm = () => {
    fetchStdlibRest();
    wheels = Promise.all(now.map((n) => fetchCompiled(lock.packages[n])));
    docs = fetchCatalogDocs();
    wheels.catch(() => {}); // awaited below
    docs.catch(() => {});
  };
  whenWasmCompiled(fetchAfterWasm);
  const url = await stdLibURL();
  const py = await loadPyodide({ indexURL: base, lockFileContents: lockText, stdLibURL: url });
  URL.revokeObjectURL(url);
  timings.runtime = performance.now();
  if (!wheels) fetchAfterWasm(); // loadPyodide did not go through instantiateStreaming
  mountStdlibRest(py, await stdlibRest);
  installStored(py, await wheels);
  timings.wheels = performance.now();
  // the build's bytecode for the methods dataclasses writes (calcruntime/pyodide/codecache.py)
  py.runPython("import calcruntime.pyodide.codecache as c; c.install_beside(); import advisor.webapi");
  timings.imported = performance.now();
  py.FS.writeFile("/tmp/catalog-docs.json", await docs);
  py.runPython(
    "import json, advisor.webapi as w\n" +
      "with open('/tmp/catalog-docs.json', encoding='utf-8') as f: w.load_catalog_documents(json.load(f))",
  );
  timings.catalog = performance.now();
  let installing = null;
  reportPackages = () =>
    (installing ||= Promise.all(later.map((n) => fetchCompiled(lock.packages[n])))
      .then((w) => installStored(py, w))
      .catch((err) => {
        installing = null; // a later report tries again
        throw err;
      }));
  return py;
}

async function start() {
  const how = chooseStart();
  timings.chosen = how;
  if (how === "snapshot") {
    whenWasmCompiled(() => {}); // its timings
    try {
      const url = await stdLibURL();
      const py = await loadPyodide({
        indexURL: base,
        lockFileContents: lockText,
        stdLibURL: url,
        _loadSnapshot: snapshotMemory(),
      });
      URL.revokeObjectURL(url);
      self.postMessage({ snapshotCached: true });
      return { py, mode: "snapshot" };
    } catch (err) {
      keepSnapshot = null; // a snapshot that did not start is not kept
      console.warn("calculators: snapshot start failed, plain start", err);
    }
  }
  return { py: await plainStart(), mode: "plain" };
}

// After a plain start: the snapshot into the HTTP cache for the next page view, at low
// priority; the page then notes it (localStorage) for the next worker's choice.
function fetchSnapshotLater() {
  const c = self.navigator.connection;
  if (c && c.saveData) return;
  fetch(snapshotURL, { priority: "low" })
    .then((res) => res.ok && res.body && res.body.pipeTo(new WritableStream()))
    .then(() => self.postMessage({ snapshotCached: true }))
    .catch(() => {});
}

const ready = start().then(({ py, mode }) => ({
  call: py.runPython("import advisor.webapi as _w\n_w.call"),
  mode,
}));

// Warm-up. V8 runs Pyodide's wasm first in its baseline tier and compiles the hot functions
// (the interpreter loop above all) with its optimising tier only after they have run for a
// while; until then a calculation takes 2-4x longer (the picker: 20-50 ms instead of 5-10 ms in
// Chromium on a 2-core machine). So once started, the worker runs the calculators the page
// names ({warm: [...]}) a few times with varied inputs, one call per task: a reader's message
// waits for one warm-up call at most, and warm-up stops once the reader has made a few calls of
// their own (those keep it warm). The results are thrown away. 30 calls measured better than 12
// (picker in Chromium on 2 cores, the first 20 input changes after a reload: Python 4.5-5.7 ms
// instead of 6.5-7.0 ms at p50).
const WARM_CALLS = 30;
const STOP_AFTER_READER_CALLS = 5;
// One varied input per calculator (a field it reads; the cluster plan caches its layouts per
// GPU count, so a deadline varies the call without recomputing them).
const WARM_INPUT = {
  default: (i) => ({ batch: 2 + i }),
  serving: (i) => ({ input_tokens: 512 + 32 * i }),
  cluster: (i) => ({ deadline_days: 20 + i }),
};
let warmQueue = [];
let warming = false;
let readerCalls = 0; // since the last warm-up request (each page view sends one)
function warm(kinds) {
  warmQueue = Array.from({ length: WARM_CALLS }, (_, i) => {
    const kind = kinds[i % kinds.length];
    return [kind, (WARM_INPUT[kind] || WARM_INPUT.default)(i)];
  });
  readerCalls = 0;
  if (warming) return; // the running chain takes the new queue
  warming = true;
  ready
    .then(({ call }) => {
      const step = () => {
        const next = warmQueue.shift();
        if (!next || readerCalls >= STOP_AFTER_READER_CALLS) {
          warming = false;
          return;
        }
        call(next[0], JSON.stringify(next[1]));
        setTimeout(step, 0);
      };
      setTimeout(step, 0);
    })
    .catch(() => {}); // a failed start is reported by the ready message
}

self.onmessage = async (event) => {
  const { id, fn, params } = event.data;
  if (event.data.warm) return warm(event.data.warm);
  readerCalls++;
  keepWhenIdle();
  try {
    const { call } = await ready;
    if (fn === "report" && reportPackages) await reportPackages();
    const t0 = performance.now();
    const json = call(fn, JSON.stringify(params));
    self.postMessage({ id, json, ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id, fail: String((err && err.message) || err) });
  }
};
// the inflated snapshot into Cache Storage (snapshotMemory) once the reader has left the
// calculators alone for KEEP_IDLE_MS: copying 16.6 MB out while they type made their results late
const KEEP_IDLE_MS = 2000;
let keepTimer = 0;
function keepWhenIdle() {
  if (!keepSnapshot) return;
  clearTimeout(keepTimer);
  keepTimer = setTimeout(() => {
    const keep = keepSnapshot;
    keepSnapshot = null;
    if (keep) keep();
  }, KEEP_IDLE_MS);
}
ready.then(
  ({ mode }) => {
    timings.ready = performance.now();
    keepWhenIdle();
    if (mode === "plain") fetchSnapshotLater();
    self.postMessage({ id: 0, ready: true, mode, timings });
  },
  (err) => self.postMessage({ id: 0, fail: String(err) }),
);
