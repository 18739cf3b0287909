// Runs advisor.webapi.call under Pyodide in Node, loaded the way the site's worker loads it:
//   node scripts/pyodide_node_run.mjs ASSETS_DIR snapshot|lock CATALOG_DOCS_JSON < calls.json
// calls.json: [[name, params_json], ...]; prints the JSON list of result texts.
// "snapshot": loadPyodide({_loadSnapshot}) from ASSETS_DIR/advisor.snapshot.gz;
// "lock": loadPyodide({lockFileURL, packages: ["advisor"]}) (the wheel by name, sha256-checked),
// then the catalog from CATALOG_DOCS_JSON.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";

const [assets, mode, catalogDocs] = process.argv.slice(2);
const dir = path.resolve(assets) + "/";
const { loadPyodide } = await import(dir + "pyodide.mjs");
const opts = { indexURL: dir, lockFileURL: dir + "advisor-lock.json", stdout: () => {} };
let py;
if (mode === "snapshot") {
  py = await loadPyodide({ ...opts, _loadSnapshot: zlib.gunzipSync(fs.readFileSync(dir + "advisor.snapshot.gz")) });
} else {
  py = await loadPyodide({ ...opts, packages: ["advisor"] });
  py.FS.writeFile("/tmp/catalog-docs.json", fs.readFileSync(catalogDocs));
  py.runPython(
    "import json, advisor.webapi as w\n" +
      "with open('/tmp/catalog-docs.json', encoding='utf-8') as f: w.load_catalog_documents(json.load(f))",
  );
}
const call = py.runPython("import advisor.webapi as _w\n_w.call");
const calls = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(calls.map(([n, p]) => call(n, p))));
