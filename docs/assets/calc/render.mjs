// The calculators' HTML: one renderer for the browser (calc.mjs) and for the build-time
// prerender (scripts/calc_prerender.mjs under Node). Pure functions of (kind, state, result,
// strings S, lists L: catalog models and gpus, and `options`, the select fields' choices as
// [value, label key] from advisor.vocab.form_choices()); no DOM access, every value escaped.
const GIB = 2 ** 30;
const esc = (v) =>
  String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// Fields per calculator: [name, kind] with kind "model" | "gpu" | "select" | "number" | "text" | "config".
export const FORMS = {
  vram: [["model", "model"], ["config", "config"], ["task", "select"], ["precision", "select"], ["weights", "select"], ["kv_dtype", "select"], ["batch", "number"], ["seq", "number"], ["optimizer", "select"], ["checkpointing", "select"], ["lora_rank", "number"], ["gpus", "number"], ["sharding", "select"], ["gpu", "gpu"]],
  roofline: [["model", "model"], ["phase", "select"], ["gpu", "gpu"], ["batch", "number"], ["seq", "number"], ["weights", "select"]],
  budget: [["gpu", "gpu"], ["gpus", "number"], ["price_usd", "text"], ["cloud_usd_per_gpu_hour", "text"], ["utilisation", "number"], ["horizon_months", "number"], ["electricity_usd_per_kwh", "number"], ["currency", "select"], ["model", "model"], ["train_tokens", "number"], ["batch", "number"], ["seq", "number"]],
  picker: [["model", "model"], ["task", "select"], ["batch", "number"], ["seq", "number"], ["acquire", "select"], ["currency", "select"], ["horizon_months", "number"], ["max_gpus", "number"], ["budget", "text"], ["target_tokens_per_s", "text"]],
};

// advisor.numfmt in JavaScript (tests/test_numfmt.py checks both against one golden table):
// half up on the shortest decimal text (String(x), as Python's repr), az "1.234,5", en "1,234.5".
// Own code, not Intl: identical in Node (prerender) and every browser.
const SEPARATORS = { en: [".", ","], az: [",", "."] };
const SYMBOLS = { en: { USD: "$", EUR: "€" }, az: { USD: "$", EUR: "€", AZN: "₼" } };
const NBSP = "\u00a0";
const MISSING = "—";

function roundHalfUp(abs, digits) {
  const [mant, exp = "0"] = String(abs).split("e");
  const [ip, fp = ""] = mant.split(".");
  let ds = ip + fp;
  let point = ip.length + Number(exp);
  if (point < 0) {
    ds = "0".repeat(-point) + ds;
    point = 0;
  }
  const keep = point + digits;
  if (ds.length < keep + 1) ds += "0".repeat(keep + 1 - ds.length);
  const d = ds.slice(0, keep).split("");
  if (ds.charAt(keep) >= "5") {
    let i = d.length - 1;
    while (i >= 0 && d[i] === "9") d[i--] = "0";
    if (i >= 0) d[i] = String(Number(d[i]) + 1);
    else {
      d.unshift("1");
      point += 1;
    }
  }
  const whole = d.slice(0, point).join("").replace(/^0+(?=\d)/, "") || "0";
  return [whole, d.slice(point).join("")];
}

export function formatNumber(x, lang, digits = 0, trim = false) {
  if (x === null || x === undefined || typeof x !== "number" || !Number.isFinite(x)) return MISSING;
  const [dec, grp] = SEPARATORS[lang];
  let [whole, frac] = roundHalfUp(Math.abs(x), digits);
  const negative = x < 0 && /[1-9]/.test(whole + frac);
  if (trim) frac = frac.replace(/0+$/, "");
  whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, grp);
  return (negative ? "-" : "") + whole + (frac ? dec + frac : "");
}

export function formatMoney(amount, currency, lang, digits = 2) {
  if (typeof amount !== "number" || !Number.isFinite(amount)) return MISSING;
  const text = formatNumber(Math.abs(amount), lang, digits);
  const sign = amount < 0 && text !== formatNumber(0, lang, digits) ? "-" : "";
  const symbol = SYMBOLS[lang][currency];
  if (lang === "en") return symbol ? `${sign}${symbol}${text}` : `${sign}${currency}${NBSP}${text}`;
  return `${sign}${text}${NBSP}${symbol || currency}`;
}

