// The calculators' HTML: one renderer for the browser (calc.mjs) and for the build-time
// prerender (calcruntime/node/calc_prerender.mjs under Node). Pure functions of (kind, state, result,
// strings S, lists L: catalog models and gpus, and `options`, the select fields' choices as
// [value, label key] from advisor.core.vocab.form_choices()); no DOM access, every value escaped.
const GIB = 2 ** 30;
const esc = (v) =>
  String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

// Fields per calculator: [name, kind] with kind "model" | "gpu" | "network" | "select" | "number" |
// "tokens" (a token count: "2T", "2,000,000,000,000" as the CLI's --tokens, read by advisor.core.counts
// in the worker; a keyboard with letters) | "text" | "config" | "flag" (on or off: a checkbox whose
// state is sent as true/false and kept in a link as 1/0, advisor.webapi.common `flag` fields); a select's third element names its choice list when that differs from the
// field's name (advisor.core.vocab.FORM_FIELDS).
export const FORMS = {
  vram: [["model", "model"], ["config", "config"], ["task", "select"], ["precision", "select"], ["weights", "select"], ["kv_dtype", "select"], ["batch", "number"], ["seq", "number"], ["optimizer", "select"], ["checkpointing", "select"], ["lora_rank", "number"], ["gpus", "number"], ["sharding", "select"], ["gpu", "gpu"], ["mode", "select"]],
  roofline: [["model", "model"], ["phase", "select"], ["gpu", "gpu"], ["batch", "number"], ["seq", "number"], ["weights", "select"]],
  budget: [["gpu", "gpu"], ["gpus", "number"], ["price_usd", "text"], ["cloud_usd_per_gpu_hour", "text"], ["utilisation", "number"], ["horizon_months", "number"], ["electricity_usd_per_kwh", "number"], ["currency", "select"], ["model", "model"], ["train_tokens", "tokens"], ["batch", "number"], ["seq", "number"]],
  picker: [["model", "model"], ["task", "select"], ["batch", "number"], ["seq", "number"], ["acquire", "select"], ["currency", "select"], ["horizon_months", "number"], ["max_gpus", "number"], ["budget", "text"], ["target_tokens_per_s", "text"], ["per_user_tokens_per_s", "text"], ["weights", "select", "picker_weights"]],
  serving: [["model", "model"], ["config", "config"], ["gpu", "gpu"], ["tensor_parallel", "number"], ["pipeline_parallel", "number"], ["gpus", "number"], ["input_tokens", "number"], ["output_tokens", "number"], ["weights", "select"], ["kv_dtype", "select"], ["engine", "select"], ["ttft_ms", "text"], ["tpot_ms", "text"], ["request_rate", "text"], ["draft_tokens", "number"], ["acceptance", "number"], ["draft_layers", "number"], ["prefix_hit_rate", "number"], ["pools", "select"], ["ep", "number"], ["imbalance", "number"], ["two_batch_overlap", "flag"], ["cuda_graphs", "flag"], ["kv_on_demand", "flag"], ["utilisation", "number"], ["horizon_months", "number"]],
  cluster: [["model", "model"], ["config", "config"], ["gpu", "gpu"], ["tokens", "tokens"], ["seq", "number"], ["deadline_days", "text"], ["budget_usd", "text"], ["price_usd_per_gpu_hour", "text"], ["network", "network"], ["precision", "select", "cluster_precision"], ["max_gpus", "number"], ["run", "select", "training_run"], ["expert_parallel", "number"]],
};

// advisor.core.numfmt in JavaScript (tests/test_numfmt.py checks both against one golden table):
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

// advisor.advice.recommend's plan labels in words: single, replicasN, tpN, tpAxB, ddp, zero3.
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
  // An unknown name without close matches: no empty "Did you mean: ?" tail.
  if (err.key === "name.unknown" && !(err.params?.suggestions || []).length) t = S["err.name.unknown_none"] || t;
  if (!t) return err.message;
  return t.replace(/\{(\w+)\}/g, (_, k) => {
    const v = err.params ? err.params[k] : undefined;
    if (v === undefined || v === null) return "";
    // A limit stays as written (65536); a measured figure takes the page's decimal comma.
    if (typeof v === "number" && !Number.isInteger(v)) return fmt(v, S, 2);
    return Array.isArray(v) ? v.join(", ") : v;
  });
}

// The FP4 formats (NVFP4, MXFP4) and the local runtimes' formats (llama.cpp GGUF, MLX 4-bit) a
// weights / KV select offers follow the chosen card (issue 34):
// the card's entry in L.gpus carries advisor.data.support.form_paths ({weights: {fmt: "native" |
// "dequantised"}, kv_dtype: {...}}); a native format is offered plainly, a dequantised one says
// so, and one the card has no path for is not offered. Without a card (or outside weights /
// kv_dtype) every choice is listed. Returns [[value, label], ...].
export const FP4_CHOICES = ["nvfp4", "mxfp4"];
// A flag field's state (true/false from the defaults, "1"/"0" from a link): on or off, as
// advisor.webapi.common._flag reads it.
export const flagOn = (v) => !(v === false || v === 0 || v == null || ["", "0", "false", "no"].includes(String(v).toLowerCase()));
export function formatOptions(name, gpuId, S, L) {
  const list = L.options[name].map(([o, key]) => [o, tr(S, key, o)]);
  if (name !== "weights" && name !== "kv_dtype") return list;
  const card = gpuId ? L.gpus.find(([i]) => i === gpuId) : null;
  if (!card || !card[2]) return list;
  const paths = card[2][name] || {};
  // gated: the FP4 block formats and the local runtimes' formats (L.gated from
  // advisor.data.support.GATED_WEIGHTS; FP4_CHOICES where a page's lists predate it)
  const gated = L.gated || FP4_CHOICES;
  return list
    .filter(([o]) => !gated.includes(o) || paths[o])
    .map(([o, text]) => [o, paths[o] === "dequantised" ? fillText(tr(S, "calc.o.fp4_dequantised", "{label}: dequantised (no FP4 tensor cores for it)"), { label: text }) : text]);
}

