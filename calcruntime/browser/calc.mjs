// The calculators' page runtime. One module Web Worker (worker.mjs) behind ONE ready-promise,
// started as soon as this module loads; id-tagged messages carry plain JSON. Imported once per
// full page load by loader.mjs (on every page), which calls `init` for every page view with
// calculators: mkdocs-material's instant navigation replaces the page without re-running
// module scripts, so loader.mjs hooks into its `document$` observable. Each `.calc[data-calc]`
// element (prerendered at build time with its default result) is wired once; the page's
// strings come with its content (`.calc-data`, calcruntime/build), so that an instant
// navigation brings the new page's language along.
import { FORMS, errorText, flagOn, formatOptions, renderResult } from "./render.mjs";

let worker = null;
let ready = null;
let nextId = 1;
const pending = new Map();
let lastPyMs = 0; // time the last call spent in Python (measured in the worker)

// as boot.js makes it: the hints in the worker's name (worker.mjs reads them): the pointer (a
// phone?), the snapshot note and a forced start (?calc-start=plain|snapshot)
function workerHints() {
  const hints = new URLSearchParams();
  hints.set("coarse", matchMedia("(pointer: coarse)").matches ? "1" : "0");
  hints.set("snap", snapshotNoted() ? "1" : "0");
  const zbr = stored("calc.zipbr");
  if (zbr) hints.set("zbr", zbr);
  const forced = new URLSearchParams(location.search).get("calc-start");
  if (forced) hints.set("start", forced);
  return hints.toString();
}

// "this browser has the snapshot": set when a worker has fetched it (or loader.mjs prefetched it)
function snapshotNoted() {
  try {
    return !!localStorage.getItem("calc.snapshot");
  } catch {
    return false;
  }
}
function noteSnapshot() {
  note("calc.snapshot", "1");
}

// localStorage, where the browser allows it (else the next worker decides without the note)
function note(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* storage refused */
  }
}
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function getWorker() {
  if (worker) return ready;
  const boot = window.__calcBoot; // started in <head> (boot.js), its early messages kept
  const early = boot && boot.worker;
  worker = early || new Worker(new URL("./worker.mjs", import.meta.url), { type: "module", name: workerHints() });
  ready = new Promise((resolve, reject) => {
    const onMessage = (e) => {
      const m = e.data;
      if (m.snapshotCached) return noteSnapshot();
      if ("zipBrotli" in m) return note("calc.zipbr", m.zipBrotli ? "1" : "0"); // worker.mjs zipURL
      if (m.id === 0) {
        if (m.ready) {
          // the worker's clock on the page's: where its start went (scripts/bench_calculators.py)
          const t = m.timings;
          t.worker_at = t.origin - performance.timeOrigin;
          t.page_got_ready = performance.now();
          window.__calcTimings = t;
          resolve(m.mode);
        } else reject(new Error(m.fail));
        return;
      }
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.fail) p.reject(new Error(m.fail));
      else {
        lastPyMs = m.ms;
        p.resolve(JSON.parse(m.json));
      }
    };
    const onError = (e) => reject(new Error(e.message || "worker failed"));
    if (early) {
      for (const e of boot.messages.splice(0)) onMessage(e);
      if (boot.error) onError(boot.error);
    }
    worker.onmessage = onMessage;
    worker.onerror = onError;
  });
  return ready;
}

export async function calc(fn, params) {
  await getWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, fn, params });
  });
}

function strings(root) {
  const el = root.closest("article")?.querySelector(".calc-data") || document.querySelector(".calc-data");
  const S = el ? JSON.parse(el.dataset.strings) : {};
  S.lang = el && el.dataset.lang ? el.dataset.lang : document.documentElement.lang.startsWith("en") ? "en" : "az";
  return S;
}

function lists(root) {
  const el = root.closest("article")?.querySelector(".calc-data") || document.querySelector(".calc-data");
  return el ? JSON.parse(el.dataset.lists) : null;
}

// The weights / KV selects follow the chosen card (render.mjs formatOptions, issue 34): their
// options are rebuilt from the card's FP4 paths; a value the card no longer offers falls back to
// the first choice (BF16).
function followCard(root, S, L) {
  const gpu = root.querySelector('[name="gpu"]');
  if (!gpu || !L) return;
  for (const name of ["weights", "kv_dtype"]) {
    const sel = root.querySelector(`select[name="${name}"]`);
    if (!sel || sel.closest(".calc")?.dataset.calc === "picker") continue;
    const opts = formatOptions(name, gpu.value, S, L);
    const keep = opts.some(([o]) => o === sel.value) ? sel.value : opts[0][0];
    sel.replaceChildren(...opts.map(([o, text]) => new Option(text, o, false, o === keep)));
    sel.value = keep;
  }
}

function readState(root, kind) {
  const st = {};
  for (const [name] of FORMS[kind]) {
    const el = root.querySelector(`[name="${name}"]`);
    if (el) st[name] = el.type === "checkbox" ? el.checked : el.value;
  }
  return st;
}

function writeUrl(kind, st) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(st)) {
    if (v === "" || v == null) q.delete(`${kind}.${k}`);
    else q.set(`${kind}.${k}`, typeof v === "boolean" ? (v ? "1" : "0") : v);
  }
  const s = q.toString();
  history.replaceState(history.state, "", location.pathname + (s ? "?" + s : "") + location.hash);
}

