// Build-time Pyodide memory snapshot for the calculators (called by calcruntime/build):
//   node calcruntime/node/pyodide_snapshot.mjs ASSETS_DIR CATALOG_DOCS_JSON OUT
// Loads the runtime from ASSETS_DIR (the site's copy of the npm package), installs the compiled
// copy of every wheel named in ASSETS_DIR/advisor-lock.json (advisor, PyYAML, MarkupSafe,
// Jinja2; NAME.pyc.zip, each sha256 checked against the lock) into site-packages and mounts the
// standard library's second zip (python_stdlib_rest.zip) as the worker's plain start does
// (calcruntime/browser/unzip.mjs; loadPackage leaves JS references behind that a snapshot cannot
// hold), imports advisor.webapi and every module of that second zip (a snapshot start does not
// mount it), loads the catalog, and writes loadPyodide's
// memory snapshot (`_makeSnapshot` + `pyodide.makeMemorySnapshot()`; loaded back with
// `_loadSnapshot`).
// Deterministic: the random source is seeded, the clock is fixed while the snapshot is made and
// the program's name does not name the checkout, so the same inputs give the same bytes wherever
// the checkout lies.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { installStored, mountStdlibRest, storedModules } from "../browser/unzip.mjs";

const fail = (e) => {
  process.stderr.write("pyodide_snapshot: " + String((e && e.message) || e).slice(-4000) + "\n");
  process.exit(1);
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

let seed = 20260101;
function fill(view) {
  const b = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < b.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    b[i] = seed >> 16;
  }
  return view;
}
Object.defineProperty(globalThis.crypto, "getRandomValues", { value: fill, configurable: true });
createRequire(import.meta.url)("node:crypto").randomFillSync = fill;
let clock = 1767225600000;
Date.now = () => (clock += 1);
let mono = 0;
performance.now = () => (mono += 0.001);

const [assets, catalogDocs, out] = process.argv.slice(2);
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const py = await loadPyodide({
  indexURL: dir,
  lockFileURL: dir + "advisor-lock.json",
  env: { PYTHONHASHSEED: "0", HOME: "/home/pyodide" },
  // the program's name a browser gives (Emscripten's default there); under Node it would be
  // this script's path, and the snapshot's bytes would depend on where the checkout lies
  _sysExecutable: "./this.program",
  stdout: () => {},
  stderr: (m) => process.stderr.write(m + "\n"),
  _makeSnapshot: true,
});
const lock = JSON.parse(fs.readFileSync(dir + "advisor-lock.json", "utf8"));
const { createHash } = createRequire(import.meta.url)("node:crypto");
const archives = Object.keys(lock.packages).sort().map((name) => {
  const { compiled, compiled_sha256 } = lock.packages[name].tool["gpu-advisor"];
  const bytes = fs.readFileSync(dir + compiled);
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== compiled_sha256) fail(new Error(`${compiled}: sha256 ${sha} != lock ${compiled_sha256}`));
  return new Uint8Array(bytes);
});
// the standard library's second zip, as the plain start mounts it; every module of it is
// imported below, so a snapshot start needs not the file
const rest = new Uint8Array(fs.readFileSync(dir + "python_stdlib_rest.zip"));
mountStdlibRest(py, rest);
const restModules = storedModules(rest);
installStored(py, archives);
py.FS.writeFile("/tmp/catalog-docs.json", fs.readFileSync(catalogDocs));
py.runPython(`
import json
import advisor.webapi as _w
import advisor.perf.accuracy as _acc
assert _acc.bands(), "advisor/validation_data/throughput-summary.json missing from the wheel"
# read (and kept) now: the wheel's files are gone after a snapshot start, and the warm-up
# below no longer reaches the memory band on every path (the VRAM calculator sizes a server)
assert _acc.memory_band(), "advisor/validation_data/memory-summary.json missing from the wheel"
with open("/tmp/catalog-docs.json", encoding="utf-8") as _f:
    _w.load_catalog_documents(json.load(_f))
for _n in _w.FUNCTIONS:
    # warm every code path (and fail the build if one breaks); not the cluster planner, whose
    # layout caches would only make the snapshot larger (they fill on the page, per model)
    if _n != "cluster":
        _w.call(_n, "{}")
import gc, importlib, advisor
gc.collect()
# every module now: files unpacked before the snapshot are gone after a snapshot start, so a
# module first imported later (lazily, inside a function) would not be found (not the CLI:
# advisor.__main__ would run it). After the catalog, whose parse garbage is freed by then.
for _m in advisor.module_names():
    importlib.import_module(_m)
import advisor.report.render as _rr
_rr.compile_all()  # the report templates compiled into the snapshot
import yaml, jinja2, markupsafe
assert not yaml.__with_libyaml__ and markupsafe._escape_inner.__module__ == "markupsafe._native"
# every module of the standard library's second zip (those only an error path imports too): a
# snapshot start does not mount that zip (calcruntime/browser/worker.mjs)
for _n in ${JSON.stringify(restModules)}:
    importlib.import_module(_n)
`);
fs.writeFileSync(out, py.makeMemorySnapshot());
