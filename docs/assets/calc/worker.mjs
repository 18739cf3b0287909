// Module Web Worker of the calculators: advisor (the wheel) on the self-hosted Pyodide.
// Protocol (Pyodide's web-worker guide): the page posts {id, fn, params} (plain JSON); the
// worker answers {id, json} (advisor.webapi.call's JSON text) or {id, fail} (a runtime failure;
// bad input is not a failure: webapi returns {"error": {...}} inside json). {id: 0, ready} once.
// Start: the build-time memory snapshot (advisor imported, catalog loaded), about 0.4 s; if that
// fails, a plain start that installs the wheel by name from advisor-lock.json (sha256-checked).
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

self.onmessage = async (event) => {
  const { id, fn, params } = event.data;
  try {
    const { call } = await ready;
    self.postMessage({ id, json: call(fn, JSON.stringify(params)) });
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
