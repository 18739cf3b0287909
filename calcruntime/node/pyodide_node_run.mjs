// Runs advisor.webapi.call under Pyodide in Node, loaded the way the site's worker loads it:
//   node calcruntime/node/pyodide_node_run.mjs ASSETS_DIR snapshot|lock|plain CATALOG_DOCS_JSON < calls.json
// calls.json: [[name, params_json], ...]; prints the JSON list of result texts.
// "snapshot": loadPyodide({_loadSnapshot}) from ASSETS_DIR/advisor.snapshot.gz (gunzipped, then
// rebuilt by calcruntime/browser/sparse.mjs), without the standard library's second zip (the
// snapshot holds its modules), as the worker;
// "lock": loadPyodide({lockFileURL, packages: ["advisor"]}) (the wheel by name, sha256-checked;
// Pyodide's own loader, on the npm package's full standard library),
// "plain": as the worker's plain start (worker.mjs): loadPyodide on the standard library as the
// worker gets it (python_stdlib.zip.gz, unpacked), its second zip mounted as the worker mounts
// it (python_stdlib_rest.zip.gz unpacked; calcruntime/browser/unzip.mjs), then the compiled copy of
// every wheel that the lock entries name (tool["gpu-advisor"]: NAME.pyc.zip.gz unpacked, sha256-checked)
// unpacked into site-packages as the worker does it (calcruntime/browser/unzip.mjs);
// then ("lock", "plain") the catalog from CATALOG_DOCS_JSON.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { installStored, mountStdlibRest } from "../browser/unzip.mjs";
import { unsparse } from "../browser/sparse.mjs";

const [assets, mode, catalogDocs] = process.argv.slice(2);
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const opts = { indexURL: dir, lockFileURL: dir + "advisor-lock.json", stdout: () => {} };
let py;
if (mode === "snapshot") {
  const snapshot = unsparse(zlib.gunzipSync(fs.readFileSync(dir + "advisor.snapshot.gz"))); // as the worker
  py = await loadPyodide({ ...opts, _loadSnapshot: snapshot }); // no second zip, as the worker
} else {
  if (mode === "lock") {
    // Pyodide's own package loader, which the site does not use: on the npm package's full
    // standard library (the site's zip holds what the site's starts use, not the loader's
    // tarfile and sysconfig)
    const full = fileURLToPath(new URL("../../node_modules/pyodide/python_stdlib.zip", import.meta.url));
    py = await loadPyodide({ ...opts, stdLibURL: full, packages: ["advisor"] });
  }
  else if (mode === "plain") {
    const stdLibURL = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pyodide-plain-")), "python_stdlib.zip");
    fs.writeFileSync(stdLibURL, zlib.gunzipSync(fs.readFileSync(dir + "python_stdlib.zip.gz")));
    py = await loadPyodide({ ...opts, stdLibURL });
    fs.rmSync(path.dirname(stdLibURL), { recursive: true });
    mountStdlibRest(py, zlib.gunzipSync(fs.readFileSync(dir + "python_stdlib_rest.zip.gz")));
    const lock = JSON.parse(fs.readFileSync(dir + "advisor-lock.json", "utf8"));
    // installed as the worker installs them (calcruntime/browser/unzip.mjs)
    const archives = Object.keys(lock.packages).sort().map((name) => {
      const { compiled, compiled_sha256 } = lock.packages[name].tool["gpu-advisor"];
      const bytes = zlib.gunzipSync(fs.readFileSync(dir + compiled + ".gz"));
      const sha = createHash("sha256").update(bytes).digest("hex");
      if (sha !== compiled_sha256) throw new Error(`${compiled}: sha256 ${sha} != lock ${compiled_sha256}`);
      return new Uint8Array(bytes);
    });
    installStored(py, archives);
    // as the worker: the build's bytecode for the methods dataclasses writes
    py.runPython("import calcruntime.pyodide.codecache as c; c.install_beside()");
  } else throw new Error(`mode ${mode}: snapshot, lock or plain`);
  py.FS.writeFile("/tmp/catalog-docs.json", fs.readFileSync(catalogDocs));
  py.runPython(
    "import json, advisor.webapi as w\n" +
      "with open('/tmp/catalog-docs.json', encoding='utf-8') as f: w.load_catalog_documents(json.load(f))",
  );
}
const call = py.runPython("import advisor.webapi as _w\n_w.call");
const calls = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(calls.map(([n, p]) => call(n, p))));
