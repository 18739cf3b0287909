// Which files of the runtime's python_stdlib.zip the calculators use (called by
// calcruntime/build, which ships a zip of only those):
//   node calcruntime/node/pyodide_stdlib_used.mjs ASSETS_DIR CATALOG_DOCS_JSON < calls.json
// ASSETS_DIR holds the runtime with the FULL zip and the compiled copies of the wheels of
// advisor-lock.json (tool["gpu-advisor"].compiled).
// calls.json: [[name, params_json], ...], run through advisor.webapi.call.
// Runs the calculators both ways the site starts them, each in its own Pyodide:
// 1. as calcruntime/node/pyodide_snapshot.mjs builds the snapshot: the compiled copies of the wheels
//    installed (calcruntime/browser/unzip.mjs), every advisor module imported, the report
//    templates compiled, the catalog loaded;
// 2. the worker's plain start: the compiled copies installed so, advisor.webapi imported, then
//    the catalog;
// then every call, and prints {"used": [...], "start": [...]}: the zip's member names whose
// modules are in sys.modules (with their packages' __init__.py), less the frozen ones (the
// interpreter runs its own frozen copy of os, io, site, importlib._bootstrap and the rest of its
// start-up modules: their __file__ still names the zip, but theirs in the zip were never read,
// about 90 kB), after the calls ("used") and right after loadPyodide, before anything is
// installed ("start": what Python's start itself imports; the build ships the other used
// modules in a second zip that the worker fetches while Python starts).
import fs from "node:fs";
import path from "node:path";
import { installStored } from "../browser/unzip.mjs";

const fail = (e) => {
  process.stderr.write("pyodide_stdlib_used: " + String((e && e.message) || e).slice(-4000) + "\n");
  process.exit(1);
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

const [assets, catalogDocs] = process.argv.slice(2);
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const calls = JSON.stringify(JSON.parse(fs.readFileSync(0, "utf8")));
const lock = JSON.parse(fs.readFileSync(dir + "advisor-lock.json", "utf8"));
const opts = () => ({ indexURL: dir, lockFileURL: dir + "advisor-lock.json", stdout: () => {}, stderr: () => {} });

const CALLS = `
import json
with open("/tmp/catalog-docs.json", encoding="utf-8") as _f:
    _w.load_catalog_documents(json.load(_f))
for _n, _p in json.loads(_calls):
    _w.call(_n, _p)
`;
const LISTED = `
import json, sys
_zip = next(p for p in sys.path if p.endswith(".zip")) + "/"
_used = set()
for _m in list(sys.modules.values()):
    if getattr(getattr(_m, "__spec__", None), "origin", None) == "frozen":
        continue  # os, io, site, importlib._bootstrap, ...: the interpreter's frozen copy runs
    _f = getattr(_m, "__file__", None) or ""
    if _f.startswith(_zip):
        _used.add(_f[len(_zip):])
json.dumps(sorted(_used))
`;

async function run(kind) {
  const py = await loadPyodide(opts());
  const start = JSON.parse(py.runPython(LISTED));
  // both starts install the compiled copies of the wheels so (worker.mjs, pyodide_snapshot.mjs)
  const compiled = (name) => dir + lock.packages[name].tool["gpu-advisor"].compiled;
  installStored(py, Object.keys(lock.packages).sort().map((n) => new Uint8Array(fs.readFileSync(compiled(n)))));
  // as the worker: the dataclass code's installer (calcruntime/pyodide, in advisor's compiled copy)
  py.runPython("import calcruntime.pyodide.codecache as c; c.install_beside()");
  if (kind === "unpacked") {
    py.runPython(`
import importlib, advisor
for _m in advisor.module_names():
    importlib.import_module(_m)
import advisor.report.render as _rr
_rr.compile_all()
`);
  }
  py.FS.writeFile("/tmp/catalog-docs.json", fs.readFileSync(catalogDocs));
  py.globals.set("_calls", calls);
  py.runPython("import advisor.webapi as _w");
  py.runPython(CALLS);
  return { start, used: JSON.parse(py.runPython(LISTED)) };
}

const runs = [await run("unpacked"), await run("plain")];
const union = (key) => [...new Set(runs.flatMap((r) => r[key]))].sort();
process.stdout.write(JSON.stringify({ used: union("used"), start: union("start") }));
