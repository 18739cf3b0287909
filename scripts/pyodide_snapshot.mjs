// Build-time Pyodide memory snapshot for the calculators (called by hooks/pyodide_assets.py):
//   node scripts/pyodide_snapshot.mjs ASSETS_DIR CATALOG_DOCS_JSON OUT
// Loads the runtime from ASSETS_DIR (the site's copy of the npm package), installs every
// wheel named in ASSETS_DIR/advisor-lock.json (advisor, PyYAML, MarkupSafe, Jinja2; each sha256 checked) with unpackArchive into
// site-packages (loadPackage leaves JS references behind that a snapshot cannot hold), imports advisor.webapi, loads the catalog, and writes loadPyodide's memory
// snapshot (`_makeSnapshot` + `pyodide.makeMemorySnapshot()`; loaded back with `_loadSnapshot`).
// Deterministic: the random source is seeded and the clock is fixed while the snapshot is made,
// so the same inputs give the same bytes.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

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
  stdout: () => {},
  stderr: (m) => process.stderr.write(m + "\n"),
  _makeSnapshot: true,
});
const lock = JSON.parse(fs.readFileSync(dir + "advisor-lock.json", "utf8"));
const purelib = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
const { createHash } = createRequire(import.meta.url)("node:crypto");
for (const name of Object.keys(lock.packages).sort()) {
  const entry = lock.packages[name];
  const wheel = fs.readFileSync(dir + entry.file_name);
  const sha = createHash("sha256").update(wheel).digest("hex");
  if (sha !== entry.sha256) fail(new Error(`${entry.file_name}: sha256 ${sha} != lock ${entry.sha256}`));
  py.unpackArchive(new Uint8Array(wheel), "wheel", { extractDir: purelib });
}
py.FS.writeFile("/tmp/catalog-docs.json", fs.readFileSync(catalogDocs));
py.runPython(`
import json
import advisor.webapi as _w
import advisor.accuracy as _acc
assert _acc.bands(), "advisor/validation_data/throughput-summary.json missing from the wheel"
with open("/tmp/catalog-docs.json", encoding="utf-8") as _f:
    _w.load_catalog_documents(json.load(_f))
for _n in _w.FUNCTIONS:
    # warm every code path (and fail the build if one breaks); not the cluster planner, whose
    # layout caches would only make the snapshot larger (they fill on the page, per model)
    if _n != "cluster":
        _w.call(_n, "{}")
import gc, importlib, pkgutil, advisor
gc.collect()
# every module now: files unpacked before the snapshot are gone after a snapshot start, so a
# module first imported later (lazily, inside a function) would not be found (not the CLI:
# advisor.__main__ would run it). After the catalog, whose parse garbage is freed by then.
for _m in pkgutil.iter_modules(advisor.__path__, "advisor."):
    if not _m.ispkg and _m.name not in ("advisor.__main__", "advisor.cli"):
        importlib.import_module(_m.name)
import advisor.report_render as _rr
_rr.compile_all()  # the report templates compiled into the snapshot
import yaml, jinja2, markupsafe
assert not yaml.__with_libyaml__ and markupsafe._escape_inner.__module__ == "markupsafe._native"
`);
fs.writeFileSync(out, py.makeMemorySnapshot());
