// The in-browser report form (docs/{az,en}/reports/new.md, templates/report/form.html.j2).
// Builds the same report as `python -m advisor report` through the calculators' Pyodide module
// worker (assets/calc/); nothing leaves the machine. Imported by assets/calc/loader.mjs once a
// page view shows the form; from then on re-initialised on every page view through
// mkdocs-material's document$.
//
// The fields ARE the profile: "Build" composes it from them (a client, one or more workloads, the
// constraints) and sends it as JSON text (JSON is YAML, advisor.yamlsafe reads it). The YAML box
// shows the profile the fields make and builds from the text when the reader edits it by hand.
// Errors come back as advisor.profile's list (field path, key, parameters) and are shown in the
// page's language (the site's err.* texts, render.mjs errorText with the page's number format)
// next to the field, named by the field's own label.
import { errorText } from "../calc/render.mjs";

let calcModule = null;
const loadCalc = () => (calcModule ??= import(new URL("../calc/calc.mjs", import.meta.url).href));
let readyPromise = null;
function startWorker() {
  if (!readyPromise) {
    readyPromise = loadCalc().then((m) => m.calc("report", { profile: "", publisher: { name: "-" } }));
  }
  return readyPromise;
}
const call = async (payload) => (await loadCalc()).calc("report", payload);

// A count as people type it: "2,000,000" / "2 000 000" / "2.000.000" (advisor.counts' groups).
const GROUPED = /^[0-9]{1,3}([,. \u00a0\u202f])[0-9]{3}(?:\1[0-9]{3})*$/;
// A token count also with the CLI's suffixes ("50M", "1,5B": advisor.counts).
const SUFFIX = { K: 1e3, M: 1e6, B: 1e9, T: 1e12 };
function numberValue(text, kind, key) {
  const s = text.trim();
  if (kind === "int" && GROUPED.test(s)) return Number(s.replace(/[^0-9]/g, ""));
  const m = key === "dataset_tokens" && /^([0-9]+(?:[.,][0-9]+)?)\s*([KMBT])$/i.exec(s);
  if (m) return Math.round(Number(m[1].replace(",", ".")) * SUFFIX[m[2].toUpperCase()]);
  const t = s.replace(",", ".");
  // a plain decimal only; anything else goes as text, so advisor names the field
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return Number(t);
  return s;
}

function visible(label) {
  return !label.hidden;
}

// The profile the fields make (advisor.profile's schema): empty fields left out, so that the
// profile's own defaults apply; a workload's fields only where its task uses them.
export function composeProfile(root) {
  const read = (scope, into) => {
    for (const el of scope.querySelectorAll("[data-path]")) {
      const label = el.closest(".ar-field");
      if (label && !visible(label)) continue;
      const key = el.dataset.path.replace(/^.*\./, "");
      const v = el.value.trim();
      if (v === "") continue;
      const kind = el.dataset.kind;
      into[key] = kind === "int" || kind === "num" ? numberValue(v, kind, key) : v;
    }
    return into;
  };
  const profile = read(root.querySelector(".ar-top"), {});
  profile.workloads = [...root.querySelectorAll(".ar-workload")].map((w) => read(w, {}));
  profile.constraints = read(root.querySelector(".ar-constraints"), {});
  return profile;
}

function toYaml(profile) {
  // JSON scalars are YAML scalars: strings quoted as JSON, numbers as they are.
  const q = (v) => (typeof v === "number" ? String(v) : JSON.stringify(String(v)));
  const lines = [];
  for (const [k, v] of Object.entries(profile)) {
    if (k === "workloads") {
      lines.push("workloads:");
      for (const w of v) {
        Object.entries(w).forEach(([wk, wv], i) => lines.push(`${i ? "    " : "  - "}${wk}: ${q(wv)}`));
      }
    } else if (k === "constraints") {
      lines.push("constraints:");
      for (const [ck, cv] of Object.entries(v)) lines.push(`  ${ck}: ${q(cv)}`);
    } else lines.push(`${k}: ${q(v)}`);
  }
  return lines.join("\n") + "\n";
}

