"""Client advisory reports: a profile (advisor.profile) and the catalog become a report data
structure (plain JSON: every number is advisor's own), rendered as HTML in Azerbaijani or
English. Standard library only: the same code runs in the CLI, at site build time and in the
browser (Pyodide).

What each section is computed from
- audit: per-GPU memory of the recommended configuration (advisor.memory.training_memory /
  inference_memory, the setups advisor.recommend judged), and on one GPU as a reference;
- diagnosis: the roofline bound of the recommended configuration (advisor.compute,
  Williams, Waterman & Patterson 2009, https://doi.org/10.1145/1498765.1498785) plus the data
  feed: tokens/s x 8 bytes per token id (torch.long, https://pytorch.org/docs/stable/tensors.html);
- recommendation: advisor.recommend.recommend (rank 1 = recommended, the best candidate on
  another accelerator = runner-up), after the profile's on-premises power limit (sum of the
  cards' TDP) is applied to options that would be owned;
- rent vs buy: advisor.cost.tco for the recommended accelerator and count, the cheapest
  on-demand catalog offer against the catalog price, at the profile's utilisation;
- sources: the URL and date read of every catalog figure used (model config, accelerator
  figures, cloud offer, exchange rate) and the stated efficiency assumptions.

Rendering escapes every profile value with `html.escape` (text, attributes); translations live
in advisor/report_i18n.py (both languages complete; a missing key raises KeyError).
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, replace
from pathlib import Path

from . import compute, cost, numfmt
from . import memory as mem
from . import recommend as rec
from .errors import AdvisorError
from .profile import Profile, Workload, parse_profile
from .report_i18n import STRINGS

SECTIONS = ("summary", "audit", "diagnosis", "recommendation", "cost", "risks", "sources", "next")
BOUNDS = ("compute", "memory_bandwidth", "interconnect", "vram_capacity", "data_feed")
TOKEN_ID_BYTES = (
    8  # torch.long token ids fed to the model (https://pytorch.org/docs/stable/tensors.html)
)
HOURS_PER_YEAR = 8760
EXTRA_SOURCES = {
    "electricity": (
        "https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=epmt_5_3",
        "2026-12-02",
    ),
    "pue": (
        "https://uptimeinstitute.com/resources/research-and-reports/uptime-institute-global-data-center-survey-results-2023",
        "2026-12-02",
    ),
}


# ---------------------------------------------------------------------------------------------
# Publisher (from configuration, never from code)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Publisher:
    name: str
    contact: str = ""
    url: str = ""
    logo_data_uri: str = ""  # data:image/svg+xml;base64,... (inlined; no request)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "contact": self.contact,
            "url": self.url,
            "logo_data_uri": self.logo_data_uri,
        }


_LOGO_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
}


def publisher_from_dict(doc, base_dir=None) -> Publisher:
    """`{name, contact?, url?, logo?}`; `logo` is a file (relative to `base_dir`) inlined as a
    data URI, or a ready `data:` URI."""
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"].strip():
        raise AdvisorError("publisher.invalid", "publisher: needs a 'name'", field="publisher.name")
    for k in ("contact", "url", "logo", "logo_data_uri"):
        if doc.get(k) is not None and not isinstance(doc[k], str):
            raise AdvisorError(
                "publisher.invalid", f"publisher: {k}: expected text", field=f"publisher.{k}"
            )
    url = doc.get("url") or ""
    if url and not url.startswith(("https://", "http://", "mailto:")):
        raise AdvisorError(
            "publisher.invalid", "publisher: url: expected an http(s) URL", field="publisher.url"
        )
    logo = doc.get("logo_data_uri") or ""
    path = doc.get("logo")
    if path and path.startswith("data:image/"):
        logo = path
    elif path:
        p = Path(path)
        if base_dir is not None and not p.is_absolute():
            p = Path(base_dir) / p
        kind = _LOGO_TYPES.get(p.suffix.lower())
        if kind is None:
            raise AdvisorError(
                "publisher.invalid",
                "publisher: logo: an .svg, .png or .jpg file",
                field="publisher.logo",
            )
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise AdvisorError(
                "file.unreadable",
                f"publisher: logo: cannot read {p} ({exc.strerror})",
                field="publisher.logo",
            ) from None
        logo = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
    if logo and not logo.startswith("data:image/"):
        raise AdvisorError(
            "publisher.invalid",
            "publisher: logo: expected a data:image/ URI",
            field="publisher.logo",
        )
    return Publisher(doc["name"], doc.get("contact") or "", url, logo)


def load_publisher(path) -> Publisher:
    from . import yamlish

    p = Path(path)
    try:
        doc = yamlish.load_file(p)
    except OSError as exc:
        raise AdvisorError(
            "file.unreadable", f"publisher: cannot read {p} ({exc.strerror})", field="publisher"
        ) from None
    return publisher_from_dict(doc, p.parent)


def default_publisher_path() -> Path:
    return Path(__file__).resolve().parent.parent / "publisher.yaml"


# ---------------------------------------------------------------------------------------------
# Building the report data
# ---------------------------------------------------------------------------------------------


def _spec(workload: Workload, catalog):
    m = workload.model
    if m.preset:
        preset = catalog.model(m.preset)
        return preset.spec, {
            "id": preset.id,
            "display_name": preset.display_name,
            "source_url": preset.source_url,
            "source_read": preset.source_read,
        }
    from .models import from_hf_config

    spec = from_hf_config(m.config, name=m.name or "custom", display_name=m.name or "custom")
    return spec, {"id": None, "display_name": m.name, "source_url": None, "source_read": None}


def runs_over_horizon(w: Workload, horizon_months: int) -> int:
    """Training runs in the horizon: runs_per_year x horizon years (at least 1; default 1)."""
    if w.task == "serving":
        return 1
    if w.runs_per_year is None:
        return 1
    return max(1, round(w.runs_per_year * horizon_months / 12))


def advisor_workload(
    w: Workload, profile: Profile, spec, acquire: str | None = None
) -> rec.Workload:
    """The advisor.recommend workload a profile workload stands for.

    Training: every run in the horizon is counted (dataset tokens x epochs x runs), so that each
    candidate's utilisation and rent cost come from its own hours; the deadline applies to one
    run and is checked afterwards (`_post_filter`). Serving: `concurrent_users` sequences per
    replica, the per-user speed target times the users, busy `hours_per_day` / 24."""
    c = profile.constraints
    task = w.advisor_task
    kw = dict(
        model=spec,
        task=task,
        seq=w.seq,
        budget=c.budget,
        horizon_months=c.horizon_months,
        acquire=acquire or c.acquire,
        currency=c.currency,
    )
    if c.electricity_usd_per_kwh is not None:
        kw["electricity_usd_per_kwh"] = c.electricity_usd_per_kwh
    if task == "inference":
        users = w.concurrent_users or 1
        kw["batch"] = users
        kw["quant"] = None if w.weights == "bf16" else w.weights
        kw["utilisation"] = (w.hours_per_day if w.hours_per_day is not None else 24.0) / 24.0
        per_user = w.per_user_tokens_per_s
        if per_user is not None:
            kw["target_tokens_per_s"] = per_user * users
    else:
        kw["batch"] = w.batch
        kw["dataset_tokens"] = w.total_tokens * runs_over_horizon(w, c.horizon_months)
    return rec.Workload(**kw)


def _gpu(catalog, gpu_id: str):
    finder = getattr(catalog, "gpu", None)
    if finder is not None:
        return finder(gpu_id)
    for g in catalog.gpus:
        if g.id == gpu_id:
            return g
    raise AdvisorError("name.unknown", f"gpu: unknown {gpu_id!r}", field="gpu")


def _post_filter(recs, catalog, profile: Profile, w: Workload):
    """The profile's limits advisor.recommend does not know: the deadline of ONE training run
    (hours over the horizon / runs), and for options that would be owned the on-premises power
    (sum of the cards' TDP against `power_kw`). Passing candidates first, in recommend's order."""
    limit = profile.constraints.power_kw
    runs = runs_over_horizon(w, profile.constraints.horizon_months)
    out = []
    for r in recs:
        if r.ok and w.deadline_hours is not None and r.hours is not None:
            per_run = r.hours / runs
            if per_run > w.deadline_hours:
                reason = rec.Reason(
                    "recommend.too_slow_hours",
                    {"hours": round(per_run, 1), "deadline_hours": w.deadline_hours},
                    f"needs {per_run:,.1f} h, deadline {w.deadline_hours:,.1f} h",
                )
                r = replace(r, ok=False, reasons=(reason,))
        if r.ok and limit is not None and r.mode == "own":
            g = _gpu(catalog, r.gpu_id)
            kw = r.count * float(g.tdp_w or 0) / 1000
            if kw > limit:
                reason = rec.Reason(
                    "report.power",
                    {"needs_kw": round(kw, 2), "has_kw": limit},
                    f"the cards draw {kw:.1f} kW, {limit:g} kW available",
                )
                r = replace(r, ok=False, reasons=(reason,))
        out.append(r)
    return sorted(out, key=lambda r: (0 if r.ok else 1, r.rank))


def _rejections(recs, catalog, limit: int = 8) -> list:
    """One rejected candidate per accelerator (its largest count: the most favourable one
    tried), largest memory first, for the rejections table."""
    best: dict = {}
    for r in recs:
        if r.ok or any(x.ok and x.gpu_id == r.gpu_id for x in recs):
            continue
        if r.gpu_id not in best or r.count > best[r.gpu_id].count:
            best[r.gpu_id] = r
    order = sorted(best.values(), key=lambda r: (-r.capacity_bytes, r.gpu_id))
    return order[:limit]


def _setup_for(r, w: rec.Workload):
    """The memory setup advisor.recommend judged for recommendation `r`."""
    if w.task == "inference":
        return rec._inference_setup(w, r.tensor_parallel)
    if r.sharding == "single":
        return rec._training_setup(w, 1, "ddp", 1)
    if r.sharding == "zero3":
        return rec._training_setup(w, r.count, "zero3", 1)
    if r.sharding.startswith("tp"):
        return rec._training_setup(w, r.count, "ddp", r.count)
    return rec._training_setup(w, r.count, "ddp", 1)


def _estimate(setup):
    if isinstance(setup, mem.InferenceSetup):
        return mem.inference_memory(setup)
    return mem.training_memory(setup)


def _rec_dict(r, runs: int = 1) -> dict:
    d = r.to_dict()
    d["hours_per_run"] = None if r.hours is None else r.hours / runs
    d["reasons"] = [{"key": x.key, "params": x.params, "message": x.message} for x in r.reasons]
    return d


def _src(url, read, what) -> dict:
    return {"url": url, "read": read, "what": what}


def _gpu_sources(g, precision_key: str) -> list[dict]:
    out = []
    fields = ["memory_gib", "memory_bandwidth_gb_per_s", f"peak_tflops.{precision_key}", "tdp_w"]
    fields.append("interconnect_gb_per_s")
    if getattr(g, "price_usd", None):
        fields.append("price_usd")
    finder = getattr(g, "source", None)
    for f in fields:
        s = None
        if finder is not None:
            try:
                s = finder(f)
            except AdvisorError:
                s = None
        if s is not None:
            out.append(_src(s.url, s.read, f"{g.name}: {f}"))
    return out


def _diagnosis(r, w: rec.Workload, setup, est, gpu) -> dict:
    if w.task == "inference":
        rate = rec.decode_rate(w, gpu, r.tensor_parallel)
        pre = compute.prefill_time(
            w.model,
            gpu,
            batch=1,
            prompt_tokens=min(w.seq, 2048),
            weights=w.quant or "bf16",
            kv_dtype=w.kv_dtype,
            tensor_parallel=r.tensor_parallel,
        )
        rl = rate.roofline
        tokens_per_s = r.tokens_per_s
        extra = {
            "time_per_token_ms": rate.step_time_s * 1000,
            "tokens_per_s_per_user": rate.tokens_per_s_per_sequence,
            "ttft_2k_ms": pre.seconds * 1000,
            "ttft_prompt_tokens": min(w.seq, 2048),
        }
    else:
        st = compute.training_step_time(setup, gpu, memory=est)
        rl = st.roofline
        tokens_per_s = st.tokens_per_s
        extra = {"step_time_s": st.step_time_s, "mfu": st.model_flops_utilisation}
    feed = tokens_per_s * TOKEN_ID_BYTES
    return {
        "bound": rl.bound,
        "intensity_flop_per_byte": rl.intensity_flop_per_byte,
        "ridge_point": rl.ridge_point,
        "compute_time_s": rl.compute_time_s,
        "memory_time_s": rl.memory_time_s,
        "comm_time_s": rl.comm_time_s,
        "peak_tflops": rl.peak_tflops,
        "bandwidth_gb_per_s": rl.bandwidth_gb_per_s,
        "tokens_per_s": tokens_per_s,
        "data_feed_bytes_per_s": feed,
        **extra,
    }


def _cheapest_offer(catalog, gpu_id: str):
    return rec._cheapest_price(tuple(getattr(catalog, "offers", ()) or ()), gpu_id, "on_demand")


def _busy_share(r, aw: rec.Workload) -> float:
    """Utilisation over the horizon: serving's busy share of the day; training: all runs'
    hours (recommend's figure for this candidate) over the horizon's hours."""
    if aw.utilisation is not None:
        return aw.utilisation
    horizon_h = aw.horizon_months * cost.HOURS_PER_MONTH
    return min(1.0, (r.hours or horizon_h) / horizon_h)


def _missing(catalog, gpu_id: str) -> list[str]:
    gpu = _gpu(catalog, gpu_id)
    out = []
    if _cheapest_offer(catalog, gpu_id) is None:
        out.append("offer")
    if not getattr(gpu, "price_usd", None):
        out.append("price")
    return out


def _best_of(aw, acquire: str, w: Workload, profile: Profile, catalog):
    """The first passing candidate when only `acquire` (own | rent) is allowed."""
    ranked = _post_filter(rec.recommend(replace(aw, acquire=acquire), catalog), catalog, profile, w)
    return next((r for r in ranked if r.ok), None)


def _offer_dict(offer) -> dict:
    return {
        "provider": offer.provider,
        "instance": offer.instance,
        "region": offer.region,
        "gpus_per_instance": offer.gpus_per_instance,
        "usd_per_gpu_hour": cost.offer_price(offer, "on_demand"),
        "source_url": offer.source_url,
        "read": offer.read,
    }


def _cost(best, aw: rec.Workload, w: Workload, profile: Profile, catalog, rates) -> dict:
    """Rent vs buy: the best configuration to OWN (advisor.recommend with acquire=own) against
    the best to RENT (acquire=rent), each passing every constraint; when the recommended one
    can be both, it is used for both. advisor.cost.tco prices the owned cards; the rented
    configuration's bill over the horizon (its cheapest on-demand offer, whole instances, its
    own busy hours) enters tco as the equivalent price per owned-GPU busy hour, so that tco's
    cloud series, totals and break-even are those of renting that configuration."""
    own_r = best if best.mode == "own" else _best_of(aw, "own", w, profile, catalog)
    rent_r = best if best.mode == "rent" else _best_of(aw, "rent", w, profile, catalog)
    out = {
        "own": None if own_r is None else _rec_dict(own_r),
        "rent": None if rent_r is None else _rec_dict(rent_r),
        "horizon_months": aw.horizon_months,
        "offer": None,
        "tco": None,
    }
    if own_r is None or rent_r is None:
        return out
    gpu = _gpu(catalog, own_r.gpu_id)
    offer = _cheapest_offer(catalog, rent_r.gpu_id)
    out["offer"] = _offer_dict(offer)
    util_own = _busy_share(own_r, aw)
    util_rent = _busy_share(rent_r, aw)
    gpi = max(1, int(offer.gpus_per_instance))
    billed = math.ceil(rent_r.count / gpi) * gpi
    horizon_h = aw.horizon_months * cost.HOURS_PER_MONTH
    rent_usd = cost.offer_price(offer, "on_demand") * billed * horizon_h * util_rent
    eq_price = rent_usd / (own_r.count * horizon_h * util_own)
    res = cost.tco(
        cost.OwnHardware(
            gpu_price_usd=float(gpu.price_usd),
            gpus=own_r.count,
            tdp_w=float(gpu.tdp_w or 0),
            electricity_usd_per_kwh=aw.electricity_usd_per_kwh,
            pue=max(1.0, aw.pue),
        ),
        eq_price,
        utilisation=util_own,
        horizon_months=aw.horizon_months,
        currency=aw.currency,
        rates=rates,
    )
    out.update(
        utilisation=util_own,
        utilisation_rent=util_rent,
        billed_gpus=billed,
        equivalent_usd_per_gpu_hour=eq_price,
        same=(own_r.gpu_id, own_r.count) == (rent_r.gpu_id, rent_r.count),
    )
    out["tco"] = {
        "purchase": res.purchase,
        "power_per_month": res.power_per_month,
        "own_total": res.own_total,
        "cloud_total": res.cloud_total,
        "cloud_per_month": res.cloud_per_month,
        "savings": res.savings,
        "break_even_utilisation": res.break_even_utilisation,
        "break_even_month": res.break_even_month,
        "yearly": [{"year": y.year, "own": y.own, "cloud": y.cloud} for y in res.yearly],
        "cumulative_own": list(res.cumulative_own),
        "cumulative_cloud": list(res.cumulative_cloud),
        "pue": max(1.0, aw.pue),
        "electricity_usd_per_kwh": aw.electricity_usd_per_kwh,
    }
    return out


def _risks_and_steps(wd: dict, w: Workload, profile: Profile) -> tuple[list, list]:
    risks, steps = [], []
    r = wd["recommendation"]
    c = profile.constraints
    if r is None:
        risks.append({"key": "risk.no_fit", "params": {}})
        steps.append({"key": "step.no_fit", "params": {}})
        return risks, steps
    need, has = r["memory_per_gpu_bytes"], r["capacity_bytes"]
    if need and has and need / has > 0.9:
        risks.append({"key": "risk.tight_memory", "params": {"share": need / has}})
    if r["tier"] == "consumer":
        risks.append({"key": "risk.consumer", "params": {"gpu": r["gpu_name"]}})
    if w.task == "serving":
        risks.append({"key": "risk.serving_peak", "params": {"users": w.concurrent_users or 1}})
    if w.method == "qlora":
        risks.append({"key": "risk.qlora", "params": {}})
    if c.rack_units is not None and r["mode"] == "own":
        risks.append({"key": "risk.rack", "params": {"count": r["count"], "units": c.rack_units}})
    cost_d = wd["cost"]
    if (
        cost_d
        and cost_d["tco"]
        and cost_d["own"]["gpu_id"] == r["gpu_id"]
        and cost_d["utilisation"] < 0.2
    ):
        risks.append({"key": "risk.low_utilisation", "params": {"share": cost_d["utilisation"]}})
    bound = wd["diagnosis"]["bound"]
    steps.append({"key": f"step.bound.{bound}", "params": {"gpu": r["gpu_name"]}})
    task_key = {"serving": "serving", "training": "training"}.get(w.task, "finetune")
    pilot_hours = 8
    offer = wd.get("pilot_offer")
    params = {"gpu": r["gpu_name"], "count": r["count"], "hours": pilot_hours}
    if offer:
        params["cost"] = offer["usd_per_gpu_hour"] * r["count"] * pilot_hours * wd["rate"]
        params["provider"] = offer["provider"]
        steps.append({"key": f"step.pilot.{task_key}", "params": params})
    else:
        steps.append({"key": f"step.pilot_local.{task_key}", "params": params})
    est = wd["diagnosis"]["tokens_per_s"]
    steps.append({"key": "step.measure", "params": {"tokens_per_s": est}})
    if r["mode"] == "own":
        steps.append({"key": "step.quotes", "params": {"count": r["count"], "gpu": r["gpu_name"]}})
    else:
        steps.append({"key": "step.reserve", "params": {}})
    return risks, steps


def build_report(profile: Profile, catalog, *, lang: str | None = None) -> dict:
    """The whole report as plain JSON-ready data (numbers unformatted, texts as keys)."""
    c = profile.constraints
    lang = lang or c.language
    if lang not in STRINGS:
        raise AdvisorError("field.language", f"lang: one of {', '.join(STRINGS)}", field="lang")
    rates = getattr(catalog, "currency", None)
    factor = cost._rate(c.currency, rates)
    sources: list[dict] = []
    workloads = []
    for w in profile.workloads:
        spec, model = _spec(w, catalog)
        if model["source_url"]:
            sources.append(
                _src(model["source_url"], model["source_read"], f"{model['display_name']}: config")
            )
        aw = advisor_workload(w, profile, spec)
        recs = _post_filter(rec.recommend(aw, catalog), catalog, profile, w)
        runs = runs_over_horizon(w, c.horizon_months)
        ok = [x for x in recs if x.ok]
        best = ok[0] if ok else None
        runner = next((x for x in ok[1:] if best and x.gpu_id != best.gpu_id), None)
        if runner is None and len(ok) > 1:
            runner = ok[1]
        rejected = _rejections(recs, catalog)
        wd = {
            "name": w.name,
            "task": w.task,
            "method": w.method,
            "advisor_task": aw.task,
            "model": model,
            "params": _param_count(spec),
            "inputs": {
                "seq": w.seq,
                "batch": aw.batch,
                "dataset_tokens": w.dataset_tokens,
                "epochs": w.epochs,
                "total_tokens": w.total_tokens,
                "weights": w.weights,
                "precision": aw.train_precision if aw.task != "inference" else None,
                "concurrent_users": w.concurrent_users,
                "users": w.users,
                "target_tokens_per_s": aw.target_tokens_per_s,
                "per_user_tokens_per_s": w.per_user_tokens_per_s,
                "target_latency_ms": w.target_latency_ms,
                "deadline_hours": w.deadline_hours,
                "hours_per_day": w.hours_per_day,
                "runs_per_year": w.runs_per_year,
                "utilisation": aw.utilisation,
            },
            "runs_over_horizon": runs,
            "recommendation": _rec_dict(best, runs) if best else None,
            "runner_up": _rec_dict(runner, runs) if runner else None,
            "rejected": [_rec_dict(x, runs) for x in rejected],
            "candidates": len(recs),
            "passing": len(ok),
            "rate": factor,
        }
        # memory on one GPU (the audit's reference) and in the recommended configuration
        one = _estimate(
            rec._inference_setup(aw, 1)
            if aw.task == "inference"
            else rec._training_setup(aw, 1, "ddp", 1)
        )
        wd["memory_one_gpu"] = one.to_dict()
        if best is not None:
            gpu = _gpu(catalog, best.gpu_id)
            setup = _setup_for(best, aw)
            est = _estimate(setup)
            wd["memory"] = est.to_dict()
            wd["diagnosis"] = _diagnosis(best, aw, setup, est, gpu)
            prec = (aw.quant or "bf16") if aw.task == "inference" else aw.train_precision
            sources.extend(_gpu_sources(gpu, compute.PEAK_KEY.get(prec, "bf16")))
            if runner is not None:
                sources.extend(
                    _gpu_sources(_gpu(catalog, runner.gpu_id), compute.PEAK_KEY.get(prec, "bf16"))
                )
            po = _cheapest_offer(catalog, best.gpu_id)
            wd["pilot_offer"] = (
                None
                if po is None
                else {
                    "provider": po.provider,
                    "usd_per_gpu_hour": cost.offer_price(po, "on_demand"),
                }
            )
            wd["cost"] = _cost(best, aw, w, profile, catalog, rates)
            for opt in ("own", "rent"):
                x = wd["cost"][opt]
                if x is not None and x["gpu_id"] not in (best.gpu_id, runner and runner.gpu_id):
                    sources.extend(
                        _gpu_sources(_gpu(catalog, x["gpu_id"]), compute.PEAK_KEY.get(prec, "bf16"))
                    )
            if wd["cost"]["offer"]:
                o = wd["cost"]["offer"]
                sources.append(
                    _src(o["source_url"], o["read"], f"{o['provider']} {o['instance']}: price")
                )
            if aw.task == "inference":
                cap = mem.serving_capacity(
                    spec,
                    gpu.memory_bytes,
                    context=w.seq,
                    weights=w.weights,
                    tensor_parallel=best.tensor_parallel,
                )
                wd["serving"] = cap.to_dict()
        else:
            wd["memory"] = None
            wd["diagnosis"] = None
            wd["cost"] = None
        wd["risks"], wd["next_steps"] = _risks_and_steps(wd, w, profile)
        workloads.append(wd)
    if c.currency != "USD" and rates is not None and hasattr(rates, "rates"):
        r = rates.rates.get(c.currency)
        if r is not None:
            sources.append(_src(r.source_url, r.read, f"USD → {c.currency}: {r.per_usd:g}"))
    if any(wd["cost"] and wd["cost"]["tco"] for wd in workloads):
        if c.electricity_usd_per_kwh is None:
            sources.append(
                _src(*EXTRA_SOURCES["electricity"], "electricity price (U.S. EIA, 2023)")
            )
        sources.append(_src(*EXTRA_SOURCES["pue"], f"PUE {cost.DEFAULT_PUE:g}"))
    uniq: list[dict] = []
    by_key: dict = {}
    for s in sources:
        k = (s["url"], s["read"])
        if k not in by_key:
            by_key[k] = {"url": s["url"], "read": s["read"], "what": []}
            uniq.append(by_key[k])
        if s["what"] not in by_key[k]["what"]:
            by_key[k]["what"].append(s["what"])
    return {
        "lang": lang,
        "organisation": profile.organisation,
        "prepared_for": profile.prepared_for,
        "date": profile.date,
        "slug": profile.slug,
        "currency": c.currency,
        "constraints": {
            "budget": c.budget,
            "horizon_months": c.horizon_months,
            "power_kw": c.power_kw,
            "rack_units": c.rack_units,
            "acquire": c.acquire,
            "electricity_usd_per_kwh": c.electricity_usd_per_kwh
            if c.electricity_usd_per_kwh is not None
            else rec.DEFAULT_ELECTRICITY_USD_PER_KWH,
        },
        "workloads": workloads,
        "sources": uniq,
        "efficiency": dict(compute.EFFICIENCY_SOURCES),
        "efficiency_values": {
            "train_mfu": compute.DEFAULT_EFFICIENCY.train_mfu,
            "prefill_mfu": compute.DEFAULT_EFFICIENCY.prefill_mfu,
            "decode_bandwidth": compute.DEFAULT_EFFICIENCY.decode_bandwidth,
            "interconnect": compute.DEFAULT_EFFICIENCY.interconnect,
        },
    }


def _what(items: list[str]) -> str:
    """'H100: memory_gib', 'H100: tdp_w', 'H200: tdp_w' -> 'H100: memory_gib, tdp_w; H200: tdp_w'."""
    groups: dict[str, list[str]] = {}
    for item in items:
        subject, sep, fld = item.partition(": ")
        groups.setdefault(subject if sep else "", []).append(fld if sep else subject)
    return "; ".join(f"{k}: {', '.join(v)}" if k else ", ".join(v) for k, v in groups.items())


def _param_count(spec) -> int:
    from .models import param_count

    return param_count(spec)


# ---------------------------------------------------------------------------------------------
# Formatting: advisor.numfmt (the site's formatter)
# ---------------------------------------------------------------------------------------------


def fmt_num(value, digits: int, lang: str) -> str:
    return numfmt.number(value, digits, lang)


def fmt_gib(n_bytes, lang: str, digits: int = 1) -> str:
    return numfmt.binary_bytes(n_bytes, digits, lang)


def fmt_pct(fraction, lang: str, digits: int = 0) -> str:
    return numfmt.percent(fraction, digits, lang)


def fmt_money(amount, currency: str, lang: str, digits: int = 0) -> str:
    return numfmt.money(amount, currency, lang, digits)


def fmt_count(n: float, lang: str) -> str:
    """Large counts: 8.03 B, 200 M (en); 8,03 mlrd, 200 mln (az)."""
    units = STRINGS[lang]["unit.big"]
    for div, label in ((1e12, units[0]), (1e9, units[1]), (1e6, units[2])):
        if n >= div:
            return f"{fmt_num(n / div, 2 if n / div < 100 else 0, lang)}\u00a0{label}"
    return fmt_num(n, 0, lang)


def tr(lang: str, key: str, **params) -> str:
    """A translation; KeyError on a missing key (both languages are complete by test)."""
    text = STRINGS[lang][key]
    return text.format(**params) if params else text


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


def e(value) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


CSS = """
.ar{--ar-ink:#1b1f2a;--ar-mute:#5b6272;--ar-line:#d6d9e0;--ar-acc:#3949ab;--ar-ok:#2e7d32;--ar-bad:#c62828;color:var(--ar-ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:60rem;margin:0 auto}
.ar h1,.ar h2,.ar h3{color:inherit;font-weight:700;letter-spacing:normal}
.ar h1{font-size:1.7rem;margin:.2rem 0 .3rem;line-height:1.2}
.ar h2{font-size:1.3rem;border-bottom:2px solid var(--ar-acc);padding-bottom:.2rem;margin:1.6rem 0 .8rem}
.ar h3{font-size:1.08rem;margin:1.1rem 0 .5rem}
.ar header.ar-head{display:flex;gap:1rem;align-items:center;border-bottom:1px solid var(--ar-line);padding-bottom:.8rem}
.ar header.ar-head img{height:3rem;width:auto}
.ar .ar-meta{color:var(--ar-mute);margin:0}
.ar table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem;font-size:.92em}
.ar th,.ar td{border:1px solid var(--ar-line);padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
.ar .ar-src td{overflow-wrap:anywhere}
.ar th{background:#f1f3f8}
.ar td.n{text-align:right}
.ar td.d{white-space:nowrap}
.ar .ar-ok{color:var(--ar-ok);font-weight:600}
.ar .ar-bad{color:var(--ar-bad);font-weight:600}
.ar .ar-key{font-size:1.05em;background:#f1f3f8;border-left:4px solid var(--ar-acc);padding:.6rem .8rem;margin:.6rem 0}
.ar figure{margin:.5rem 0 1rem}
.ar figure svg{width:100%;height:auto;max-width:40rem;display:block}
.ar figcaption{color:var(--ar-mute);font-size:.88em}
.ar footer.ar-foot{border-top:1px solid var(--ar-line);margin-top:2rem;padding-top:.6rem;color:var(--ar-mute);font-size:.88em}
.ar a{color:var(--ar-acc)}
.ar .ar-src{font-size:.8em}
@media print{
.ar{max-width:none;font-size:10.5pt}
.ar section.ar-sec{break-before:page}
.ar section.ar-sec:first-of-type{break-before:auto}
.ar table,.ar figure,.ar .ar-key{break-inside:avoid}
.ar h2,.ar h3{break-after:avoid}
.ar tr{break-inside:avoid}
.ar a[href^="http"]::after{content:" (" attr(href) ")";font-size:.85em;color:var(--ar-mute);overflow-wrap:anywhere}
.ar .ar-src a[href^="http"]::after{content:""}
.ar .ar-src{font-size:.72em}
.ar th{background:#eee!important;-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"""


def _css() -> str:
    return "\n".join(line for line in CSS.strip().splitlines() if line.strip())


class _R:
    """Renders one report in one language."""

    def __init__(self, report: dict, publisher: Publisher):
        self.r = report
        self.lang = report["lang"]
        self.cur = report["currency"]
        self.pub = publisher

    def t(self, key, **params) -> str:
        return e(tr(self.lang, key, **params))

    def n(self, v, d=0) -> str:
        return e(fmt_num(v, d, self.lang))

    def gib(self, b) -> str:
        return e(fmt_gib(b, self.lang))

    def money(self, v) -> str:
        return e(fmt_money(v, self.cur, self.lang))

    def pct(self, v, d=None) -> str:
        if d is None:  # one decimal below 10 %, so that small shares do not read as 0 %
            d = 1 if v is not None and abs(v) < 0.1 else 0
        return e(fmt_pct(v, self.lang, d))

    def sharding(self, r) -> str:
        s = r["sharding"]
        if s in ("single", "ddp", "zero3", "-"):
            return self.t(f"shard.{s}", count=r["count"])
        if s.startswith("replicas"):
            return self.t("shard.replicas", count=r["count"])
        tp, _, reps = s[2:].partition("x")
        if reps:
            return self.t("shard.tpx", tp=tp, replicas=reps)
        return self.t("shard.tp", tp=tp)

    def reason(self, reason: dict) -> str:
        key = f"reason.{reason['key']}"
        if key in STRINGS[self.lang]:
            p = dict(reason["params"])
            for k in ("cost", "budget"):
                if k in p:
                    p[k] = fmt_money(p[k], self.cur, self.lang)
            for k in ("needs_gib", "has_gib", "hours", "deadline_hours", "needs_kw", "has_kw"):
                if k in p:
                    p[k] = fmt_num(p[k], 1, self.lang)
            for k in ("tokens_per_s", "target"):
                if k in p:
                    p[k] = fmt_num(p[k], 0, self.lang)
            return e(tr(self.lang, key, **p))
        return e(reason["message"])

    def item(self, entry: dict) -> str:
        p = {}
        for k, v in entry["params"].items():
            if k == "share":
                p[k] = fmt_pct(v, self.lang)
            elif k == "cost":
                p[k] = fmt_money(v, self.cur, self.lang)
            elif k == "tokens_per_s":
                p[k] = fmt_num(v, 0, self.lang)
            else:
                p[k] = v
        return e(tr(self.lang, entry["key"], **p))

    # -- sections ----------------------------------------------------------------------------
    def header(self) -> str:
        r, pub = self.r, self.pub
        logo = (
            f'<img src="{e(pub.logo_data_uri)}" alt="{e(pub.name)}">' if pub.logo_data_uri else ""
        )
        meta = [self.t("head.for", org=r["organisation"])]
        if r["prepared_for"]:
            meta.append(self.t("head.attn", who=r["prepared_for"]))
        if r["date"]:
            meta.append(self.t("head.date", date=r["date"]))
        return (
            f'<header class="ar-head">{logo}<div><p class="ar-meta">{e(pub.name)}</p>'
            f"<h1>{self.t('title', org=r['organisation'])}</h1>"
            f'<p class="ar-meta">{" · ".join(meta)}</p></div></header>'
        )

    def summary(self) -> str:
        rows = []
        for wd in self.r["workloads"]:
            r = wd["recommendation"]
            if r is None:
                cell = f'<span class="ar-bad">{self.t("summary.none")}</span>'
                cost_cell = "—"
            else:
                cell = (
                    self.t("summary.config", count=r["count"], gpu=r["gpu_name"])
                    + " · "
                    + self.sharding(r)
                )
                cost_cell = f"{self.money(r['cost'])} ({self.t('mode.' + r['mode'])})"
            diag = self.t("bound." + wd["diagnosis"]["bound"]) if wd["diagnosis"] else "—"
            rows.append(
                f"<tr><td>{e(wd['name'])}</td><td>{self.t('task.' + wd['advisor_task'])}</td>"
                f"<td>{e(wd['model']['display_name'])}</td><td>{cell}</td><td>{diag}</td>"
                f'<td class="n">{cost_cell}</td></tr>'
            )
        c = self.r["constraints"]
        facts = [
            self.t("summary.horizon", months=c["horizon_months"]),
            self.t("summary.acquire." + c["acquire"]),
        ]
        if c["budget"] is not None:
            facts.append(
                self.t("summary.budget", budget=fmt_money(c["budget"], self.cur, self.lang))
            )
        if c["power_kw"] is not None:
            facts.append(self.t("summary.power", kw=fmt_num(c["power_kw"], 1, self.lang)))
        if c["rack_units"] is not None:
            facts.append(self.t("summary.rack", units=c["rack_units"]))
        lead = []
        for wd in self.r["workloads"]:
            r = wd["recommendation"]
            if r is None:
                lead.append(self.t("summary.lead_none", name=wd["name"]))
                continue
            lead.append(
                self.t(
                    "summary.lead",
                    name=wd["name"],
                    count=r["count"],
                    gpu=r["gpu_name"],
                    mode=tr(self.lang, "mode." + r["mode"]),
                    cost=fmt_money(r["cost"], self.cur, self.lang),
                    months=c["horizon_months"],
                )
            )
        head = "".join(
            f"<th>{self.t(k)}</th>"
            for k in (
                "col.workload",
                "col.task",
                "col.model",
                "col.config",
                "col.bound",
                "col.cost",
            )
        )
        return (
            f'<section class="ar-sec" id="ar-summary"><h2>{self.t("sec.summary")}</h2>'
            + "".join(f'<p class="ar-key">{x}</p>' for x in lead)
            + f"<p>{' · '.join(facts)}</p>"
            + f'<table class="ar-t" data-table="summary"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
        )

    def audit(self) -> str:
        out = [f'<section class="ar-sec" id="ar-audit"><h2>{self.t("sec.audit")}</h2>']
        for i, wd in enumerate(self.r["workloads"]):
            inp = wd["inputs"]
            rows = [
                (
                    self.t("in.model"),
                    f"{e(wd['model']['display_name'])} ({e(fmt_count(wd['params'], self.lang))} {self.t('in.params')})",
                ),
                (self.t("in.task"), self.t("task." + wd["advisor_task"])),
                (self.t("in.seq"), self.n(inp["seq"])),
            ]
            if wd["advisor_task"] == "inference":
                rows.append(
                    (
                        self.t("in.users"),
                        self.n(inp["concurrent_users"])
                        + (f" / {self.n(inp['users'])}" if inp["users"] else ""),
                    )
                )
                if inp["per_user_tokens_per_s"] is not None:
                    rows.append(
                        (
                            self.t("in.target"),
                            self.t(
                                "in.target_v",
                                per=fmt_num(inp["per_user_tokens_per_s"], 1, self.lang),
                                total=fmt_num(inp["target_tokens_per_s"], 0, self.lang),
                            ),
                        )
                    )
                rows.append((self.t("in.weights"), e(inp["weights"])))
                rows.append(
                    (
                        self.t("in.hours_per_day"),
                        self.n(
                            inp["hours_per_day"] if inp["hours_per_day"] is not None else 24.0, 1
                        ),
                    )
                )
            else:
                rows.append((self.t("in.batch"), self.n(inp["batch"])))
                rows.append((self.t("in.precision"), e(inp["precision"])))
                rows.append(
                    (
                        self.t("in.data"),
                        self.t(
                            "in.data_v",
                            tokens=fmt_count(inp["dataset_tokens"], self.lang),
                            epochs=inp["epochs"],
                            total=fmt_count(inp["total_tokens"], self.lang),
                        ),
                    )
                )
                if inp["deadline_hours"] is not None:
                    rows.append((self.t("in.deadline"), self.n(inp["deadline_hours"], 1)))
                if inp["runs_per_year"] is not None:
                    rows.append((self.t("in.runs"), self.n(inp["runs_per_year"])))
            out.append(f'<div class="ar-wl" id="ar-audit-{i}"><h3>{e(wd["name"])}</h3>')
            out.append(
                f'<table class="ar-t" data-table="inputs-{i}"><tbody>'
                + "".join(f"<tr><th>{a}</th><td>{b}</td></tr>" for a, b in rows)
                + "</tbody></table>"
            )
            out.append(self.memory_table(wd, i))
            out.append("</div>")
        out.append("</section>")
        return "".join(out)

    def memory_table(self, wd, i) -> str:
        one = wd["memory_one_gpu"]
        cfg = wd["memory"]
        r = wd["recommendation"]
        head = f"<th>{self.t('mem.component')}</th><th>{self.t('mem.one_gpu')}</th>"
        if cfg is not None:
            head += f"<th>{self.t('mem.per_gpu', count=r['count'], gpu=r['gpu_name'])}</th>"
        rows = []
        for k, v in one["components"].items():
            v2 = cfg["components"].get(k, 0) if cfg else None
            if not v and not v2:
                continue
            row = f'<tr><td>{self.t("comp." + k)}</td><td class="n">{self.gib(v)}</td>'
            if cfg is not None:
                row += f'<td class="n">{self.gib(v2)}</td>'
            rows.append(row + "</tr>")

        def line(label, key):
            row = f'<tr><th>{label}</th><td class="n">{self.gib(one[key])}</td>'
            if cfg is not None:
                row += f'<td class="n">{self.gib(cfg[key])}</td>'
            return row + "</tr>"

        rows.append(line(self.t("mem.peak"), "peak_allocated_bytes"))
        rows.append(line(self.t("mem.overhead"), "overhead_bytes"))
        rows.append(line(self.t("mem.total"), "total_bytes"))
        cap = ""
        if r is not None:
            cap = self.t(
                "mem.caption",
                gpu=r["gpu_name"],
                has=fmt_gib(r["capacity_bytes"], self.lang),
                share=fmt_pct(cfg["total_bytes"] / r["capacity_bytes"], self.lang),
            )
        return (
            f'<table class="ar-t" data-table="memory-{i}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            + (f"<p>{cap}</p>" if cap else "")
        )

    def diagnosis(self) -> str:
        out = [f'<section class="ar-sec" id="ar-diagnosis"><h2>{self.t("sec.diagnosis")}</h2>']
        for i, wd in enumerate(self.r["workloads"]):
            d = wd["diagnosis"]
            out.append(f'<div class="ar-wl"><h3>{e(wd["name"])}</h3>')
            if d is None:
                out.append(f'<p class="ar-key">{self.t("diag.none")}</p></div>')
                continue
            r = wd["recommendation"]
            out.append(
                f'<p class="ar-key">{self.t("diag.lead", gpu=r["gpu_name"], bound=tr(self.lang, "bound." + d["bound"]))} {self.t("diag.why." + d["bound"])}</p>'
            )
            rows = [
                (self.t("diag.intensity"), self.n(d["intensity_flop_per_byte"], 1)),
                (self.t("diag.ridge"), self.n(d["ridge_point"], 1)),
                (self.t("diag.t_compute"), self.n(d["compute_time_s"] * 1000, 2)),
                (self.t("diag.t_memory"), self.n(d["memory_time_s"] * 1000, 2)),
                (self.t("diag.t_comm"), self.n(d["comm_time_s"] * 1000, 2)),
                (self.t("diag.tokens_per_s"), self.n(d["tokens_per_s"], 0)),
                (
                    self.t("diag.feed"),
                    self.t(
                        "diag.feed_v", mbps=fmt_num(d["data_feed_bytes_per_s"] / 1e6, 2, self.lang)
                    ),
                ),
            ]
            if "time_per_token_ms" in d:
                rows.append((self.t("diag.tpot"), self.n(d["time_per_token_ms"], 1)))
                rows.append(
                    (
                        self.t("diag.ttft", tokens=d["ttft_prompt_tokens"]),
                        self.n(d["ttft_2k_ms"], 0),
                    )
                )
            if "step_time_s" in d:
                rows.append((self.t("diag.step"), self.n(d["step_time_s"], 3)))
                rows.append((self.t("diag.mfu"), self.pct(d["mfu"])))
            if r.get("hours_per_run") is not None:
                rows.append((self.t("diag.hours"), self.n(r["hours_per_run"], 1)))
            out.append(
                f'<table class="ar-t" data-table="diagnosis-{i}"><tbody>'
                + "".join(f'<tr><th>{a}</th><td class="n">{b}</td></tr>' for a, b in rows)
                + "</tbody></table>"
            )
            s = wd.get("serving")
            if s:
                out.append(
                    f"<p>{self.t('diag.serving', seqs=s['max_concurrent_sequences'], tokens=fmt_num(s['kv_cache_tokens'], 0, self.lang), users=wd['inputs']['concurrent_users'], tp=r['tensor_parallel'])}</p>"
                )
            out.append("</div>")
        out.append("</section>")
        return "".join(out)

    def rec_row(self, label, r) -> str:
        if r is None:
            return f'<tr><th>{label}</th><td colspan="6">—</td></tr>'
        speed = (
            fmt_num(r["hours_per_run"], 1, self.lang) + "\u00a0h"
            if r.get("hours_per_run") is not None
            else fmt_num(r["tokens_per_s"], 0, self.lang) + "\u00a0tok/s"
        )
        return (
            f"<tr><th>{label}</th><td>{e(r['gpu_name'])}</td><td>{self.t('tier.' + r['tier'])}</td>"
            f'<td class="n">{self.n(r["count"])}</td><td>{self.sharding(r)}</td>'
            f'<td class="n">{self.gib(r["memory_per_gpu_bytes"])}\u00a0/ {self.gib(r["capacity_bytes"])}</td>'
            f'<td class="n">{e(speed)}</td><td class="n">{self.money(r["cost"])} ({self.t("mode." + r["mode"])})</td></tr>'
        )

    def recommendation(self) -> str:
        out = [
            f'<section class="ar-sec" id="ar-recommendation"><h2>{self.t("sec.recommendation")}</h2>'
        ]
        head = "".join(
            f"<th>{self.t(k)}</th>"
            for k in (
                "col.rank",
                "col.gpu",
                "col.tier",
                "col.count",
                "col.sharding",
                "col.memory",
                "col.speed",
                "col.cost",
            )
        )
        for i, wd in enumerate(self.r["workloads"]):
            out.append(f'<div class="ar-wl"><h3>{e(wd["name"])}</h3>')
            out.append(f"<p>{self.t('rec.counted', n=wd['candidates'], ok=wd['passing'])}</p>")
            out.append(
                f'<table class="ar-t" data-table="recommendation-{i}"><thead><tr>{head}</tr></thead><tbody>'
                + self.rec_row(self.t("rec.best"), wd["recommendation"])
                + self.rec_row(self.t("rec.runner"), wd["runner_up"])
                + "</tbody></table>"
            )
            if wd["rejected"]:
                rows = "".join(
                    f"<tr><td>{e(x['gpu_name'])} × {self.n(x['count'])}</td><td>{self.reason(x['reasons'][0]) if x['reasons'] else '—'}</td></tr>"
                    for x in wd["rejected"]
                )
                out.append(
                    f'<table class="ar-t" data-table="rejected-{i}"><thead><tr><th>{self.t("rec.rejected")}</th><th>{self.t("rec.reason")}</th></tr></thead><tbody>{rows}</tbody></table>'
                )
            out.append("</div>")
        out.append("</section>")
        return "".join(out)

    def chart(self, tco: dict) -> str:
        own, cloud = tco["cumulative_own"], tco["cumulative_cloud"]
        months = len(own) - 1
        W, H, L, B, T, Rm = 640, 300, 78, 40, 16, 16
        top = max(max(own), max(cloud)) or 1.0
        mag = 10 ** math.floor(math.log10(top))
        step = next(
            s * mag for s in (0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10) if top / (s * mag) <= 6
        )
        ymax = math.ceil(top / step) * step

        def x(m):
            return L + (W - L - Rm) * m / months

        def y(v):
            return T + (H - T - B) * (1 - v / ymax)

        def pts(series):
            return " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in enumerate(series))

        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" aria-label="{self.t("cost.chart")}" font-family="system-ui,sans-serif" font-size="11">'
        ]
        k = 0
        while k * step <= ymax + 1e-9:
            yy = y(k * step)
            parts.append(
                f'<line x1="{L}" y1="{yy:.1f}" x2="{W - Rm}" y2="{yy:.1f}" stroke="#e3e5ea"/>'
            )
            parts.append(
                f'<text x="{L - 6}" y="{yy + 4:.1f}" text-anchor="end" fill="#5b6272">{self.money(k * step)}</text>'
            )
            k += 1
        tick = 6 if months <= 36 else 12
        for m in range(0, months + 1, tick):
            parts.append(
                f'<text x="{x(m):.1f}" y="{H - B + 16}" text-anchor="middle" fill="#5b6272">{m}</text>'
            )
        parts.append(
            f'<text x="{(L + W - Rm) / 2:.0f}" y="{H - 6}" text-anchor="middle" fill="#5b6272">{self.t("cost.months")}</text>'
        )
        parts.append(f'<line x1="{L}" y1="{H - B}" x2="{W - Rm}" y2="{H - B}" stroke="#5b6272"/>')
        parts.append(
            f'<polyline fill="none" stroke="#3949ab" stroke-width="2.5" points="{pts(own)}"/>'
        )
        parts.append(
            f'<polyline fill="none" stroke="#ef6c00" stroke-width="2.5" stroke-dasharray="6 4" points="{pts(cloud)}"/>'
        )
        be = tco["break_even_month"]
        if be is not None:
            parts.append(f'<circle cx="{x(be):.1f}" cy="{y(own[be]):.1f}" r="5" fill="#2e7d32"/>')
            right = x(be) > L + (W - L - Rm) * 0.6
            anchor, dx = ("end", -8) if right else ("start", 8)
            parts.append(
                f'<text x="{x(be) + dx:.1f}" y="{y(own[be]) - 10:.1f}" text-anchor="{anchor}" fill="#2e7d32">{self.t("cost.be_label", month=be)}</text>'
            )
        parts.append(
            f'<rect x="{L}" y="{H - 10}" width="12" height="4" fill="#3949ab"/><text x="{L + 18}" y="{H - 5}">{self.t("cost.own")}</text>'
        )
        parts.append(
            f'<rect x="{L + 80}" y="{H - 10}" width="12" height="4" fill="#ef6c00"/><text x="{L + 98}" y="{H - 5}">{self.t("cost.rent")}</text>'
        )
        parts.append("</svg>")
        return "".join(parts)

    def cost(self) -> str:
        out = [f'<section class="ar-sec" id="ar-cost"><h2>{self.t("sec.cost")}</h2>']
        for i, wd in enumerate(self.r["workloads"]):
            out.append(f'<div class="ar-wl"><h3>{e(wd["name"])}</h3>')
            c = wd["cost"]
            if c is None:
                out.append(f"<p>{self.t('cost.none')}</p></div>")
                continue
            if c["tco"] is None:
                lacking = "own" if c["own"] is None else "rent"
                out.append(f"<p>{self.t('cost.only.' + lacking)}</p></div>")
                continue
            t, o, own, rent = c["tco"], c["offer"], c["own"], c["rent"]
            opts = (
                f"<tr><th>{self.t('cost.own')}</th><td>{self.n(own['count'])} × {e(own['gpu_name'])}</td>"
                f'<td>{self.sharding(own)}</td><td class="n">{self.pct(c["utilisation"])}</td></tr>'
                f"<tr><th>{self.t('cost.rent')}</th><td>{self.n(rent['count'])} × {e(rent['gpu_name'])}</td>"
                f'<td>{self.sharding(rent)}</td><td class="n">{self.pct(c["utilisation_rent"])}</td></tr>'
            )
            out.append(
                f'<table class="ar-t" data-table="options-{i}"><thead><tr><th>{self.t("cost.option")}</th>'
                f"<th>{self.t('col.config')}</th><th>{self.t('col.sharding')}</th><th>{self.t('cost.busy')}</th></tr></thead>"
                f"<tbody>{opts}</tbody></table>"
            )
            be_u = (
                self.pct(t["break_even_utilisation"])
                if t["break_even_utilisation"] is not None
                else self.t("cost.never")
            )
            be_m = (
                self.n(t["break_even_month"])
                if t["break_even_month"] is not None
                else self.t("cost.not_within", months=c["horizon_months"])
            )
            verdict = "own" if t["savings"] > 0 else "rent"
            out.append(
                '<p class="ar-key">'
                + self.t(
                    "cost.verdict." + verdict,
                    own=f"{own['count']} × {own['gpu_name']}",
                    rent=f"{rent['count']} × {rent['gpu_name']}",
                    months=c["horizon_months"],
                    diff=fmt_money(abs(t["savings"]), self.cur, self.lang),
                )
                + "</p>"
            )
            rows = [
                (self.t("cost.purchase"), self.money(t["purchase"])),
                (self.t("cost.power_month"), self.money(t["power_per_month"])),
                (self.t("cost.own_total", months=c["horizon_months"]), self.money(t["own_total"])),
                (
                    self.t("cost.cloud_rate"),
                    self.t(
                        "cost.cloud_rate_v",
                        price=fmt_money(o["usd_per_gpu_hour"] * wd["rate"], self.cur, self.lang, 2),
                        provider=o["provider"],
                        instance=o["instance"],
                        read=o["read"],
                        billed=c["billed_gpus"],
                    ),
                ),
                (self.t("cost.cloud_month"), self.money(t["cloud_per_month"])),
                (
                    self.t("cost.cloud_total", months=c["horizon_months"]),
                    self.money(t["cloud_total"]),
                ),
                (self.t("cost.be_util"), be_u),
                (self.t("cost.be_month"), be_m),
            ]
            out.append(
                f'<table class="ar-t" data-table="cost-{i}"><tbody>'
                + "".join(f'<tr><th>{a}</th><td class="n">{b}</td></tr>' for a, b in rows)
                + "</tbody></table>"
            )
            yrows = "".join(
                f'<tr><td>{y["year"]}</td><td class="n">{self.money(y["own"])}</td><td class="n">{self.money(y["cloud"])}</td></tr>'
                for y in t["yearly"]
            )
            out.append(
                f'<table class="ar-t" data-table="yearly-{i}"><thead><tr><th>{self.t("cost.year")}</th><th>{self.t("cost.own")}</th><th>{self.t("cost.rent")}</th></tr></thead><tbody>{yrows}</tbody></table>'
            )
            out.append(
                f"<figure>{self.chart(t)}<figcaption>{self.t('cost.caption', pue=fmt_num(t['pue'], 2, self.lang), kwh=fmt_num(t['electricity_usd_per_kwh'], 3, self.lang))}</figcaption></figure>"
            )
            out.append("</div>")
        out.append("</section>")
        return "".join(out)

    def risks(self) -> str:
        items = [
            self.t(
                "risk.estimate",
                mfu=fmt_pct(self.r["efficiency_values"]["train_mfu"], self.lang),
                bw=fmt_pct(self.r["efficiency_values"]["decode_bandwidth"], self.lang),
            )
        ]
        items.append(self.t("risk.prices"))
        if len(self.r["workloads"]) > 1 and self.r["constraints"]["budget"] is not None:
            items.append(self.t("risk.budget_each"))
        for wd in self.r["workloads"]:
            for x in wd["risks"]:
                items.append(f"<strong>{e(wd['name'])}:</strong> {self.item(x)}")
        assume = [
            self.t(
                "assume.efficiency",
                name=k,
                value=fmt_pct(self.r["efficiency_values"][k], self.lang),
                why=v,
            )
            for k, v in self.r["efficiency"].items()
        ]
        assume.append(self.t("assume.memory"))
        assume.append(self.t("assume.power"))
        return (
            f'<section class="ar-sec" id="ar-risks"><h2>{self.t("sec.risks")}</h2><ul>'
            + "".join(f"<li>{x}</li>" for x in items)
            + f"</ul><h3>{self.t('sec.assumptions')}</h3><ul>"
            + "".join(f"<li>{x}</li>" for x in assume)
            + "</ul></section>"
        )

    def sources(self) -> str:
        rows = "".join(
            f'<tr><td>{e(_what(s["what"]))}</td><td><a href="{e(s["url"])}">{e(s["url"])}</a></td><td class="d">{e(s["read"])}</td></tr>'
            for s in self.r["sources"]
        )
        return (
            f'<section class="ar-sec" id="ar-sources"><h2>{self.t("sec.sources")}</h2><p>{self.t("src.lead")}</p>'
            f'<table class="ar-t ar-src" data-table="sources"><thead><tr><th>{self.t("src.what")}</th><th>{self.t("src.url")}</th><th>{self.t("src.read")}</th></tr></thead><tbody>{rows}</tbody></table></section>'
        )

    def next_steps(self) -> str:
        out = [f'<section class="ar-sec" id="ar-next"><h2>{self.t("sec.next")}</h2>']
        for wd in self.r["workloads"]:
            out.append(
                f"<h3>{e(wd['name'])}</h3><ol>"
                + "".join(f"<li>{self.item(x)}</li>" for x in wd["next_steps"])
                + "</ol>"
            )
        out.append("</section>")
        return "".join(out)

    def footer(self) -> str:
        pub = self.pub
        bits = [e(pub.name)]
        if pub.contact:
            bits.append(e(pub.contact))
        if pub.url:
            bits.append(f'<a href="{e(pub.url)}">{e(pub.url)}</a>')
        return f'<footer class="ar-foot"><p>{" · ".join(bits)}</p><p>{self.t("foot.note")}</p></footer>'

    def body(self) -> str:
        return (
            f'<div class="ar" lang="{e(self.lang)}" data-report="{e(self.r["slug"])}">'
            + self.header()
            + self.summary()
            + self.audit()
            + self.diagnosis()
            + self.recommendation()
            + self.cost()
            + self.risks()
            + self.sources()
            + self.next_steps()
            + self.footer()
            + "</div>"
        )


def render_fragment(report: dict, publisher: Publisher) -> str:
    """The report as one HTML block (scoped CSS inside, no blank lines: safe in Markdown)."""
    body = _R(report, publisher).body()
    return f'<div class="ar-wrap"><style>{_css()}</style>{body}</div>'


def render_html(report: dict, publisher: Publisher) -> str:
    """A self-contained HTML document: inline CSS, inline logo and chart; no external request."""
    r = _R(report, publisher)
    title = tr(report["lang"], "title", org=report["organisation"])
    return (
        f'<!DOCTYPE html>\n<html lang="{e(report["lang"])}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>\nbody{{margin:1.5rem}}\n@page{{size:A4;margin:16mm 14mm}}\n{_css()}\n</style>\n</head>\n<body>\n"
        + r.body()
        + "\n</body>\n</html>\n"
    )


def report_from_text(
    profile_yaml: str,
    catalog,
    *,
    lang: str | None = None,
    publisher: Publisher,
    standalone: bool = True,
) -> str:
    """Profile YAML text -> HTML (what the CLI and the browser both call)."""
    profile = parse_profile(profile_yaml, catalog)
    data = build_report(profile, catalog, lang=lang)
    return render_html(data, publisher) if standalone else render_fragment(data, publisher)


def web_report(request: dict, catalog) -> dict:
    """JSON in, JSON out, for the browser worker (and tests): ``{"profile": YAML text,
    "lang": "az"|"en"|None, "publisher": {name, contact, url, logo_data_uri}}`` ->
    ``{"html": the self-contained file, "fragment": the block shown in the page,
    "filename": "<slug>.<lang>.html"}``, or ``{"error": AdvisorError.to_dict()}``."""
    try:
        if not isinstance(request, dict) or not isinstance(request.get("profile"), str):
            raise AdvisorError("field.required", "profile: expected YAML text", field="profile")
        publisher = publisher_from_dict(request.get("publisher") or {})
        profile = parse_profile(request["profile"], catalog)
        data = build_report(profile, catalog, lang=request.get("lang") or None)
        return {
            "html": render_html(data, publisher),
            "fragment": render_fragment(data, publisher),
            "filename": f"{data['slug']}.{data['lang']}.html",
        }
    except AdvisorError as exc:
        return {"error": exc.to_dict()}
