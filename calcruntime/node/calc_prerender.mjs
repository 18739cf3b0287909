// Build-time prerender of the calculators (called by calcruntime/build): reads
// {items: [{kind, lang, state, result}], strings: {lang: {...}}, catalog: {models, gpus}} on
// stdin (results computed by advisor.webapi in CPython) and writes a JSON list of HTML strings,
// made by calcruntime/browser/render.mjs, the renderer the browser uses.
import fs from "node:fs";
import { renderCalc } from "../browser/render.mjs";

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const out = input.items.map((it) =>
  renderCalc(it.kind, it.state, it.result, { ...input.strings[it.lang], lang: it.lang }, input.catalog),
);
process.stdout.write(JSON.stringify(out));
