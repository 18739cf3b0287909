// Build-time prerender of the calculators (called by hooks/pyodide_assets.py): reads
// {items: [{kind, lang, state, result}], strings: {lang: {...}}, catalog: {models, gpus}} on
// stdin (results computed by advisor.webapi in CPython) and writes a JSON list of HTML strings,
// made by docs/assets/calc/render.mjs, the renderer the browser uses.
import fs from "node:fs";
import { renderCalc } from "../docs/assets/calc/render.mjs";

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const out = input.items.map((it) =>
  renderCalc(it.kind, it.state, it.result, { ...input.strings[it.lang], lang: it.lang }, input.catalog),
);
process.stdout.write(JSON.stringify(out));