function readUrl(root, kind, S, L) {
  const q = new URLSearchParams(location.search);
  let any = false;
  // the card first: the formats offered follow it
  const g = q.get(`${kind}.gpu`);
  const gel = root.querySelector('[name="gpu"]');
  if (g !== null && gel) gel.value = g;
  followCard(root, S, L);
  for (const [name] of FORMS[kind]) {
    const v = q.get(`${kind}.${name}`);
    const el = root.querySelector(`[name="${name}"]`);
    if (v !== null && el) {
      if (el.type === "checkbox") el.checked = flagOn(v);
      else el.value = v;
      any = true;
    }
  }
  return any;
}

function tableToRows(t) {
  return [...t.querySelectorAll("tr")].map((tr) => [...tr.children].map((c) => c.textContent.trim()));
}
function toMarkdown(rows) {
  const line = (r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(rows[0]), line(rows[0].map(() => "---")), ...rows.slice(1).map(line)].join("\n");
}
function toCsv(rows) {
  return rows.map((r) => r.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(",")).join("\n");
}

function wire(root) {
  if (root.dataset.wired) return;
  root.dataset.wired = "1";
  const kind = root.dataset.calc;
  const S = strings(root);
  const status = root.querySelector(".calc-status");
  const out = root.querySelector(".calc-result");
  let seq = 0;
  const update = async () => {
    const mine = ++seq;
    const t0 = performance.now();
    const st = readState(root, kind);
    writeUrl(kind, st);
    const t1 = performance.now();
    root.dataset.busy = "1";
    let r;
    try {
      // VRAM: the breakdown first (fast), then the largest batch / longest context (a search).
      r = await calc(kind, kind === "vram" ? { ...st, limits: "0" } : st);
    } catch (err) {
      status.textContent = String(err.message || err);
      root.dataset.busy = "0";
      return;
    }
    if (mine !== seq) return;
    const t2 = performance.now();
    for (const e of root.querySelectorAll(".calc-err")) e.textContent = "";
    for (const e of root.querySelectorAll(".calc-field")) e.classList.remove("calc-bad");
    if (r.error) {
      const f = (r.error.field || "").startsWith("config") ? "config" : r.error.field;
      const slot = root.querySelector(`.calc-err[data-err="${f}"]`) || status;
      slot.textContent = errorText(r.error, S);
      root.querySelector(`.calc-field[data-field="${f}"]`)?.classList.add("calc-bad");
      root.dataset.state = "error";
    } else {
      out.innerHTML = renderResult(kind, r, S);
      root.dataset.state = "ok";
    }
    root.dataset.ms = (performance.now() - t0).toFixed(2);
    root.dataset.phases = `${(t1 - t0).toFixed(1)}/${lastPyMs.toFixed(1)}/${(t2 - t1 - lastPyMs).toFixed(1)}/${(performance.now() - t2).toFixed(1)}`;
    root.dataset.updates = String(Number(root.dataset.updates || 0) + 1);
    root.dispatchEvent(new CustomEvent("calc:updated", { bubbles: true }));
    if (kind === "vram" && !r.error) {
      const full = await calc(kind, st);
      if (mine !== seq) return;
      if (!full.error) out.innerHTML = renderResult(kind, full, S);
    }
    if (mine === seq) {
      root.dataset.busy = "0";
      root.dispatchEvent(new CustomEvent("calc:settled", { bubbles: true }));
    }
  };
  // the picker's rejected list: a filter over its rows (name, count, reason), kept across updates
  let filterText = "";
  const applyFilter = () => {
    const f = out.querySelector(".calc-filter");
    if (!f) return;
    if (f.value !== filterText) f.value = filterText;
    const words = filterText.toLowerCase().split(/\s+/).filter(Boolean);
    for (const tr of out.querySelectorAll("table.calc-rej tbody tr")) {
      const text = tr.textContent.toLowerCase();
      tr.hidden = !words.every((w) => text.includes(w));
    }
  };
  out.addEventListener("input", (ev) => {
    if (!ev.target.matches(".calc-filter")) return;
    filterText = ev.target.value;
    applyFilter();
  });
  root.addEventListener("calc:updated", applyFilter);
  const L = lists(root);
  const onEdit = (ev) => {
    if (ev.target?.name === "gpu") followCard(root, S, L);
    update();
  };
  root.querySelector("form").addEventListener("input", onEdit);
  root.querySelector("form").addEventListener("change", onEdit);
  for (const b of root.querySelectorAll(".calc-copy")) {
    b.addEventListener("click", async () => {
      const t = out.querySelector("table.calc-main") || out.querySelector("table");
      const text = b.dataset.copy === "link" ? location.href : b.dataset.copy === "md" ? toMarkdown(tableToRows(t)) : toCsv(tableToRows(t));
      root.dataset.copied = text;
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        /* clipboard denied (e.g. insecure context): the text stays in data-copied */
      }
      b.classList.add("calc-done");
      setTimeout(() => b.classList.remove("calc-done"), 800);
    });
  }
  const fromUrl = readUrl(root, kind, S, L);
  getWorker().then(
    (mode) => {
      status.textContent = "";
      root.dataset.ready = "1";
      root.dataset.mode = mode;
      if (fromUrl) update();
      root.dispatchEvent(new CustomEvent("calc:ready", { bubbles: true }));
    },
    (err) => {
      status.textContent = `${S["calc.failed"] || "The calculator could not start"}: ${err.message}`;
    },
  );
}

export function init() {
  const roots = document.querySelectorAll(".calc[data-calc]");
  if (!roots.length) return;
  roots.forEach(wire);
  getWorker(); // the worker warms up the calculators on this page (worker.mjs says why)
  worker.postMessage({ warm: [...new Set([...roots].map((r) => r.dataset.calc))] });
}

getWorker(); // start Pyodide (or take over boot.js's worker) as soon as this module loads
