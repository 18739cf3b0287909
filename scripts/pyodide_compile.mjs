// Compiles a zip of Python sources to a zip of sourceless bytecode with the runtime's own
// interpreter (called by hooks/pyodide_assets.py for the site's python_stdlib.zip):
//   node scripts/pyodide_compile.mjs ASSETS_DIR IN_ZIP OUT_ZIP
// ASSETS_DIR holds the pinned Pyodide runtime (and advisor-lock.json); every NAME.py of IN_ZIP
// becomes NAME.pyc (a timestamp pyc, which zipimport loads without a source beside it), the
// other members are copied; members keep their order and get a fixed date (deterministic).
// Why: the worker's plain start imports about 250 modules, and compiling their source in the
// browser was most of its CPU time (loadPyodide 1.8 s -> 0.6 s under Node, measured for
// issue 12). Compiled with optimize=2 (no docstrings, no asserts: the standard library is
// meant to run so, `python -OO`) and without line tables (a traceback then names the file and
// function but no line): the zip stays as small as the source zip.
import fs from "node:fs";
import path from "node:path";

const fail = (e) => {
  process.stderr.write("pyodide_compile: " + String((e && e.message) || e).slice(-4000) + "\n");
  process.exit(1);
};
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

const [assets, inZip, outZip] = process.argv.slice(2);
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const py = await loadPyodide({ indexURL: dir, lockFileURL: dir + "advisor-lock.json", stdout: () => {} });
py.FS.writeFile("/tmp/in.zip", fs.readFileSync(inZip));
py.runPython(`
import importlib._bootstrap_external as _be
import zipfile

def _strip(code):
    consts = tuple(_strip(c) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_linetable=b"", co_consts=consts)

with zipfile.ZipFile("/tmp/in.zip") as src, zipfile.ZipFile("/tmp/out.zip", "w") as out:
    for info in src.infolist():
        data, name = src.read(info), info.filename
        if name.endswith(".py"):
            code = compile(data, name, "exec", dont_inherit=True, optimize=2)
            data = bytes(_be._code_to_timestamp_pyc(_strip(code), 0, len(data)))
            name += "c"
        zi = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(zi, data, compresslevel=9)
`);
fs.writeFileSync(outZip, py.FS.readFile("/tmp/out.zip"));