function showForTask(w) {
  const task = w.querySelector('[name="task"]').value;
  for (const label of w.querySelectorAll(".ar-field[data-tasks]")) {
    label.hidden = !label.dataset.tasks.split(" ").includes(task);
  }
}

function renumber(root) {
  const all = [...root.querySelectorAll(".ar-workload")];
  all.forEach((w, i) => {
    w.querySelector(".ar-wl-title").textContent = w.dataset.title.replace("{n}", String(i + 1));
    for (const el of w.querySelectorAll("[data-path]")) {
      el.dataset.path = el.dataset.path.replace(/^workloads\[\d+\]/, `workloads[${i}]`);
    }
    w.querySelector(".ar-remove").hidden = all.length < 2;
  });
}

function wireWorkload(root, w) {
  w.querySelector('[name="task"]').addEventListener("change", () => showForTask(w));
  w.querySelector(".ar-remove").addEventListener("click", () => {
    w.remove();
    renumber(root);
  });
  showForTask(w);
}

function addWorkload(root, values) {
  const box = root.querySelector("#ar-workloads");
  const first = box.querySelector(".ar-workload");
  const w = first.cloneNode(true);
  for (const el of w.querySelectorAll("input")) el.value = el.dataset.default ?? "";
  for (const el of w.querySelectorAll("select")) el.selectedIndex = [...el.options].findIndex((o) => o.defaultSelected);
  for (const el of w.querySelectorAll(".ar-err")) el.textContent = "";
  for (const el of w.querySelectorAll(".ar-bad")) el.classList.remove("ar-bad");
  box.append(w);
  if (values) fill(w, values);
  wireWorkload(root, w);
  renumber(root);
  return w;
}

// Fill a scope's fields from a profile part (an example); fields it does not give are emptied.
function fill(scope, values) {
  for (const el of scope.querySelectorAll("[data-path]")) {
    const key = el.dataset.path.replace(/^.*\./, "");
    const v = values[key];
    if (el.tagName === "SELECT") {
      if (v === undefined) el.selectedIndex = [...el.options].findIndex((o) => o.defaultSelected);
      else {
        if (![...el.options].some((o) => o.value === String(v))) el.append(new Option(String(v), String(v)));
        el.value = String(v);
      }
    } else el.value = v === undefined ? "" : String(v);
  }
}

function loadExample(root, profile) {
  fill(root.querySelector(".ar-top"), profile);
  const box = root.querySelector("#ar-workloads");
  const all = [...box.querySelectorAll(".ar-workload")];
  all.slice(1).forEach((w) => w.remove());
  const wls = profile.workloads || [];
  fill(all[0], wls[0] || {});
  showForTask(all[0]);
  wls.slice(1).forEach((w) => addWorkload(root, w));
  renumber(root);
  fill(root.querySelector(".ar-constraints"), profile.constraints || {});
}

// Ctrl+P on the form's page prints only the report, when there is one: the print CSS of
// form.html.j2 hides the rest while .ar-printing is set. Listeners registered once (init runs on
// every page view); `printing` follows the page view's form.
const printing = { root: null, hasReport: () => false };
window.addEventListener("beforeprint", () => {
  const root = printing.root;
  if (!root || !document.body.contains(root) || !printing.hasReport()) return;
  root.classList.add("ar-printing");
  root.closest(".md-content__inner")?.classList.add("ar-printing");
});
window.addEventListener("afterprint", () => {
  for (const el of document.querySelectorAll(".ar-printing")) el.classList.remove("ar-printing");
});