export function formatPercent(fraction, lang, digits = 0) {
  if (typeof fraction !== "number" || !Number.isFinite(fraction)) return MISSING;
  const text = formatNumber(fraction * 100, lang, digits);
  return lang === "az" ? `${text}${NBSP}%` : `${text}%`;
}

export function fmt(x, S, digits = 1) {
  if (x !== null && x !== undefined && typeof x !== "number") x = Number(x);
  if (x === Infinity) return "∞";
  return formatNumber(x, S.lang === "az" ? "az" : "en", digits, true);
}
export const gib = (b, S) => `${fmt(b / GIB, S, 2)} GiB`;
const money = (v, cur, S) => formatMoney(v, cur, S.lang === "az" ? "az" : "en", 0);
const tr = (S, key, fallback) => S[key] ?? fallback ?? key;

// advisor.recommend's plan labels in words: single, replicasN, tpN, tpAxB, ddp, zero3.
export function shardingText(label, S) {
  let m;
  if (label === "single") return tr(S, "calc.sh.single", "single GPU");
  if ((m = /^replicas(\d+)$/.exec(label))) return tr(S, "calc.sh.replicas", "{n} replicas").replace("{n}", m[1]);
  if ((m = /^tp(\d+)x(\d+)$/.exec(label))) return tr(S, "calc.sh.tp_replicas", "TP {t} × {n} replicas").replace("{t}", m[1]).replace("{n}", m[2]);
  if ((m = /^tp(\d+)$/.exec(label))) return tr(S, "calc.sh.tp", "TP {t}").replace("{t}", m[1]);
  if (label === "ddp") return "DDP";
  if (label === "zero3") return "ZeRO-3 (FSDP)";
  return label;
}

export function errorText(err, S) {
  let t = S["err." + err.key];
  if (!t) return err.message;
  return t.replace(/\{(\w+)\}/g, (_, k) => (err.params && err.params[k] !== undefined ? (Array.isArray(err.params[k]) ? err.params[k].join(", ") : err.params[k]) : ""));
}

function field(kind, name, type, state, S, L) {
  const id = `calc-${kind}-${name}`;
  const label = `<label for="${id}">${esc(tr(S, "calc.f." + name, name))}</label>`;
  const v = state[name] ?? "";
  let input;
  if (type === "model" || type === "gpu") {
    const list = type === "model" ? L.models : L.gpus;
    input = `<select id="${id}" name="${name}">${list.map(([i, n]) => `<option value="${esc(i)}"${i === v ? " selected" : ""}>${esc(n)}</option>`).join("")}</select>`;
  } else if (type === "select") {
    input = `<select id="${id}" name="${name}">${L.options[name].map(([o, key]) => `<option value="${esc(o)}"${o === v ? " selected" : ""}>${esc(tr(S, key, o))}</option>`).join("")}</select>`;
  } else if (type === "config") {
    input = `<textarea id="${id}" name="${name}" rows="2" spellcheck="false" placeholder="${esc(tr(S, "calc.config_hint", "config.json"))}">${esc(v)}</textarea>`;
  } else {
    input = `<input id="${id}" name="${name}" type="text" inputmode="decimal" value="${esc(v)}">`;
  }
  return `<div class="calc-field" data-field="${name}">${label}${input}<span class="calc-err" data-err="${name}" role="alert"></span></div>`;
}

export function renderCalc(kind, state, result, S, L) {
  const fields = FORMS[kind].map(([n, t]) => field(kind, n, t, state, S, L)).join("");
  return `<div class="calc" data-calc="${kind}" data-ready="0">
<form class="calc-form" autocomplete="off" onsubmit="return false">${fields}</form>
<div class="calc-status" aria-live="polite">${esc(tr(S, "calc.loading", "Loading…"))}</div>
<div class="calc-result" aria-live="polite">${renderResult(kind, result, S)}</div>
<div class="calc-actions"><button type="button" class="md-button calc-copy" data-copy="md">${esc(tr(S, "calc.copy_md", "Copy as Markdown"))}</button> <button type="button" class="md-button calc-copy" data-copy="csv">${esc(tr(S, "calc.copy_csv", "Copy as CSV"))}</button> <button type="button" class="md-button calc-copy" data-copy="link">${esc(tr(S, "calc.copy_link", "Copy link"))}</button></div>
<p class="calc-private">${esc(tr(S, "calc.private", "Everything is computed in your browser; nothing is sent anywhere."))}</p>
</div>`;
}

