// The in-browser report form (docs/{az,en}/reports/new.md). Builds the same report as
// `python -m advisor report` through the calculators' Pyodide module worker (assets/calc/);
// nothing leaves the machine. Imported by assets/calc/loader.mjs once a page view shows the form;
// from then on re-initialised on every page view through mkdocs-material's document$.
// The calculators' module worker (advisor.webapi.call on Pyodide): "report" is
// advisor.webapi.report -> advisor.report.web_report. One worker for the whole site; its module
// is imported only on the form's page, so other pages start nothing.
let calcModule = null;
const loadCalc = () => (calcModule ??= import(new URL("../calc/calc.mjs", import.meta.url).href));
let readyPromise = null;
function startWorker() {
  if (!readyPromise) {
    readyPromise = loadCalc().then((m) =>
      m.calc("report", { profile: "", publisher: { name: "-" } }),
    );
  }
  return readyPromise;
}
const call = async (payload) => (await loadCalc()).calc("report", payload);

// YAML writing: strings as JSON (a valid YAML double-quoted scalar), numbers as typed.
const q = (s) => JSON.stringify(String(s));
function composeYaml(form) {
  const v = (n) => {
    const el = form.querySelector(`[name="${n}"]`);
    return el ? el.value.trim() : "";
  };
  const lines = [];
  lines.push(`organisation: ${q(v("organisation") || "—")}`);
  if (v("prepared_for")) lines.push(`prepared_for: ${q(v("prepared_for"))}`);
  lines.push("workloads:");
  lines.push(`  - name: ${q(v("workload") || v("model"))}`);
  lines.push(`    model: ${v("model")}`);
  const task = v("task");
  lines.push(`    task: ${task}`);
  const num = (n, indent) => {
    const x = v(n);
    if (x !== "") lines.push(`${indent}${n}: ${x}`);
  };
  if (task === "fine-tuning") lines.push(`    method: ${v("method")}`);
  num("seq", "    ");
  if (task === "serving") {
    ["users", "concurrent_users", "target_tokens_per_s", "hours_per_day"].forEach((n) => num(n, "    "));
  } else {
    ["dataset_tokens", "epochs", "batch", "runs_per_year"].forEach((n) => num(n, "    "));
  }
  lines.push("constraints:");
  ["budget", "horizon_months", "power_kw", "rack_units"].forEach((n) => num(n, "  "));
  lines.push(`  acquire: ${v("acquire")}`);
  lines.push(`  currency: ${v("currency")}`);
  lines.push(`  language: ${v("language")}`);
  return lines.join("\n") + "\n";
}

function init() {
  const root = document.getElementById("ar-form");
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  const lang = root.dataset.lang;
  const $ = (id) => document.getElementById(id);
  const status = $("ar-status");
  const yaml = $("ar-yaml");
  const data = $("ar-data").dataset; // templates/report/form.html.j2: JSON in attributes
  const examples = JSON.parse(data.examples);
  const publisher = JSON.parse(data.publisher);
  const errorTexts = JSON.parse(data.errors);
  const buttons = ["ar-build", "ar-download", "ar-print"].map($);
  const lang_el = root.querySelector('[name="language"]');
  if (lang_el) lang_el.value = lang;
  let last = null;

  $("ar-example").addEventListener("change", (ev) => {
    if (ev.target.value) yaml.value = examples[ev.target.value];
  });
  $("ar-compose").addEventListener("click", () => {
    yaml.value = composeYaml(root);
  });
  const show = (result) => {
    const errs = $("ar-errors");
    errs.replaceChildren();
    if (result.error) {
      const list = (result.error.params && result.error.params.errors) || [result.error];
      status.textContent = status.dataset.errors;
      for (const e of list) {
        const li = document.createElement("li");
        // The site's words for the error's key (data-errors: err.* without parameters),
        // after the field it names; the error's own message for any other key.
        const text = errorTexts[e.key];
        li.textContent = text ? (e.field ? `${e.field}: ${text}` : text) : e.message;
        errs.append(li);
      }
      $("ar-output").replaceChildren();
      last = null;
      buttons[1].disabled = buttons[2].disabled = true;
      return;
    }
    last = result;
    // advisor.report escapes every profile value; the fragment is trusted HTML from it
    $("ar-output").innerHTML = result.fragment;
    status.textContent = status.dataset.ready;
    buttons[1].disabled = buttons[2].disabled = false;
  };
  buttons[0].addEventListener("click", async () => {
    status.textContent = status.dataset.busy;
    try {
      show(await call({ profile: yaml.value, lang: null, publisher }));
    } catch (err) {
      status.textContent = String(err.message || err);
    }
  });
  buttons[1].addEventListener("click", () => {
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
  buttons[2].addEventListener("click", () => {
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
  startWorker().then(
    () => {
      status.textContent = status.dataset.ready;
      buttons[0].disabled = false;
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
