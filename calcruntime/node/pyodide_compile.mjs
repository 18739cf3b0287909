// Compiles zips of Python sources to zips of sourceless bytecode with the runtime's own
// interpreter (called by calcruntime/build for the site's python_stdlib.zip and for the
// compiled copy of each wheel that the worker's plain start installs):
//   node calcruntime/node/pyodide_compile.mjs ASSETS_DIR IN_ZIP OUT_ZIP [IN_ZIP OUT_ZIP ...]
// ASSETS_DIR holds the pinned Pyodide runtime (the site's copy or node_modules/pyodide); every NAME.py of IN_ZIP
// becomes NAME.pyc (a timestamp pyc, which zipimport and the path finder load without a source
// beside it), the other members are copied; members keep their order and get a fixed date
// (deterministic).
// Why: the worker's plain start imports about 250 modules, and compiling their source in the
// browser was most of its CPU time (loadPyodide 1.8 s -> 0.6 s under Node, measured for
// issue 12; importing advisor.webapi 226 -> 93-119 ms). Compiled with optimize=2 (no docstrings,
// no asserts: the standard library is meant to run so, `python -OO`; advisor reads no
// docstring and validates without assert) and with a line table that says "no location" for
// every instruction (a traceback then names the file and function, line None): the zip stays
// about as small as the source zip. An EMPTY line table is not valid: traceback's
// _get_code_position runs out of positions and raises StopIteration inside sys.excepthook.
// Members are stored, not deflated: the site serves each zip gzip-compressed whole
// (NAME.zip.gz, calcruntime/build gzip_copy), 8-15 % smaller than deflating member by
// member (the modules share names and constants), and zipimport then inflates nothing.
import fs from "node:fs";
import path from "node:path";

const fail = (e) => {
  process.stderr.write("pyodide_compile: " + String((e && e.message) || e).slice(-4000) + "\n");
  process.exit(1);
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

const [assets, ...pairs] = process.argv.slice(2);
if (!pairs.length || pairs.length % 2) fail(new Error("usage: ASSETS_DIR IN_ZIP OUT_ZIP [IN_ZIP OUT_ZIP ...]"));
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
// the lock file only lets loadPyodide start: this installs no package
const lockFileURL = dir + (fs.existsSync(dir + "advisor-lock.json") ? "advisor-lock.json" : "pyodide-lock.json");
const py = await loadPyodide({ indexURL: dir, lockFileURL, stdout: () => {} });
py.runPython(fs.readFileSync(new URL("pyodide_bytecode.py", import.meta.url), "utf8"));
const compileZip = py.globals.get("compile_zip");
for (let i = 0; i < pairs.length; i += 2) {
  py.FS.writeFile("/tmp/in.zip", fs.readFileSync(pairs[i]));
  compileZip("/tmp/in.zip", "/tmp/out.zip");
  fs.writeFileSync(pairs[i + 1], py.FS.readFile("/tmp/out.zip"));
}