function field(kind, name, type, state, S, L, choices) {
  const id = `calc-${kind}-${name}`;
  const label = `<label for="${id}">${esc(tr(S, "calc.f." + name, name))}</label>`;
  // A default is a number: shown with the page's decimal comma on az ("0,6"; the parser takes
  // both), never with group separators (the parser refuses them).
  const raw = state[name] ?? "";
  const v = typeof raw === "number" && S.lang === "az" ? String(raw).replace(".", ",") : raw;
  let input;
  if (type === "model" || type === "gpu" || type === "network") {
    const list = { model: L.models, gpu: L.gpus, network: L.networks }[type];
    // A network's name in the page's language (calc.net.<id>); models and accelerators by name.
    const label = (i, n) => (type === "network" ? tr(S, "calc.net." + i, n) : n);
    input = `<select id="${id}" name="${name}">${list.map(([i, n]) => `<option value="${esc(i)}"${i === v ? " selected" : ""}>${esc(label(i, n))}</option>`).join("")}</select>`;
  } else if (type === "select") {
    const opts = choices ? L.options[choices].map(([o, key]) => [o, tr(S, key, o)]) : formatOptions(name, state.gpu, S, L);
    input = `<select id="${id}" name="${name}">${opts.map(([o, text]) => `<option value="${esc(o)}"${o === v ? " selected" : ""}>${esc(text)}</option>`).join("")}</select>`;
  } else if (type === "flag") {
    const on = flagOn(raw);
    input = `<input id="${id}" name="${name}" type="checkbox" value="1"${on ? " checked" : ""}>`;
  } else if (type === "config") {
    input = `<textarea id="${id}" name="${name}" rows="2" spellcheck="false" placeholder="${esc(tr(S, "calc.config_hint", "config.json"))}">${esc(v)}</textarea>`;
  } else if (type === "tokens") {
    input = `<input id="${id}" name="${name}" type="text" inputmode="text" autocapitalize="characters" spellcheck="false" value="${esc(v)}" placeholder="2T">`;
  } else {
    input = `<input id="${id}" name="${name}" type="text" inputmode="decimal" value="${esc(v)}">`;
  }
  return `<div class="calc-field" data-field="${name}">${label}${input}<span class="calc-err" data-err="${name}" role="alert"></span></div>`;
}

export function renderCalc(kind, state, result, S, L) {
  const fields = FORMS[kind].map(([n, t, c]) => field(kind, n, t, state, S, L, c)).join("");
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
  // The headline's word order and the billion's unit are the language's (az: "Hər QPU-ya 17,46 GiB
  // · Llama 3.1 8B (8,03 mlrd parametr)", en: "17.46 GiB per GPU · Llama 3.1 8B (8.03 B)").
  const headParts = {
    total: `<strong data-out="total">${esc(gib(r.total_bytes, S))}</strong>`,
    model: esc(r.model.display_name),
    params: esc(fmt(r.model.params / 1e9, S, 2)),
    task: esc(tr(S, "calc.o." + r.task, r.task)),
  };
  const head = esc(tr(S, "calc.vram_head", "{total} per GPU · {model} ({params} B) · {task}"));
  let out = `<p class="calc-headline">${head.replace(/\{(\w+)\}/g, (m, k) => headParts[k] ?? m)}</p>`;
  if (r.checkpointing) {
    const ck = tr(S, "calc.o." + r.checkpointing, r.checkpointing);
    const why = r.checkpointing_default ? " " + tr(S, r.checkpointing === "full" ? "calc.ck_default_adapter" : "calc.ck_default_full", "") : "";
    out += `<p class="calc-note" data-out="checkpointing">${esc(tr(S, "calc.f.checkpointing", "Activation checkpointing"))}: ${esc(ck)}.${esc(why)}</p>`;
  }
  if (r.mode === "serving" && r.serving) {
    const v = r.serving;
    out += `<p class="calc-note" data-out="serving">${esc(fillText(tr(S, "calc.serving_layout", "{tp} GPUs per replica × {replicas} replicas, {per} requests per replica; the KV cache holds {kv}"), { tp: v.tensor_parallel * (v.pipeline_parallel || 1), replicas: v.replicas, per: fmt(v.per_replica, S, 0), kv: fmt(v.kv_limited_concurrency, S, 0) }))}</p>`;
  } else if (r.mode === "static") {
    out += `<p class="calc-note" data-out="static">${esc(tr(S, "calc.static_label", "Static prefill of the whole batch on each GPU."))}</p>`;
  }
  out += stackedBar(parts, r.total_bytes, S);
  out += table([tr(S, "calc.component", "Component"), "GiB", "GB"], rows, "calc-main");
  if (r.chosen) {
    const c = r.chosen;
    out += `<p class="calc-chosen" data-out="chosen">${esc(c.name)}: ${esc(c.fits ? tr(S, "calc.fits", "fits") : tr(S, "calc.no_fit", "does not fit"))} · ${esc(tr(S, "calc.max_batch", "largest batch"))} <strong data-out="max_batch">${esc(fmt(c.max_batch, S, 0))}</strong> · ${esc(tr(S, "calc.max_seq", "longest context"))} <strong data-out="max_seq">${esc(fmt(c.max_seq, S, 0))}</strong></p>`;
  }
  const fr = r.fits.map((g) => [g.name, gib(g.memory_bytes, S), g.fits ? "✓ " + tr(S, "calc.fits", "fits") : "✗ " + tr(S, "calc.no_fit", "does not fit"), gib(g.headroom_bytes, S)]);
  const mb = r.memory_accuracy;
  if (mb) {
    const text = fillText(tr(S, "calc.mband", "±{median} (median), ±{worst} at worst, against {n} measured PyTorch runs"), { median: formatPercent(mb.median_abs_error, lang2(S), 1), worst: formatPercent(mb.worst_abs_error, lang2(S), 1), n: formatNumber(mb.n, lang2(S)) });
    out += `<p class="calc-band" data-out="mband">${esc(tr(S, "calc.mband_title", "Measured error of the peak memory"))}: ${esc(text)} (<a href="../../methodology/#validation">${esc(tr(S, "calc.band_link", "how it was measured"))}</a>)</p>`;
  }
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
  const svg = `<svg class="calc-svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tr(S, "calc.roofline", "Roofline"))}"><line x1="${x0}" y1="${y0}" x2="${W - 10}" y2="${y0}" stroke="currentColor"/><line x1="${x0}" y1="10" x2="${x0}" y2="${y0}" stroke="currentColor"/><polyline fill="none" stroke="#3f51b5" stroke-width="2" points="${pts.join(" ")}"/><line x1="${lx(r.ridge_point).toFixed(1)}" y1="10" x2="${lx(r.ridge_point).toFixed(1)}" y2="${y0}" stroke="#999" stroke-dasharray="4"/><circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="6" fill="#e91e63"/><text x="${x0 + 5}" y="${H - 8}" font-size="12" fill="currentColor">${esc(tr(S, "calc.intensity", "Arithmetic intensity (FLOP/byte)"))}, ${esc(tr(S, "calc.log_scale", "log"))}</text><text x="${x0 + 5}" y="22" font-size="12" fill="currentColor">TFLOPS, ${esc(tr(S, "calc.log_scale", "log"))} · ${esc(fmt(peak, S, 0))}</text></svg>`;
  const rows = [
    [tr(S, "calc.intensity", "Arithmetic intensity (FLOP/byte)"), fmt(r.intensity_flop_per_byte, S, 2)],
    [tr(S, "calc.ridge", "Ridge point (FLOP/byte)"), fmt(r.ridge_point, S, 1)],
    [tr(S, "calc.attainable", "Attainable TFLOPS"), fmt(r.attainable_tflops, S, 1)],
    [tr(S, "calc.peak", "Peak TFLOPS"), fmt(r.peak_tflops, S, 1)],
    [tr(S, "calc.bandwidth", "Memory bandwidth (GB/s)"), fmt(r.bandwidth_gb_per_s, S, 0)],
    [withPm(tr(S, "calc.step_ms", "Time (ms): compute / memory"), r, firstBand(r), S), `${fmt(r.compute_time_s * 1e3, S, 3)} / ${fmt(r.memory_time_s * 1e3, S, 3)}`],
  ];
  return `<p class="calc-headline">${esc(r.model.display_name)} · ${esc(r.gpu.name)} · ${esc(tr(S, "calc.bound", "bound"))}: <strong data-out="bound">${esc(tr(S, "calc.b." + r.bound, r.bound))}</strong></p>${svg}${table([tr(S, "calc.quantity", "Quantity"), tr(S, "calc.value", "Value")], rows, "calc-main")}${bandLine(r, S)}`;
}