function init() {
  const root = document.getElementById("ar-form");
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  const lang = root.dataset.lang;
  const $ = (id) => document.getElementById(id);
  const status = $("ar-status");
  const yaml = $("ar-yaml");
  const out = $("ar-output");
  const errs = $("ar-errors");
  const data = $("ar-data").dataset; // templates/report/form.html.j2: JSON in attributes
  const examples = JSON.parse(data.examples);
  const publisher = JSON.parse(data.publisher);
  const S = { ...JSON.parse(data.errors), lang };
  const [build, download, print, buildYaml] = ["ar-build", "ar-download", "ar-print", "ar-build-yaml"].map($);
  let last = null;
  let yamlEdited = false;

  wireWorkload(root, root.querySelector(".ar-workload"));
  renumber(root);
  const syncYaml = () => {
    if (!yamlEdited) yaml.value = toYaml(composeProfile(root));
  };
  syncYaml();
  root.addEventListener("input", (ev) => {
    if (ev.target === yaml) yamlEdited = true;
    else syncYaml();
  });
  root.addEventListener("change", (ev) => {
    if (ev.target !== yaml) syncYaml();
  });
  $("ar-add").addEventListener("click", () => {
    addWorkload(root);
    syncYaml();
  });
  $("ar-example").addEventListener("change", (ev) => {
    if (!ev.target.value) return;
    loadExample(root, examples[ev.target.value]);
    yamlEdited = false;
    syncYaml();
  });

  const clearErrors = () => {
    errs.replaceChildren();
    for (const el of root.querySelectorAll(".ar-err")) el.textContent = "";
    for (const el of root.querySelectorAll(".ar-bad")) el.classList.remove("ar-bad");
  };
  // An error's field path (workloads[1].seq, constraints.budget, date) -> the field on the form,
  // named by its label (and its workload's title).
  const fieldOf = (path) => (path ? root.querySelector(`[data-path="${CSS.escape(path)}"]`) : null);
  const labelOf = (el) => {
    const label = el.closest(".ar-field").querySelector("span").textContent;
    const w = el.closest(".ar-workload");
    return w ? `${w.querySelector(".ar-wl-title").textContent} · ${label}` : label;
  };
  const show = (result) => {
    clearErrors();
    if (result.error) {
      const list = (result.error.params && result.error.params.errors) || [result.error];
      status.textContent = status.dataset.errors;
      for (const e of list) {
        const text = errorText(e, S) || e.message;
        const el = fieldOf(e.field);
        const li = document.createElement("li");
        if (el) {
          const label = el.closest(".ar-field");
          label.classList.add("ar-bad");
          label.querySelector(".ar-err").textContent = text;
          li.textContent = `${labelOf(el)}: ${text}`;
        } else li.textContent = e.field && e.field !== "profile" ? `${e.field}: ${text}` : text;
        errs.append(li);
      }
      // the last report no longer answers these fields: greyed out, and not offered to save
      out.classList.toggle("ar-stale", !!out.firstChild);
      last = null;
      download.disabled = print.disabled = true;
      return;
    }
    last = result;
    out.classList.remove("ar-stale");
    // advisor.report escapes every profile value; the fragment is trusted HTML from it
    out.innerHTML = result.fragment;
    status.textContent = status.dataset.ready;
    download.disabled = print.disabled = false;
  };
  const run = async (profileText) => {
    status.textContent = status.dataset.busy;
    try {
      show(await call({ profile: profileText, lang: null, publisher }));
    } catch (err) {
      status.textContent = String(err.message || err);
    }
  };
  build.addEventListener("click", () => {
    yamlEdited = false;
    syncYaml();
    run(JSON.stringify(composeProfile(root)));
  });
  buildYaml.addEventListener("click", () => run(yaml.value));
  download.addEventListener("click", () => {
    if (!last) return;
    const url = URL.createObjectURL(new Blob([last.html], { type: "text/html" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = last.filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
  print.addEventListener("click", () => {
    if (!last) return;
    const frame = document.createElement("iframe");
    frame.style.cssText = "position:fixed;width:0;height:0;border:0";
    frame.srcdoc = last.html;
    frame.onload = () => {
      frame.contentWindow.print();
      setTimeout(() => frame.remove(), 1000);
    };
    document.body.append(frame);
  });
  // Ctrl+P on the page itself: only the report (printing, below)
  printing.root = root;
  printing.hasReport = () => !!last;
  startWorker().then(
    () => {
      status.textContent = status.dataset.ready;
      build.disabled = buildYaml.disabled = false;
      root.dataset.engine = "ready";
    },
    (err) => {
      status.textContent = String(err.message || err);
    },
  );
}

if (window.document$ && typeof window.document$.subscribe === "function") {
  window.document$.subscribe(init);
} else if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", init);
} else {
  init();
}
