// Module Web Worker of the calculators: advisor (the wheel) on the self-hosted Pyodide.
// Protocol (Pyodide's web-worker guide): the page posts {id, fn, params} (plain JSON); the
// worker answers {id, json} (advisor.webapi.call's JSON text) or {id, fail} (a runtime failure;
// bad input is not a failure: webapi returns {"error": {...}} inside json). {id: 0, ready} once.
// Start: the build-time memory snapshot (advisor imported, catalog loaded), about 0.4 s; if that
// fails, a plain start that installs the wheel by name from advisor-lock.json with its
// dependencies (PyYAML, MarkupSafe, Jinja2: pure wheels listed there; each sha256-checked).
import { loadPyodide } from "../pyodide/pyodide.mjs";

const base = new URL("../pyodide/", import.meta.url).href;
const lockFileURL = base + "advisor-lock.json";

export const timings = { worker_start: performance.now() };

async function gunzip(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const stream = res.body.pipeThrough(new DecompressionStream("gzip"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  timings.snapshot_ready = performance.now();
  return bytes;
}

async function start() {
  try {
    const py = await loadPyodide({
      indexURL: base,
      lockFileURL,
      _loadSnapshot: gunzip(base + "advisor.snapshot.gz"),
    });
    return { py, mode: "snapshot" };
  } catch (err) {
    console.warn("calculators: snapshot start failed, plain start", err);
  }
  const py = await loadPyodide({ indexURL: base, lockFileURL, packages: ["advisor"] });
  const files = await (await fetch(new URL("catalog-files.json", import.meta.url))).text();
  py.FS.writeFile("/tmp/catalog-files.json", files);
  py.runPython(
    "import json, advisor.webapi as w\n" +
      "with open('/tmp/catalog-files.json', encoding='utf-8') as f: w.load_catalog_files(json.load(f))",
  );
  return { py, mode: "plain" };
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
  try {
    const { call } = await ready;
    const t0 = performance.now();
    const json = call(fn, JSON.stringify(params));
    self.postMessage({ id, json, ms: performance.now() - t0 });
  } catch (err) {
    self.postMessage({ id, fail: String((err && err.message) || err) });
  }
};
ready.then(
  ({ mode }) => {
    timings.ready = performance.now();
    self.postMessage({ id: 0, ready: true, mode, timings });
  },
  (err) => self.postMessage({ id: 0, fail: String(err) }),
);