function renderBudget(r, S) {
  const t = r.tco, cur = t.currency;
  // axes with ticks (issue 39: on a phone the chart was lines without a scale): money on the
  // left at quarters of a round maximum, months below every 6 or 12 months
  const W = 600, H = 260, x0 = 110, y0 = 220, yTop = 12, x1 = W - 32;
  const maxV = niceMax(Math.max(...t.cumulative_own, ...t.cumulative_cloud, 1));
  const sx = (m) => x0 + (m / t.horizon_months) * (x1 - x0), sy = (v) => y0 - (v / maxV) * (y0 - yTop);
  const line = (arr, c) => `<polyline fill="none" stroke="${c}" stroke-width="2.5" points="${arr.map((v, i) => `${sx(t.months[i]).toFixed(1)},${sy(v).toFixed(1)}`).join(" ")}"/>`;
  const be = t.break_even_month != null ? `<line x1="${sx(t.break_even_month).toFixed(1)}" y1="${yTop}" x2="${sx(t.break_even_month).toFixed(1)}" y2="${y0}" stroke="#999" stroke-dasharray="4"/>` : "";
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<line x1="${x0}" y1="${sy(f * maxV).toFixed(1)}" x2="${x1}" y2="${sy(f * maxV).toFixed(1)}" stroke="currentColor" stroke-opacity=".12"/><text class="tk" x="${x0 - 5}" y="${(sy(f * maxV) + 4).toFixed(1)}" font-size="13" text-anchor="end" fill="currentColor">${esc(money(f * maxV, cur, S))}</text>`).join("");
  const step = t.horizon_months > 36 ? 12 : 6;
  const xTicks = [];
  for (let m = 0; m <= t.horizon_months; m += step) xTicks.push(`<line x1="${sx(m).toFixed(1)}" y1="${y0}" x2="${sx(m).toFixed(1)}" y2="${y0 + 4}" stroke="currentColor"/><text class="tk" x="${sx(m).toFixed(1)}" y="${y0 + 18}" font-size="13" text-anchor="middle" fill="currentColor">${esc(fmt(m, S, 0))}</text>`);
  const svg = `<svg class="calc-svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tr(S, "calc.break_even_chart", "Break-even"))}">${yTicks}<line x1="${x0}" y1="${y0}" x2="${x1}" y2="${y0}" stroke="currentColor"/><line x1="${x0}" y1="${yTop}" x2="${x0}" y2="${y0}" stroke="currentColor"/>${xTicks.join("")}${line(t.cumulative_own, "#3f51b5")}${line(t.cumulative_cloud, "#e91e63")}${be}<text class="ax" x="${(x0 + x1) / 2}" y="${H - 2}" font-size="13" text-anchor="middle" fill="currentColor">${esc(tr(S, "calc.months", "months"))}</text></svg><div class="calc-legend"><span class="calc-key"><i style="background:#3f51b5"></i>${esc(tr(S, "calc.own", "Own"))}</span> <span class="calc-key"><i style="background:#e91e63"></i>${esc(tr(S, "calc.rent", "Rent"))}</span></div>`;
  const rows = [
    [tr(S, "calc.own_total", "Own: total over the horizon"), money(t.own_total, cur, S)],
    [tr(S, "calc.cloud_total", "Rent: total over the horizon"), money(t.cloud_total, cur, S)],
    [tr(S, "calc.break_even_month", "Break-even month"), t.break_even_month ?? MISSING],
    [tr(S, "calc.break_even_util", "Break-even utilisation"), formatPercent(t.break_even_utilisation, S.lang === "az" ? "az" : "en", 0)],
    [tr(S, "calc.cloud_price", "Cloud price per GPU-hour (USD)"), fmt(r.cloud_usd_per_gpu_hour, S, 2)],
  ];
  // No price for a workload that does not fit (or an encoder's tokens): the reason instead.
  if (r.training) rows.push([tr(S, "calc.train_cost", "Training run in the cloud"), r.training.reason ? errorText(r.training.reason, S) : `${withPm(money(r.training.cloud_cost, cur, S), r, "training", S)} · ${withPm(`${fmt(r.training.hours, S, 1)} ${tr(S, "calc.unit.hours", "h")}`, r, "training", S)}`]);
  if (r.inference) rows.push([tr(S, "calc.per_million", "Per 1M generated tokens (rented)"), r.inference.reason ? errorText(r.inference.reason, S) : `${formatMoney(r.inference.per_million_tokens, cur, S.lang === "az" ? "az" : "en", 3)} ${pm(r, "decode", S)}`.trim()]);
  if (r.inference && !r.inference.reason && r.inference.own_per_million_tokens != null) rows.push([tr(S, "calc.own_per_million", "Per 1M generated tokens (owned)"), `${formatMoney(r.inference.own_per_million_tokens, cur, S.lang === "az" ? "az" : "en", 3)} ${pm(r, "decode", S)}`.trim()]);
  // a rack or a desktop box priced whole (catalog/systems, issue 34): what is bought, its power and cooling
  const whole = r.system && r.system.system;
  if (whole && r.system.system_usd != null) rows.push([tr(S, "calc.bought_as", "Bought as"), `${whole.name}: ${formatMoney(r.system.system_usd, "USD", lang2(S), 0)}${whole.system_power_w ? ` · ${fmt((r.system.nodes * whole.system_power_w) / 1000, S, 1)} ${tr(S, "calc.unit.kw", "kW")}` : ""}${whole.cooling === "liquid" ? ` · ${tr(S, "calc.liquid", "liquid cooled")}` : ""}`]);
  const verdict = t.savings > 0 ? tr(S, "calc.own_cheaper", "owning is cheaper") : tr(S, "calc.rent_cheaper", "renting is cheaper");
  return `<p class="calc-headline">${esc(r.gpus)} × ${esc(r.gpu.name)} · <strong data-out="verdict">${esc(verdict)}</strong> (${esc(money(Math.abs(t.savings), cur, S))})</p>${svg}${table([tr(S, "calc.quantity", "Quantity"), tr(S, "calc.value", "Value")], rows, "calc-main")}${owningItems(r, S)}${bandLine(r, S)}`;
}

// What owning costs, item by item (advisor.money.cost.owning_plan, as `advisor cost tco`,
// recommend and the reports show it): the amount in the chosen currency, once, per month or per
// year; "not priced" where no figure was read; what it counts; a secondary source said as such.
function owningItems(r, S) {
  if (!r.owning) return "";
  const cur = r.tco.currency, rate = r.tco.rate;
  const amount = (i) => {
    if (!i.priced) return tr(S, "calc.own.not_priced", "not priced");
    let v;
    if (i.usd != null) v = money(i.usd * rate, cur, S);
    else if (i.usd_per_month != null) v = fillText(tr(S, "calc.own.per_month", "{v} per month"), { v: money(i.usd_per_month * rate, cur, S) });
    else v = fillText(tr(S, "calc.own.per_year", "{v} per year"), { v: money((i.usd_per_year || 0) * rate, cur, S) });
    return i.counted ? v : `${v} (${tr(S, "calc.own.not_counted", "not counted")})`;
  };
  const note = (i) => {
    const p = i.params || {};
    let key = "calc.own.n." + i.key;
    if (i.key === "server" && p.entered) key += "_entered";
    else if (i.key === "server" && p.assumed) key += "_assumed";
    else if (i.key === "software_support" && p.included) key += "_included";
    else if (i.key === "hardware_support" && p.desktop) key += "_none";
    else if ((i.key === "server" || i.key === "network" || i.key === "hosting") && i.priced && !(i.key === "server" ? p.system : i.key === "network" ? p.ports : p.kw)) key += "_none";
    const slots = { n: fmt(p.n ?? 0, S, 0), gpu: p.gpu ?? "", system: p.system ?? "", ports: fmt(p.ports ?? 0, S, 0), tiers: fmt(p.tiers ?? 0, S, 0), nodes: fmt(p.nodes ?? 0, S, 0), kw: fmt(p.kw ?? 0, S, 2), rate: money((p.rate ?? 0) * rate, cur, S), each: money((p.each ?? 0) * rate, cur, S), product: p.product ?? "", share: formatPercent(p.share ?? 0, S.lang === "az" ? "az" : "en", 1), months: fmt(p.months ?? 0, S, 0) };
    let text = i.priced || i.key === "server" ? fillText(tr(S, key, ""), slots) : "";
    if (i.source && i.source.kind === "assumption") text = `${text} (${tr(S, "calc.own.assumption", "an assumption")})`.trim();
    if (i.source && i.source.kind === "secondary") text = `${text} (${tr(S, "calc.own.secondary", "secondary source")})`.trim();
    return text;
  };
  const rows = r.owning.items.map((i) => [tr(S, "calc.own.i." + i.key, i.key), amount(i), note(i)]);
  return `<p class="calc-note" data-out="owning">${esc(tr(S, "calc.own.items", "What owning costs, item by item"))}</p>${table([tr(S, "calc.own.item", "Item"), tr(S, "calc.value", "Value"), tr(S, "calc.own.counts", "What it counts")], rows, "calc-owning")}`;
}

// A rejection reason in the page's language (calc.r.<key>, else the error's err.<key>): numbers
// through the one formatter (decimal comma in az), money with its currency, the pricing kind in
// words; the English message only for a key neither table knows.
function reasonText(x, S) {
  const t = S["calc.r." + x.key] ?? S["err." + x.key];
  if (!t) return x.message;
  const p = x.params || {};
  return t.replace(/\{(\w+)\}/g, (_, k) => {
    const v = p[k];
    if (v === undefined || v === null) return "";
    if ((k === "cost" || k === "budget") && p.currency) return money(v, p.currency, S);
    if (k === "pricing") return tr(S, "calc.pricing." + v, v);
    if (typeof v === "number") return fmt(v, S, 1);
    // number formats as datasheets write them (BF16, FP8, NVFP4), one form on both languages' pages
    if ((k === "precision" || k === "format") && typeof v === "string") return v.toUpperCase();
    return Array.isArray(v) ? v.join(", ") : v;
  });
}

// A training task in the picker: the cluster calculator for more than one node, same model
// (its state in the URL, as calc.mjs reads it).
function clusterLink(r, S) {
  if (r.task !== "train") return "";
  const href = `../cluster/?${new URLSearchParams({ "cluster.model": r.model.name })}`;
  return `<p class="calc-next"><a data-out="cluster_link" href="${esc(href)}">${esc(tr(S, "calc.to_cluster", "Plan a cluster past one node"))}</a></p>`;
}

function renderPicker(r, S) {
  const serving = r.task === "inference";
  const rows = r.recommended.map((x) => [x.rank, x.gpu_name, x.count, shardingText(x.sharding, S), x.cost == null ? MISSING : money(x.cost, x.currency, S) + (x.mode === "own" && x.server_assumed ? " *" : ""), x.mode ? tr(S, "calc.o." + x.mode, x.mode) : MISSING, x.tokens_per_s == null ? MISSING : fmt(x.tokens_per_s, S, 0), ...(serving ? [x.tokens_per_s_per_user == null ? MISSING : fmt(x.tokens_per_s_per_user, S, 1), x.weights ? tr(S, "calc.o." + x.weights, x.weights) : MISSING] : [])]);
  // every rejection, the nearest misses first (advisor.advice.shortfall): how far each came short
  const short = (x) => (x.shortfall == null ? MISSING : `×${fmt(x.shortfall, S, 2)}`);
  const rej = r.rejected.map((x) => [x.gpu_name, x.count, short(x), x.reasons.map((y) => reasonText(y, S)).join("; ")]);
  // an owned row whose server has no published price counts a stated assumption (issue 38): marked *
  const assumedNote = r.recommended.some((x) => x.mode === "own" && x.server_assumed) ? `<p class="calc-note" data-out="server_assumed">${esc(tr(S, "calc.pk.server_assumed", ""))}</p>` : "";
  // regulated data (issue 38): a consumer card or a community cloud, said above the table
  const reg = (r.regulated || []).map((x) => `<p class="calc-warn" data-out="regulated"><strong>${esc(fillText(tr(S, "calc." + x.key, x.key), { gpu: (x.params || {}).gpu ?? "" }))}</strong></p>`).join("");
  return `<p class="calc-headline">${esc(r.model.display_name)} · ${esc(tr(S, "calc.o." + r.task, r.task))} · <strong data-out="best">${esc(r.recommended[0] ? `${r.recommended[0].count} × ${r.recommended[0].gpu_name}` : tr(S, "calc.none", "none fits"))}</strong></p>${reg}${table(["#", tr(S, "calc.gpu", "Accelerator"), tr(S, "calc.count", "Count"), tr(S, "calc.sharding", "Sharding"), tr(S, "calc.cost", "Cost"), tr(S, "calc.mode", "Rent/own"), withPm(tr(S, "calc.tokens_s", "tokens/s"), r, firstBand(r), S), ...(serving ? [tr(S, "calc.per_user", "tokens/s per user"), tr(S, "calc.format", "Weights")] : [])], rows, "calc-main calc-key2")}${assumedNote}${bandLine(r, S)}${clusterLink(r, S)}<details class="calc-rejected"><summary>${esc(tr(S, "calc.rejected", "Rejected"))} (${r.counts.rejected})</summary><p class="calc-note">${esc(tr(S, "calc.rej_order", "Nearest misses first."))} <input type="search" class="calc-filter" aria-label="${esc(tr(S, "calc.rej_filter", "Filter"))}" placeholder="${esc(tr(S, "calc.rej_filter", "Filter"))}"></p>${table([tr(S, "calc.gpu", "Accelerator"), tr(S, "calc.count", "Count"), tr(S, "calc.rej_short", "Needs × what it has"), tr(S, "calc.reason", "Reason")], rej, "calc-rej")}</details>`;
}

// ---------------------------------------------------------------- error bands of the time model
// Every time or throughput figure carries the error band that the validation set measured
// (result.accuracy: {kind: {n, median_abs_error, worst_abs_error}}, advisor.perf.accuracy): "±x" next
// to the figure, the full band as a line under the result, linked to the methodology page.
const lang2 = (S) => (S.lang === "az" ? "az" : "en");
const pct = (f, S) => formatPercent(f, lang2(S), 0);
// A translated template with {name} slots: the text is escaped, the slots take finished HTML.
function fillHtml(template, slots) {
  return esc(template).replace(/\{(\w+)\}/g, (m, k) => (k in slots ? slots[k] : m));
}
function fillText(template, slots) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in slots ? String(slots[k]) : m));
}
// "±9% (worst ±37%)" of one kind: its median and worst error ("" when the result has no band of that kind).
export function pm(r, kind, S) {
  const a = r && r.accuracy && r.accuracy[kind];
  // never a bare "±median": the worst error of the kind beside it (issue 38)
  return a ? fillText(tr(S, "calc.pm", "±{median} (worst ±{worst})"), { median: pct(a.median_abs_error, S), worst: pct(a.worst_abs_error, S) }) : "";
}
const firstBand = (r) => Object.keys((r && r.accuracy) || {})[0];
const withPm = (text, r, kind, S) => (pm(r, kind, S) ? `${text} ${pm(r, kind, S)}` : text);
export function bandLine(r, S) {
  const acc = r && r.accuracy;
  if (!acc || !Object.keys(acc).length) return "";
  const items = Object.entries(acc).map(([kind, a]) => {
    const text = fillText(tr(S, "calc.band", "±{median} (median), ±{worst} at worst, against {n} published measurements"), {
      median: pct(a.median_abs_error, S),
      worst: pct(a.worst_abs_error, S),
      n: formatNumber(a.n, lang2(S)),
    });
    return `<span data-band="${esc(kind)}">${esc(tr(S, "calc.band.k." + kind, kind))}: ${esc(text)}</span>`;
  });
  return `<p class="calc-band" data-out="band">${esc(tr(S, "calc.band_title", "Measured error of these times"))}: ${items.join("; ")} (<a href="../../methodology/#time-validation">${esc(tr(S, "calc.band_link", "how it was measured"))}</a>)</p>`;
}

// ---------------------------------------------------------------- serving
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function servingChart(r, S) {
  const W = 600, H = 280, x0 = 92, y0 = 240, x1 = W - 32, yTop = 16;
  const pts = r.points;
  const mx = niceMax(Math.max(...pts.map((p) => p.tokens_per_s_per_user))), my = niceMax(Math.max(...pts.map((p) => p.tokens_per_s)));
  const sx = (v) => x0 + (v / mx) * (x1 - x0), sy = (v) => y0 - (v / my) * (y0 - yTop);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const grid = ticks.map((f) => `<line x1="${x0}" y1="${sy(f * my).toFixed(1)}" x2="${x1}" y2="${sy(f * my).toFixed(1)}" stroke="currentColor" stroke-opacity=".12"/><text class="tk" x="${x0 - 4}" y="${(sy(f * my) + 4).toFixed(1)}" font-size="13" text-anchor="end" fill="currentColor">${esc(fmt(f * my, S, 0))}</text><text class="tk" x="${sx(f * mx).toFixed(1)}" y="${y0 + 16}" font-size="13" text-anchor="middle" fill="currentColor">${esc(fmt(f * mx, S, 0))}</text>`).join("");
  const line = `<polyline fill="none" stroke="#3f51b5" stroke-width="2" points="${pts.map((p) => `${sx(p.tokens_per_s_per_user).toFixed(1)},${sy(p.tokens_per_s).toFixed(1)}`).join(" ")}"/>`;
  const ms = (s) => fmt(s * 1e3, S, 1);
  const dots = pts.map((p) => {
    const x = sx(p.tokens_per_s_per_user).toFixed(1), y = sy(p.tokens_per_s).toFixed(1);
    const title = `${tr(S, "calc.sv.concurrency", "Concurrent requests")} ${fmt(p.concurrency, S, 0)}: ${fmt(p.tokens_per_s, S, 0)} ${tr(S, "calc.sv.tps_total", "tokens/s in total")}, ${fmt(p.tokens_per_s_per_user, S, 1)} ${tr(S, "calc.sv.tps_user", "tokens/s per user")}, TTFT ${ms(p.ttft_s)} ms, TPOT ${ms(p.tpot_s)} ms`;
    return `<circle cx="${x}" cy="${y}" r="3.5" fill="#3f51b5"><title>${esc(title)}</title></circle><text x="${x}" y="${(Number(y) - 7).toFixed(1)}" font-size="11" text-anchor="middle" fill="currentColor">${esc(fmt(p.concurrency, S, 0))}</text>`;
  }).join("");
  // the curve's last point: where the KV cache (or the engine's limit on sequences) stops it
  const last = pts[pts.length - 1];
  const kvBound = r.kv_limited_concurrency <= r.max_concurrency;
  const lx = sx(last.tokens_per_s_per_user).toFixed(1);
  const limitText = kvBound ? tr(S, "calc.sv.kv_mark", "KV-cache limit") : tr(S, "calc.sv.cap_mark", "engine's limit");
  const limit = `<line x1="${lx}" y1="${yTop}" x2="${lx}" y2="${y0}" stroke="#ff9800" stroke-dasharray="4"/><text x="${(Number(lx) + 4).toFixed(1)}" y="${y0 - 6}" font-size="11" fill="#ff9800">${esc(limitText)} (${esc(fmt(last.concurrency, S, 0))})</text>`;
  const b = r.best;
  const best = b ? `<circle cx="${sx(b.tokens_per_s_per_user).toFixed(1)}" cy="${sy(b.tokens_per_s).toFixed(1)}" r="8" fill="none" stroke="#e91e63" stroke-width="2.5" data-out="best_mark"><title>${esc(tr(S, "calc.sv.best_mark", "best within the limits"))}</title></circle>` : "";
  const axes = `<line x1="${x0}" y1="${y0}" x2="${x1}" y2="${y0}" stroke="currentColor"/><line x1="${x0}" y1="${yTop}" x2="${x0}" y2="${y0}" stroke="currentColor"/><text class="ax" x="${(x0 + x1) / 2}" y="${H - 4}" font-size="12" text-anchor="middle" fill="currentColor">${esc(tr(S, "calc.sv.tps_user", "tokens/s per user"))}</text><text class="ax" x="14" y="${(yTop + y0) / 2}" font-size="12" text-anchor="middle" fill="currentColor" transform="rotate(-90 14 ${(yTop + y0) / 2})">${esc(tr(S, "calc.sv.tps_total", "tokens/s in total"))}</text>`;
  const legend = `<div class="calc-legend"><span class="calc-key"><i style="background:#3f51b5"></i>${esc(tr(S, "calc.sv.curve", "one point per number of concurrent requests"))}</span> <span class="calc-key"><i style="background:#e91e63"></i>${esc(tr(S, "calc.sv.best_mark", "best within the limits"))}</span> <span class="calc-key"><i style="background:#ff9800"></i>${esc(limitText)}</span></div>`;
  return `<svg class="calc-svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tr(S, "calc.sv.chart", "Throughput against latency"))}">${grid}${axes}${line}${limit}${dots}${best}</svg>${legend}`;
}

function renderServing(r, S) {
  const ms = (s) => fmt(s * 1e3, S, 1);
  const b = r.best;
  const strong = (name, text) => `<strong data-out="${name}">${esc(text)}</strong>`;
  const where = `${esc(r.model.display_name)} · ${esc(r.replicas)} × ${esc(fillText(tr(S, "calc.sh.tp", "TP {t}"), { t: r.tensor_parallel }))} · ${esc(r.gpu.name)}`;
  const head = b
    ? fillHtml(tr(S, "calc.sv.best", "Best within the limits: {tokens} tokens/s in total at {c} concurrent requests; per user {user} tokens/s, TTFT {ttft} ms, TPOT {tpot} ms"), {
        tokens: strong("best_tokens_s", withPm(fmt(b.tokens_per_s, S, 0), r, "serving", S)),
        c: strong("best_concurrency", fmt(b.concurrency, S, 0)),
        user: strong("best_user", withPm(fmt(b.tokens_per_s_per_user, S, 1), r, "decode", S)),
        ttft: strong("best_ttft", withPm(ms(b.ttft_s), r, "prefill", S)),
        tpot: strong("best_tpot", withPm(ms(b.tpot_s), r, "decode", S)),
      })
    : `<strong data-out="best_tokens_s">${esc(tr(S, "calc.sv.none", "No concurrency meets the TTFT / TPOT limits."))}</strong>`;
  const kvBound = r.kv_limited_concurrency <= r.max_concurrency;
  const kv = fillHtml(tr(S, "calc.sv.kv", "The KV cache has room for {kv} concurrent requests per replica."), { kv: strong("kv_limit", fmt(r.kv_limited_concurrency, S, 0)) }) +
    " " + (kvBound ? esc(tr(S, "calc.sv.kv_bound", "That is where the curve ends.")) : esc(fillText(tr(S, "calc.sv.cap", "The curve ends earlier, at the engine's limit of {max} sequences."), { max: fmt(r.max_concurrency, S, 0) })));
  const rows = r.points.map((p) => [fmt(p.concurrency, S, 0), ms(p.ttft_s), ms(p.tpot_s), fmt(p.tokens_per_s_per_user, S, 1), fmt(p.tokens_per_s, S, 0), fmt(p.tokens_per_s_per_gpu, S, 0), fmt(p.requests_per_s, S, 2)]);
  const head2 = [tr(S, "calc.sv.concurrency", "Concurrent requests"), withPm("TTFT (ms)", r, "prefill", S), withPm("TPOT (ms)", r, "decode", S), withPm(tr(S, "calc.sv.tps_user", "tokens/s per user"), r, "decode", S), withPm(tr(S, "calc.sv.tps_total", "tokens/s in total"), r, "serving", S), tr(S, "calc.sv.tps_gpu", "tokens/s per GPU"), tr(S, "calc.sv.rps", "requests/s")];
  const best = b ? b.concurrency : null;
  const tbl = `<table class="calc-table calc-main"><thead><tr>${head2.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((row, i) => `<tr${r.points[i].concurrency === best ? ' class="calc-best"' : ""}>${row.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  const fp4 = r.fp4_dequantised ? ` <span data-out="fp4_dequantised">${esc(fillText(tr(S, "calc.sv.fp4_dequant", "This card has no tensor cores for {fmt}: the weights are dequantised and multiplied at {peak}."), { fmt: String(r.weights || "").toUpperCase(), peak: String(r.compute_peak || "").toUpperCase() }))}</span>` : "";
  // issue 35: dequantised FP4 weights also stream slower where a measured rate says so
  // (advisor.perf.efficiency.fp4_stream_note: MXFP4 upcast on Hopper)
  const st = r.fp4_weight_stream;
  const stream = r.fp4_dequantised && st ? ` <span data-out="fp4_weight_stream">${esc(fillText(tr(S, "calc.sv.fp4_stream", "The routed experts' {fmt} weights also stream slower: at {fraction} of the achievable memory bandwidth, the rate of the kernel that converts them to BF16 inside the matrix multiply ({gbps} GB/s measured on {gpu}; {ref})."), { fmt: String(r.weights || "").toUpperCase(), fraction: fmt(st.fraction, S, 2), gbps: fmt(st.gb_per_s, S, 0), gpu: st.reference_gpu, ref: st.reference }))}</span>` : "";
  return `<p class="calc-headline">${where}<br>${head}</p>${servingExtras(r, S)}<p class="calc-note">${kv}${fp4}${stream}</p>${servingChart(r, S)}${tbl}${interactivityTable(r, S)}${bandLine(r, S)}`;
}

// Issue 35: the load at a request rate and the largest rate within the limits
// (advisor.perf.queueing), speculative decoding, the prefix cache, disaggregated pools and
// expert parallelism, each a line when the form asks for it.
function servingExtras(r, S) {
  const ms = (s) => fmt(s * 1e3, S, 1);
  const note = (name, html) => `<p class="calc-note" data-out="${name}">${html}</p>`;
  const strong = (name, text) => `<strong data-out="${name}">${esc(text)}</strong>`;
  let out = "";
  if (r.expert_parallel) {
    const e = r.expert_parallel;
    const where = fillText(tr(S, e.in_domain ? "calc.sv.ep_in" : "calc.sv.ep_out", ""), { d: fmt(e.domain, S, 0) });
    out += note("ep", esc(fillText(tr(S, "calc.sv.ep", ""), { ep: fmt(e.ep, S, 0), where, imb: fmt(e.imbalance, S, 2) })));
  }
  if (r.load) {
    const l = r.load;
    out += note("load", fillHtml(tr(S, "calc.sv.load", ""), {
      rate: esc(fmt(l.request_rate_per_s, S, 2)),
      c: esc(fmt(l.concurrency, S, 1)),
      ttft: strong("load_ttft", withPm(ms(l.ttft_s), r, "prefill", S)),
      wait: esc(ms(l.queue_wait_s)),
      tpot: strong("load_tpot", withPm(ms(l.tpot_s), r, "decode", S)),
      tokens: esc(fmt(l.tokens_per_s, S, 0)),
    }));
  }
  const limited = r.limits && (r.limits.ttft_ms || r.limits.tpot_ms);
  if (limited && !r.expert_parallel) {
    const m = r.max_rate;
    out += m
      ? note("max_rate", fillHtml(tr(S, "calc.sv.max_rate", ""), {
          rate: strong("max_rate_value", fmt(m.request_rate_per_s, S, 2)),
          ttft: esc(withPm(ms(m.ttft_s), r, "prefill", S)),
          tpot: esc(withPm(ms(m.tpot_s), r, "decode", S)),
          gpu_tps: esc(fmt(m.tokens_per_s_per_gpu, S, 0)),
        }))
      : note("max_rate", esc(tr(S, "calc.sv.no_rate", "")));
  }
  if (r.speculative) {
    const sp = r.speculative;
    out += note("speculative", esc(fillText(tr(S, "calc.sv.spec", ""), { k: fmt(sp.draft_tokens, S, 0), a: fmt(sp.acceptance, S, 2), tps: fmt(sp.tokens_per_step, S, 2) })));
  }
  if (r.engine_moe) {
    // TensorRT-LLM's MoE layers: the fitted factor and its held-out band (advisor.perf.serving.engine_moe_note)
    const m = r.engine_moe, b = m.band || {};
    out += note("engine_moe", esc(fillText(tr(S, "calc.sv.trtllm_moe", ""), {
      f: fmt(m.factor, S, 1),
      median: b.n ? pct(b.median_abs_error, S) : "-",
      worst: b.n ? pct(b.worst_abs_error, S) : "-",
      n: b.n ? formatNumber(b.n, lang2(S)) : "0",
    })));
  }
  // how the engine is run (advisor.webapi.serving._engine_settings, the CLI's --no-cuda-graphs
  // and --kv-on-demand): the fitted host time per iteration and the requests the load model admits
  const es = r.engine_settings;
  if (es && es.cuda_graphs === false) out += note("eager", esc(fillText(tr(S, "calc.sv.eager", ""), { ms: fmt(es.eager_iteration_ms, S, 1) })));
  if (es && es.kv_on_demand) out += note("kv_on_demand", fillHtml(tr(S, "calc.sv.kv_on_demand", ""), { kv: strong("kv_on_demand_limit", fmt(es.kv_on_demand_concurrency, S, 0)) }));
  if (r.prefix_hit_rate) out += note("prefix", esc(fillText(tr(S, "calc.sv.prefix", ""), { p: formatPercent(r.prefix_hit_rate, lang2(S), 0) })));
  if (r.disaggregated) {
    const d = r.disaggregated.plan;
    out += d
      ? note("disaggregated", fillHtml(tr(S, "calc.sv.disagg", ""), {
          np: strong("disagg_prefill", fmt(d.prefill_instances, S, 0)),
          ptp: esc(d.prefill_tp),
          nd: strong("disagg_decode", fmt(d.decode_instances, S, 0)),
          dtp: esc(d.decode_tp),
          c: esc(fmt(d.decode_concurrency, S, 0)),
          rate: esc(fmt(d.request_rate_per_s, S, 2)),
          ttft: esc(withPm(ms(d.ttft_s), r, "prefill", S)),
          xfer: esc(fmt(d.kv_transfer_s * 1e3, S, 2)),
          tpot: esc(withPm(ms(d.tpot_s), r, "decode", S)),
          gpu_tps: esc(fmt(d.tokens_per_s_per_gpu, S, 0)),
        }))
      : note("disaggregated", esc(tr(S, "calc.sv.disagg_none", "")));
  }
  return out;
}

// The curve serving benchmarks compare on (advisor.money.interactivity): tokens/s per GPU against
// tokens/s per user, with USD per million output tokens rented and owned.
function interactivityTable(r, S) {
  if (!r.curve || !r.curve.length) return "";
  const usd = (v) => (v == null ? MISSING : fmt(v, S, 3));
  const head = [tr(S, "calc.sv.concurrency", "Concurrent requests"), tr(S, "calc.sv.tps_user", "tokens/s per user"), tr(S, "calc.sv.tps_gpu", "tokens/s per GPU"), tr(S, "calc.sv.cost_rent", "USD per million tokens, rented"), tr(S, "calc.sv.cost_own", "USD per million tokens, owned")];
  const rows = r.curve.map((c) => [fmt(c.concurrency, S, 0), fmt(c.tokens_per_s_per_user, S, 1), fmt(c.tokens_per_s_per_gpu, S, 0), usd(c.usd_per_million_tokens), usd(c.own_usd_per_million_tokens)]);
  const o = r.owned;
  let price = "";
  if (r.usd_per_gpu_hour != null || o) {
    price = esc(fillText(tr(S, "calc.sv.price_note", ""), {
      price: r.usd_per_gpu_hour == null ? MISSING : formatMoney(r.usd_per_gpu_hour, "USD", lang2(S), 2),
      provider: r.price_provider || MISSING,
      own: o ? formatMoney(o.usd_per_gpu_hour, "USD", lang2(S), 2) : MISSING,
      bought: o ? fmt(o.gpus_bought, S, 0) : MISSING,
      util: o ? formatPercent(o.utilisation, lang2(S), 0) : MISSING,
      months: o ? fmt(o.horizon_months, S, 0) : MISSING,
    }));
    if (o && !o.server_priced) price += " " + esc(tr(S, "calc.sv.server_unpriced", ""));
    else if (o && o.server_assumed) price += " " + esc(tr(S, "calc.sv.server_assumed", ""));
  } else price = esc(tr(S, "calc.sv.no_price", ""));
  return `<p class="calc-note">${esc(tr(S, "calc.sv.curve_head", ""))}</p>${table(head, rows, "calc-curve")}<p class="calc-note" data-out="price_note">${price}</p>`;
}

// ---------------------------------------------------------------- cluster
// advisor.perf.cluster's reason in the page's language: its key (calc.cl.r.<reason_key>) with its
// params; the English text only if a key has no translation.
export function clusterReason(r, S) {
  const key = r.reason_key ? `calc.cl.r.${r.reason_key}` : "";
  if (key && S[key]) {
    const p = r.reason_params || {};
    return fillText(S[key], { gpus: p.gpus !== undefined ? fmt(p.gpus, S, 0) : "", hours: p.hours !== undefined ? fmt(p.hours, S, 0) : "" });
  }
  return r.reason || "";
}
const layoutText = (label) => String(label).replace(/ x /g, " × ");
// which fabric each collective of the chosen plan crosses (advisor.perf.training.collective_domains,
// issue 34): per parallel group its GPUs, the fabric's name and whether it stays inside one scale-up
// (NVLink) domain, crosses the network one GPU per domain, or both (hierarchical)
const OVER_KEY = { "scale-up": "scale_up", network: "network", "scale-up+network": "both" };
export function clusterCollectives(r, S) {
  const coll = (r.chosen && r.chosen.step && r.chosen.step.collectives) || {};
  const ORDER = ["tp", "cp", "ep", "pp", "dp", "expert_dp"];
  const rank = (g) => (ORDER.includes(g) ? ORDER.indexOf(g) : ORDER.length);
  const groups = Object.keys(coll).sort((a, b) => rank(a) - rank(b));
  if (!groups.length) return "";
  const unit = r.domain === "rack" ? tr(S, "calc.cl.domain_rack", "one NVL72 rack") : tr(S, "calc.cl.domain_node", "one node");
  const note = fillText(tr(S, "calc.cl.coll_head", "Which fabric each collective of this plan uses (one scale-up domain: {domain}, {gpus} GPUs):"), { domain: unit, gpus: fmt(r.domain_gpus, S, 0) });
  const rows = groups.map((g) => {
    const c = coll[g];
    const over = OVER_KEY[c.over] ? tr(S, "calc.cl.over." + OVER_KEY[c.over], c.over) : c.over;
    return [tr(S, "calc.cl.g." + g, g.toUpperCase()), fmt(c.ranks, S, 0), c.fabric, over];
  });
  const head = [tr(S, "calc.cl.coll_group", "Parallel group"), tr(S, "calc.cl.coll_ranks", "GPUs in the group"), tr(S, "calc.cl.coll_fabric", "Fabric"), tr(S, "calc.cl.coll_over", "Where")];
  return `<p class="calc-note" data-out="collectives">${esc(note)}</p>${table(head, rows, "calc-collectives")}`;
}
const yesNo = (v) => (v === true ? "✓" : v === false ? "✗" : MISSING);

function renderCluster(r, S) {
  const c = r.chosen;
  const usd = (v) => (v == null ? MISSING : money(v, "USD", S));
  const mwh = (kwh) => (kwh == null ? MISSING : fmt(kwh / 1000, S, 1));
  const days = (d) => withPm(fmt(d, S, 1), r, "training", S);
  // a published run's token budget (advisor.perf.cluster.TOKEN_BUDGETS): named by its label
  const run = r.run ? `<p class="calc-note" data-out="run">${esc(fillText(tr(S, "calc.cl.run", "Token budget: {what}: {tokens} tokens in sequences of {seq}."), { what: tr(S, "calc.o." + r.run.id, r.run.what), tokens: fmt(r.run.tokens, S, 0), seq: fmt(r.run.seq, S, 0) }))}</p>` : "";
  const reason = `${run}<p class="calc-note" data-out="reason">${esc(clusterReason(r, S))}</p>`;
  let out = `<p class="calc-headline">${esc(r.model.display_name)} · ${esc(r.gpu.name)} · `;
  if (c) {
    // a GB200 / GB300 NVL72 plan counts racks, one 72-GPU NVLink domain each (issue 34)
    const head = r.domain === "rack" ? tr(S, "calc.cl.head_rack", "{gpus} GPUs in {nodes} NVL72 racks, {layout}: {days} days") : tr(S, "calc.cl.head", "{gpus} GPUs on {nodes} nodes, {layout}: {days} days");
    out += fillHtml(head, {
      gpus: `<strong data-out="gpus">${esc(fmt(c.gpus, S, 0))}</strong>`,
      nodes: `<strong data-out="nodes">${esc(fmt(c.nodes, S, 0))}</strong>`,
      layout: `<strong data-out="layout">${esc(layoutText(c.label))}</strong>`,
      days: `<strong data-out="days">${esc(days(c.days))}</strong>`,
    });
    out += `</p>${reason}`;
    const st = c.step, lay = c.layout;
    const rows = [
      [tr(S, "calc.cl.layout", "Layout (TP × PP × DP)"), layoutText(c.label)],
      [tr(S, "calc.cl.bubble", "Pipeline bubble"), formatPercent(lay.bubble_fraction, lang2(S), 1)],
      [tr(S, "calc.cl.sharding", "Sharding"), tr(S, "calc.o." + lay.sharding, lay.sharding)],
      [tr(S, "calc.cl.checkpointing", "Activation checkpointing"), tr(S, "calc.o." + c.checkpointing, c.checkpointing)],
      [tr(S, "calc.cl.mfu", "MFU"), formatPercent(st.mfu, lang2(S), 1)],
      [tr(S, "calc.cl.step", "Step time (s)"), withPm(fmt(st.step_time_s, S, 2), r, "training", S)],
      [tr(S, "calc.cl.tokens_s", "tokens/s (whole cluster)"), withPm(fmt(st.tokens_per_s, S, 0), r, "training", S)],
      [tr(S, "calc.cl.hours", "Hours"), withPm(fmt(c.hours, S, 1), r, "training", S)],
      [tr(S, "calc.cl.days", "Days"), days(c.days)],
      [tr(S, "calc.cl.gpu_hours", "GPU-hours"), withPm(fmt(c.gpu_hours, S, 0), r, "training", S)],
      [tr(S, "calc.cl.cost", "Cost"), withPm(usd(c.cost_usd), r, "training", S)],
      [tr(S, "calc.cl.energy", "Energy (MWh)"), mwh(c.energy_kwh)],
      [tr(S, "calc.cl.memory", "Memory per GPU"), gib(c.memory_per_gpu_bytes, S)],
      [tr(S, "calc.cl.price", "Price per GPU-hour (USD)"), r.price_usd_per_gpu_hour == null ? MISSING : fmt(r.price_usd_per_gpu_hour, S, 2)],
    ];
    out += table([tr(S, "calc.quantity", "Quantity"), tr(S, "calc.value", "Value")], rows, "calc-chosen-plan");
    out += clusterCollectives(r, S);
  } else {
    out += `<strong data-out="gpus">${esc(tr(S, "calc.cl.none", "no plan"))}</strong></p>${reason}`;
  }
  if (r.options.length) {
    const head = [tr(S, "calc.cl.gpus", "GPUs"), r.domain === "rack" ? tr(S, "calc.cl.racks", "NVL72 racks") : tr(S, "calc.cl.nodes", "Nodes"), tr(S, "calc.cl.layout", "Layout (TP × PP × DP)"), tr(S, "calc.cl.mfu", "MFU"), withPm(tr(S, "calc.cl.days", "Days"), r, "training", S), tr(S, "calc.cl.gpu_hours", "GPU-hours"), tr(S, "calc.cl.cost", "Cost"), tr(S, "calc.cl.energy", "Energy (MWh)"), tr(S, "calc.cl.memory", "Memory per GPU"), tr(S, "calc.cl.deadline", "Deadline"), tr(S, "calc.cl.budget", "Budget")];
    const rows = r.options.map((o) => [fmt(o.gpus, S, 0), fmt(o.nodes, S, 0), layoutText(o.label), formatPercent(o.step.mfu, lang2(S), 1), fmt(o.days, S, 1), fmt(o.gpu_hours, S, 0), usd(o.cost_usd), mwh(o.energy_kwh), gib(o.memory_per_gpu_bytes, S), yesNo(o.meets_deadline), yesNo(o.within_budget)]);
    out += `<p class="calc-note">${esc(tr(S, "calc.cl.options", "The best layout at each GPU count:"))}</p><table class="calc-table calc-main"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((row, i) => `<tr${c && r.options[i].gpus === c.gpus ? ' class="calc-best"' : ""}>${row.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  }
  return out + bandLine(r, S);
}

export function renderResult(kind, r, S) {
  if (!r || r.error) return "";
  return { vram: renderVram, roofline: renderRoofline, budget: renderBudget, picker: renderPicker, serving: renderServing, cluster: renderCluster }[kind](r, S);
}
