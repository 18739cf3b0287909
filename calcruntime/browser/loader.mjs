// On EVERY page of the site (mkdocs.yml `extra_javascript`, a module). mkdocs-material's instant
// navigation swaps the page's content without running the new page's module scripts, and emits
// each page on its `document$` observable; so this module, loaded once per full page load, looks
// at every page it emits:
// - a page with calculators (`.calc[data-calc]`, prerendered by calcruntime/build):
//   imports calc.mjs once (one worker, one ready-promise for every later page) and wires them;
// - the report form's page (`#ar-form`, docs/*/reports/new.md): imports ../reports/form.js once,
//   which wires the form on this and every later page view (it follows `document$` itself); on
//   every other page that script is not even fetched (one request less ahead of a calculator
//   page's runtime: hooks/inline_css.py gives the figures);
// - any other page: once the browser is idle, fetches the calculators' runtime into the HTTP
//   cache (low priority, one file after the other), so that a reader who opens a calculator
//   after reading a guide page does not wait for 10+ MB on a phone network. Not when the reader
//   asked to save data (Save-Data) or the connection is 2G: then the runtime comes only when a
//   calculator is opened.
const here = import.meta.url;
// What a calculator page's worker fetches (worker.mjs, unzip.mjs, sparse.mjs, pyodide.mjs),
// in the order it needs them.
// Module scripts are preloaded as modules; the rest is fetched and its body read to the end.
const MODULES = ["./calc.mjs", "./render.mjs", "./worker.mjs", "./unzip.mjs", "./sparse.mjs", "../pyodide/pyodide.mjs", "../pyodide/pyodide.asm.mjs"];
// What both starts need first, then the plain start's wheels (named in the lock file) and
// catalog, then the snapshot (worker.mjs starts from it once it is in the HTTP cache).
const FILES = ["../pyodide/pyodide.asm.wasm", "../pyodide/python_stdlib.zip", "../pyodide/python_stdlib_rest.zip"];
const LOCK = "../pyodide/advisor-lock.json";
const LATE = ["./catalog-docs.json", "../pyodide/advisor.snapshot.gz"];

let calc = null;
let form = null;
let prefetched = false;

function slowOrSaving() {
  const c = navigator.connection;
  return !!c && (c.saveData === true || /(^|-)2g$/.test(c.effectiveType || ""));
}

async function prefetch() {
  for (const m of MODULES) {
    const link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = new URL(m, here).href;
    document.head.appendChild(link);
  }
  const get = async (f) => {
    const res = await fetch(new URL(f, here), { priority: "low" });
    if (res.body) await res.body.pipeTo(new WritableStream());
  };
  try {
    const lock = await (await fetch(new URL(LOCK, here), { priority: "low" })).json();
    // the compiled copies of the wheels, which a plain start installs (worker.mjs)
    const wheels = Object.values(lock.packages).map((p) => "../pyodide/" + p.tool["gpu-advisor"].compiled);
    // the zips as the worker asks for them (worker.mjs zipURL): by their own names where the
    // host sends zip-encoding.zip brotli-compressed, else their .gz
    const probe = await fetch(new URL("../pyodide/zip-encoding.zip", here), { priority: "low" });
    await probe.arrayBuffer();
    const gz = !(probe.ok && probe.headers.get("content-encoding") === "br");
    const zip = (f) => (gz && f.endsWith(".zip") ? f + ".gz" : f);
    for (const f of [...FILES, ...wheels.sort(), ...LATE]) await get(zip(f));
  } catch {
    return; // offline or blocked: the calculator page fetches what it needs itself
  }
  try {
    localStorage.setItem("calc.snapshot", "1"); // worker.mjs starts from it next time
  } catch {
    /* storage refused */
  }
  window.__calcPrefetched = true;
}

function prefetchWhenIdle() {
  if (prefetched || slowOrSaving()) return;
  prefetched = true;
  const idle = window.requestIdleCallback || ((fn) => setTimeout(fn, 1500));
  idle(() => prefetch(), { timeout: 8000 });
}

function onPage() {
  if (document.getElementById("ar-form")) {
    if (!form) {
      form = import("../reports/form.js");
      form.catch((err) => console.error("report form:", err));
    }
  } else if (document.querySelector(".calc[data-calc]")) {
    calc = calc || import("./calc.mjs");
    calc.then(
      (m) => m.init(),
      (err) => console.error("calculators:", err),
    );
  } else prefetchWhenIdle();
}

if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(onPage);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage);
else onPage();
