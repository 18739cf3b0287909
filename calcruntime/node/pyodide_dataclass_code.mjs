// Records the bytecode of the methods that `dataclasses` writes while advisor's modules are
// imported, in the runtime's own interpreter (calcruntime/pyodide/codecache.py record; called by
// calcruntime/build compiled_wheels for the compiled copy of the advisor wheel):
//   node calcruntime/node/pyodide_dataclass_code.mjs ASSETS_DIR OUT_FILE COMPILED_ZIP [COMPILED_ZIP ...]
// ASSETS_DIR holds the pinned Pyodide runtime; the compiled copies (advisor's and its
// dependencies') are unpacked into site-packages, then the modules of the advisor package that
// the site imports (all but __main__, cli and subpackages: the list of
// calcruntime/node/pyodide_stdlib_used.mjs) are imported once, with dataclasses' exec watched; OUT_FILE gets the table, its
// code with the line tables of calcruntime/node/pyodide_bytecode.py (strip), as the compiled modules.
import fs from "node:fs";
import path from "node:path";
import { installStored } from "../browser/unzip.mjs";

const fail = (e) => {
  process.stderr.write("pyodide_dataclass_code: " + String((e && e.message) || e).slice(-4000) + "\n");
  process.exit(1);
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

const [assets, out, ...zips] = process.argv.slice(2);
if (!zips.length) fail(new Error("usage: ASSETS_DIR OUT_FILE COMPILED_ZIP [COMPILED_ZIP ...]"));
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const lockFileURL = dir + (fs.existsSync(dir + "advisor-lock.json") ? "advisor-lock.json" : "pyodide-lock.json");
const py = await loadPyodide({ indexURL: dir, lockFileURL, stdout: () => {} });
// installed as the worker installs them
installStored(py, zips.map((zip) => new Uint8Array(fs.readFileSync(zip))));
py.runPython(fs.readFileSync(new URL("pyodide_bytecode.py", import.meta.url), "utf8"));
// the recorder, calcruntime/pyodide/codecache.py, as the build ships it beside advisor
const site = py.runPython("from pyodide._package_loader import SITE_PACKAGES; str(SITE_PACKAGES)");
for (const rel of ["__init__.py", "pyodide/__init__.py", "pyodide/codecache.py"]) {
  py.FS.mkdirTree(path.dirname(`${site}/calcruntime/${rel}`));
  py.FS.writeFile(`${site}/calcruntime/${rel}`, fs.readFileSync(new URL(`../${rel}`, import.meta.url)));
}
const data = py.runPython(`
import advisor, calcruntime.pyodide.codecache as cc
cc.record(advisor.module_names(), strip)
`);
fs.writeFileSync(out, data.toJs());
data.destroy();