function table(head, rows, cls = "") {
  return `<table class="calc-table ${cls}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

const COLORS = ["#3f51b5", "#e91e63", "#009688", "#ff9800", "#9c27b0", "#4caf50", "#795548", "#607d8b", "#f44336", "#00bcd4", "#cddc39", "#9e9e9e"];

function stackedBar(parts, total, S) {
  let x = 0;
  const W = 600;
  const rects = parts.filter(([, b]) => b > 0).map(([name, b], i) => {
    const w = (b / total) * W;
    const r = `<rect x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="28" fill="${COLORS[i % COLORS.length]}"><title>${esc(tr(S, "calc.c." + name, name))}: ${esc(gib(b, S))}</title></rect>`;
    x += w;
    return r;
  });
  const legend = parts.filter(([, b]) => b > 0).map(([name, b], i) => `<span class="calc-key"><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(tr(S, "calc.c." + name, name))} ${esc(gib(b, S))}</span>`).join(" ");
  return `<svg class="calc-svg" viewBox="0 0 ${W} 28" role="img" aria-label="${esc(tr(S, "calc.breakdown", "Breakdown"))}">${rects.join("")}</svg><div class="calc-legend">${legend}</div>`;
}

function renderVram(r, S) {
  const parts = [...Object.entries(r.components), ...Object.entries(r.overhead)];
  const rows = parts.filter(([, b]) => b > 0).map(([n, b]) => [tr(S, "calc.c." + n, n), gib(b, S), `${fmt(b / 1e9, S, 2)} GB`]);
  rows.push([tr(S, "calc.total", "Total to provision"), gib(r.total_bytes, S), `${fmt(r.total_bytes / 1e9, S, 2)} GB`]);
  let out = `<p class="calc-headline"><strong data-out="total">${esc(gib(r.total_bytes, S))}</strong> ${esc(tr(S, "calc.per_gpu", "per GPU"))} · ${esc(r.model.display_name)} (${esc(fmt(r.model.params / 1e9, S, 2))} B) · ${esc(tr(S, "calc.o." + r.task, r.task))}</p>`;
  out += stackedBar(parts, r.total_bytes, S);
  out += table([tr(S, "calc.component", "Component"), "GiB", "GB"], rows, "calc-main");
  if (r.chosen) {
    const c = r.chosen;
    out += `<p class="calc-chosen" data-out="chosen">${esc(c.name)}: ${esc(c.fits ? tr(S, "calc.fits", "fits") : tr(S, "calc.no_fit", "does not fit"))} · ${esc(tr(S, "calc.max_batch", "largest batch"))} <strong data-out="max_batch">${esc(fmt(c.max_batch, S, 0))}</strong> · ${esc(tr(S, "calc.max_seq", "longest context"))} <strong data-out="max_seq">${esc(fmt(c.max_seq, S, 0))}</strong></p>`;
  }
  const fr = r.fits.map((g) => [g.name, gib(g.memory_bytes, S), g.fits ? "✓ " + tr(S, "calc.fits", "fits") : "✗ " + tr(S, "calc.no_fit", "does not fit"), gib(g.headroom_bytes, S)]);
  out += `<details class="calc-fits"><summary>${esc(tr(S, "calc.fits_table", "Fits on each accelerator"))} (${r.fits.filter((g) => g.fits).length}/${r.fits.length})</summary>${table([tr(S, "calc.gpu", "Accelerator"), tr(S, "calc.memory", "Memory"), tr(S, "calc.verdict", "Verdict"), tr(S, "calc.headroom", "Headroom")], fr)}</details>`;
  return out;
}

function renderRoofline(r, S) {
  const W = 600, H = 260, x0 = 50, y0 = 230;
  const lx = (v) => x0 + ((Math.log10(v) + 1) / 5) * (W - x0 - 10); // 0.1 .. 10^4 FLOP/byte
  const peak = r.peak_tflops, bw = r.bandwidth_gb_per_s / 1000; // TB/s
  const ly = (t) => y0 - ((Math.log10(Math.max(t, 1e-3)) + 1) / (Math.log10(peak * 2) + 1)) * (y0 - 10);
  const pts = [];
  for (let e = -1; e <= 4; e += 0.05) { const i = 10 ** e; pts.push(`${lx(i).toFixed(1)},${ly(Math.min(peak, i * bw)).toFixed(1)}`); }
  const ai = r.intensity_flop_per_byte ?? 1e4;
  const px = lx(Math.min(Math.max(ai, 0.1), 1e4)), py = ly(r.attainable_tflops);
  const svg = `<svg class="calc-svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tr(S, "calc.roofline", "Roofline"))}"><line x1="${x0}" y1="${y0}" x2="${W - 10}" y2="${y0}" stroke="currentColor"/><line x1="${x0}" y1="10" x2="${x0}" y2="${y0}" stroke="currentColor"/><polyline fill="none" stroke="#3f51b5" stroke-width="2" points="${pts.join(" ")}"/><line x1="${lx(r.ridge_point).toFixed(1)}" y1="10" x2="${lx(r.ridge_point).toFixed(1)}" y2="${y0}" stroke="#999" stroke-dasharray="4"/><circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="6" fill="#e91e63"/><text x="${x0 + 5}" y="${H - 8}" font-size="12" fill="currentColor">${esc(tr(S, "calc.intensity", "Arithmetic intensity (FLOP/byte)"))}, log</text><text x="${x0 + 5}" y="22" font-size="12" fill="currentColor">TFLOPS, log · ${esc(fmt(peak, S, 0))}</text></svg>`;
  const rows = [
    [tr(S, "calc.intensity", "Arithmetic intensity (FLOP/byte)"), fmt(r.intensity_flop_per_byte, S, 2)],
    [tr(S, "calc.ridge", "Ridge point (FLOP/byte)"), fmt(r.ridge_point, S, 1)],
    [tr(S, "calc.attainable", "Attainable TFLOPS"), fmt(r.attainable_tflops, S, 1)],
    [tr(S, "calc.peak", "Peak TFLOPS"), fmt(r.peak_tflops, S, 1)],
    [tr(S, "calc.bandwidth", "Memory bandwidth (GB/s)"), fmt(r.bandwidth_gb_per_s, S, 0)],
    [tr(S, "calc.step_ms", "Time (ms): compute / memory"), `${fmt(r.compute_time_s * 1e3, S, 3)} / ${fmt(r.memory_time_s * 1e3, S, 3)}`],
  ];
  return `<p class="calc-headline">${esc(r.model.display_name)} · ${esc(r.gpu.name)} · ${esc(tr(S, "calc.bound", "bound"))}: <strong data-out="bound">${esc(tr(S, "calc.b." + r.bound, r.bound))}</strong></p>${svg}${table([tr(S, "calc.quantity", "Quantity"), tr(S, "calc.value", "Value")], rows, "calc-main")}`;
}

function renderBudget(r, S) {
  const t = r.tco, cur = t.currency;
  const W = 600, H = 240, x0 = 60, y0 = 210;
  const maxV = Math.max(...t.cumulative_own, ...t.cumulative_cloud, 1);
  const sx = (m) => x0 + (m / t.horizon_months) * (W - x0 - 10), sy = (v) => y0 - (v / maxV) * (y0 - 10);
  const line = (arr, c) => `<polyline fill="none" stroke="${c}" stroke-width="2" points="${arr.map((v, i) => `${sx(t.months[i]).toFixed(1)},${sy(v).toFixed(1)}`).join(" ")}"/>`;
  const be = t.break_even_month != null ? `<line x1="${sx(t.break_even_month).toFixed(1)}" y1="10" x2="${sx(t.break_even_month).toFixed(1)}" y2="${y0}" stroke="#999" stroke-dasharray="4"/>` : "";
  const svg = `<svg class="calc-svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tr(S, "calc.break_even_chart", "Break-even"))}"><line x1="${x0}" y1="${y0}" x2="${W - 10}" y2="${y0}" stroke="currentColor"/><line x1="${x0}" y1="10" x2="${x0}" y2="${y0}" stroke="currentColor"/>${line(t.cumulative_own, "#3f51b5")}${line(t.cumulative_cloud, "#e91e63")}${be}<text x="${x0 + 5}" y="${H - 8}" font-size="12" fill="currentColor">${esc(tr(S, "calc.months", "months"))} 0–${t.horizon_months}</text><text x="${x0 + 5}" y="22" font-size="12" fill="currentColor">${esc(money(maxV, cur, S))}</text></svg><div class="calc-legend"><span class="calc-key"><i style="background:#3f51b5"></i>${esc(tr(S, "calc.own", "Own"))}</span> <span class="calc-key"><i style="background:#e91e63"></i>${esc(tr(S, "calc.rent", "Rent"))}</span></div>`;
  const rows = [
    [tr(S, "calc.own_total", "Own: total over the horizon"), money(t.own_total, cur, S)],
    [tr(S, "calc.cloud_total", "Rent: total over the horizon"), money(t.cloud_total, cur, S)],
    [tr(S, "calc.break_even_month", "Break-even month"), t.break_even_month ?? MISSING],
    [tr(S, "calc.break_even_util", "Break-even utilisation"), formatPercent(t.break_even_utilisation, S.lang === "az" ? "az" : "en", 0)],
    [tr(S, "calc.cloud_price", "Cloud price per GPU-hour (USD)"), fmt(r.cloud_usd_per_gpu_hour, S, 2)],
  ];
  if (r.training) rows.push([tr(S, "calc.train_cost", "Training run in the cloud"), `${money(r.training.cloud_cost, cur, S)} · ${fmt(r.training.hours, S, 1)} h`]);
  if (r.inference) rows.push([tr(S, "calc.per_million", "Per 1M generated tokens (rented)"), `${fmt(r.inference.per_million_tokens, S, 3)} ${cur}`]);
  const verdict = t.savings > 0 ? tr(S, "calc.own_cheaper", "owning is cheaper") : tr(S, "calc.rent_cheaper", "renting is cheaper");
  return `<p class="calc-headline">${esc(r.gpus)} × ${esc(r.gpu.name)} · <strong data-out="verdict">${esc(verdict)}</strong> (${esc(money(Math.abs(t.savings), cur, S))})</p>${svg}${table([tr(S, "calc.quantity", "Quantity"), tr(S, "calc.value", "Value")], rows, "calc-main")}`;
}

function reasonText(x, S) {
  let t = S["calc.r." + x.key];
  if (!t) return x.message;
  return t.replace(/\{(\w+)\}/g, (_, k) => (x.params && x.params[k] !== undefined ? x.params[k] : ""));
}

function renderPicker(r, S) {
  const rows = r.recommended.map((x) => [x.rank, x.gpu_name, x.count, shardingText(x.sharding, S), x.cost == null ? MISSING : money(x.cost, x.currency, S), x.mode ? tr(S, "calc.o." + x.mode, x.mode) : MISSING, x.tokens_per_s == null ? MISSING : fmt(x.tokens_per_s, S, 0)]);
  const rej = r.rejected.map((x) => [x.gpu_name, x.count, x.reasons.map((y) => reasonText(y, S)).join("; ")]);
  return `<p class="calc-headline">${esc(r.model.display_name)} · ${esc(tr(S, "calc.o." + r.task, r.task))} · <strong data-out="best">${esc(r.recommended[0] ? `${r.recommended[0].count} × ${r.recommended[0].gpu_name}` : tr(S, "calc.none", "none fits"))}</strong></p>${table(["#", tr(S, "calc.gpu", "Accelerator"), tr(S, "calc.count", "Count"), tr(S, "calc.sharding", "Sharding"), tr(S, "calc.cost", "Cost"), tr(S, "calc.mode", "Rent/own"), tr(S, "calc.tokens_s", "tokens/s")], rows, "calc-main")}<details><summary>${esc(tr(S, "calc.rejected", "Rejected"))} (${r.counts.rejected})</summary>${table([tr(S, "calc.gpu", "Accelerator"), tr(S, "calc.count", "Count"), tr(S, "calc.reason", "Reason")], rej)}</details>`;
}

export function renderResult(kind, r, S) {
  if (!r || r.error) return "";
  return { vram: renderVram, roofline: renderRoofline, budget: renderBudget, picker: renderPicker }[kind](r, S);
}
