"""What a client advisory report says: a profile (advisor.advice.profile) and the catalog become one
plain-JSON structure (numbers unformatted, texts as message keys; every number is advisor's own).
advisor.report.sections turns it into the texts of each section and advisor.report.render into
HTML.

What each section is computed from
- audit: per-GPU memory of the recommended configuration (advisor.memory.estimate.training_memory /
  inference_memory, the setups advisor.advice.recommend judged), and on one GPU as a reference;
- diagnosis: the roofline bound of the recommended configuration at the kernel-level model's
  ceilings (advisor.perf.timing.decode_roofline, advisor.perf.training.step_roofline; Williams,
  Waterman & Patterson 2009, https://doi.org/10.1145/1498765.1498785) plus the data
  feed: tokens/s x 8 bytes per token id (torch.long, https://pytorch.org/docs/stable/tensors.html);
- recommendation: advisor.advice.recommend.recommend (rank 1 = recommended, the best candidate on
  another accelerator = runner-up), after the profile's on-premises power limit (sum of the
  cards' TDP) is applied to options that would be owned;
- rent vs buy: advisor.money.cost.tco for the recommended accelerator and count, the cheapest
  on-demand catalog offer against the catalog price, at the profile's utilisation;
- sources: the URL and date read of every catalog figure used (model config, accelerator
  figures, cloud offer, exchange rate) and the stated efficiency assumptions.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..advice import recommend as rec
from ..advice.profile import Profile, Workload
from ..core.errors import AdvisorError
from ..data.prices import is_community_cloud  # noqa: F401 (re-exported)
from ..memory import estimate as mem
from ..money import cost
from ..perf import serving_fit as sfit
from ..perf import timing, training
from .i18n import STRINGS

# Serving plans go up to one GB200/GB300 NVL72 rack (72 GPUs, bought whole: issue 34), which
# also admits up to nine 8-GPU servers (replicas beyond one node).
SERVING_MAX_GPUS = 72
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
    from ..arch.models import from_hf_config

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
    """The advisor.advice.recommend workload a profile workload stands for.

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
        # one serving model (advisor.perf.serving_fit): all the concurrent users in flight over the
        # replicas, each at the per-user speed; servers beyond one node as replicas
        users = w.concurrent_users or 1
        kw["batch"] = users
        if w.weights == "auto":
            kw["formats"], kw["kv_formats"] = sfit.SEARCH_FORMATS, sfit.SEARCH_KV
        else:
            kw["weights"] = w.weights
        kw["max_gpus"] = SERVING_MAX_GPUS
        kw["utilisation"] = (w.hours_per_day if w.hours_per_day is not None else 24.0) / 24.0
        kw["target_tokens_per_s_per_user"] = w.per_user_tokens_per_s
    else:
        kw["batch"] = w.batch
        kw["dataset_tokens"] = w.total_tokens * runs_over_horizon(w, c.horizon_months)
    return rec.Workload(**kw)


def _gpu(catalog, gpu_id: str):
    return catalog.gpu(gpu_id)


def _post_filter(recs, catalog, profile: Profile, w: Workload):
    """The profile's limits advisor.advice.recommend does not know: the deadline of ONE training run
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
    """The memory setup advisor.advice.recommend judged for recommendation `r`."""
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


def _src(url, read, what, kind: str | None = None) -> dict:
    """A source line of the report, with its kind (advisor.data.source_kind: vendor, official,
    paper, measurement, or secondary)."""
    from ..data.source_kind import source_kind

    return {"url": url, "read": read, "what": what, "kind": source_kind(url, kind)}


def _gpu_sources(g, precision_key: str) -> list[dict]:
    out = []
    fields = ["memory_gib", "memory_bandwidth_gb_per_s", f"peak_tflops.{precision_key}", "tdp_w"]
    fields.append("interconnect_gb_per_s")
    if g.price_usd:
        fields.append("price_usd")
    for f in fields:
        try:
            s = g.source(f)
        except AdvisorError:
            s = None
        if s is not None:
            out.append(_src(s.url, s.read, f"{g.name}: {f}"))
    return out


def serving_fit_of(r, w: rec.Workload, gpu):
    """The advisor.perf.serving_fit layout advisor.advice.recommend judged for recommendation `r` (the one
    computation every serving figure of a report comes from)."""
    i, o = sfit.split_context(w.seq)
    return sfit.fit(
        w.model,
        gpu,
        gpus=r.count,
        concurrency=w.batch,
        input_tokens=i,
        output_tokens=o,
        weights=r.weights or w.inference_weights,
        kv_dtype=r.kv_dtype or w.kv_dtype,
        tensor_parallel=r.tensor_parallel,
    )


def serving_memory(f) -> dict:
    """A serving layout's memory per GPU in the audit's shape (MemoryEstimate.to_dict)."""
    used = f.total_bytes - f.headroom_bytes
    return {
        "components": {
            "weights": f.weights_bytes,
            "kv_cache": f.kv_bytes,
            "workspace": f.workspace_bytes,
        },
        "overhead": {"engine_headroom": f.headroom_bytes},
        "peak_allocated_bytes": used,
        "overhead_bytes": f.headroom_bytes,
        "total_bytes": f.total_bytes,
        "assumptions": [],
    }


def _diagnosis(r, w: rec.Workload, setup, est, gpu, fit=None) -> dict:
    if w.task == "inference":
        p = fit.point
        rl = timing.decode_roofline(
            w.model,
            gpu,
            batch=fit.per_replica,
            context=w.seq,
            weights=fit.weights,
            kv_dtype=fit.kv_dtype,
            tensor_parallel=fit.tensor_parallel,
        )
        tokens_per_s = p.tokens_per_s
        extra = {
            "time_per_token_ms": p.tpot_s * 1000,
            "tokens_per_s_per_user": p.tokens_per_s_per_user,
            "ttft_2k_ms": p.ttft_s * 1000,
            "ttft_prompt_tokens": fit.input_tokens,
        }
    else:
        st = training.setup_step(setup, gpu)
        rl = training.step_roofline(st, setup, gpu, est)
        tokens_per_s = st.tokens_per_s
        extra = {"step_time_s": st.step_time_s, "mfu": st.mfu}
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
    if not gpu.price_usd:
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
    """Rent vs buy: the best configuration to OWN (advisor.advice.recommend with acquire=own) against
    the best to RENT (acquire=rent), each passing every constraint; when the recommended one
    can be both, it is used for both. advisor.money.cost.tco prices the owned cards; the rented
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
    rent_hours = horizon_h * util_rent
    outlasts = any(n.key == "recommend.outlasts_horizon" for n in rent_r.notes)
    if rent_r.hours is not None and outlasts:  # outlasts the horizon: rented in full
        rent_hours = max(rent_hours, rent_r.hours)
    rent_usd = cost.offer_price(offer, "on_demand") * billed * rent_hours
    eq_price = rent_usd / (own_r.count * horizon_h * util_own)
    plan = cost.owning_plan(
        gpu,
        own_r.count,
        electricity_usd_per_kwh=aw.electricity_usd_per_kwh,
        horizon_months=aw.horizon_months,
        systems=getattr(catalog, "systems", ()),
        figures=getattr(catalog, "owning", None),
        pue=aw.pue,
        extra_server_usd=aw.server_usd_per_gpu * own_r.count,
    )
    server_usd = plan.own.server_usd
    res = cost.tco(
        plan.own,
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
        # every amount in the report's currency (res.rate: 1 USD in it)
        "cards": plan.item("cards").usd * res.rate,
        "server": server_usd * res.rate,
        "server_priced": plan.server_priced,
        "server_assumed": plan.server_assumed,
        # a rack or a desktop box priced whole (issue 34): its kind, cooling and whole power,
        # carried on the one owning plan (advisor.money.cost.OwningPlan)
        "system_kind": plan.system_kind,
        "system_priced_whole": plan.system_priced_whole,
        "cooling": plan.cooling,
        "system_power_w": plan.system_power_w,
        "system": plan.system_name,
        "system_id": plan.system_id,
        "nodes": plan.nodes,
        "rack_units": plan.rack_units,
        "host_power_w": plan.own.host_power_w,
        "network": plan.own.network_usd * res.rate,
        "hosting_per_month": plan.own.hosting_usd_per_month * res.rate,
        "support_per_year": plan.own.support_usd_per_year * res.rate,
        "items": [_item_in(i.to_dict(), res.rate) for i in plan.items],
        "it_kw": plan.it_kw,
        "resale": res.resale_value,
        "resale_fraction": plan.resale_fraction,
        "resale_source": plan.resale_source,
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


def _item_in(item: dict, rate: float) -> dict:
    """An owning item (advisor.money.cost.OwningItem) with its amounts in the report's currency."""
    out = dict(item)
    for k in ("usd", "usd_per_month", "usd_per_year"):
        if out.get(k) is not None:
            out[k] = out[k] * rate
    return out


def _spend(r) -> float | None:
    """What the budget is checked against (advisor.advice.recommend step 4): the purchase when owned,
    the run's bill (training) or the horizon's bill (serving) when rented."""
    if r is None or r.mode is None:
        return None
    if r.mode == "own":
        return r.purchase
    return r.run_cost if r.run_cost is not None else r.rent_cost


def constraint_checks(r, w: Workload, profile: Profile, runs: int, catalog) -> list[dict]:
    """Each of the profile's constraints against a candidate `r` (a Recommendation or None):
    {key, target, achieved, met}; achieved None when `r` gives no figure."""
    c = profile.constraints
    out = []

    def add(key, target, achieved, met):
        out.append({"key": key, "target": target, "achieved": achieved, "met": bool(met)})

    if r is not None and r.memory_per_gpu_bytes is not None:
        add(
            "memory",
            r.capacity_bytes,
            r.memory_per_gpu_bytes,
            r.memory_per_gpu_bytes <= r.capacity_bytes,
        )
    if w.task == "serving" and w.per_user_tokens_per_s is not None:
        got = None if r is None else r.tokens_per_s_per_user
        add(
            "per_user",
            w.per_user_tokens_per_s,
            got,
            got is not None and got >= w.per_user_tokens_per_s,
        )
    if w.task != "serving" and w.deadline_hours is not None:
        got = None if r is None or r.hours is None else r.hours / runs
        add("deadline", w.deadline_hours, got, got is not None and got <= w.deadline_hours)
    if c.budget is not None:
        got = _spend(r)
        add("budget", c.budget, got, got is not None and got <= c.budget)
    if c.power_kw is not None and r is not None and r.mode == "own":
        kw = r.count * float(_gpu(catalog, r.gpu_id).tdp_w or 0) / 1000
        add("power", c.power_kw, kw, kw <= c.power_kw)
    return out


def _nearest(aw, w: Workload, profile: Profile, catalog, runs: int) -> dict | None:
    """When no candidate meets every constraint: the plan that meets all but the fewest,
    found by dropping the budget, then the speed target, then both (advisor.advice.recommend with
    the rest), with its checks (the missed ones shown as missed)."""
    tries = (
        {"budget": None},
        {"target_tokens_per_s_per_user": None, "target_tokens_per_s": None},
        {"budget": None, "target_tokens_per_s_per_user": None, "target_tokens_per_s": None},
    )
    for drop in tries:
        relaxed = replace(aw, **drop)
        if relaxed == aw:
            continue
        ranked = _post_filter(rec.recommend(relaxed, catalog), catalog, profile, w)
        best = next((x for x in ranked if x.ok), None)
        if best is None and w.deadline_hours is not None:
            continue
        if best is not None:
            return {
                "recommendation": _rec_dict(best, runs),
                "checks": constraint_checks(best, w, profile, runs, catalog),
            }
    return None


def regulated_flags(wd: dict) -> list[dict]:
    """Warnings for regulated data (a bank's, a hospital's) that belong in the report's body:
    consumer cards (no ECC; NVIDIA's GeForce driver licence excludes data-centre deployment)
    and community clouds (hosts run by individuals: data residency and who can reach the
    machine are not the provider's to promise)."""
    out = []
    for key in ("recommendation", "runner_up"):
        r = wd.get(key)
        if r and r.get("tier") == "consumer":
            out.append({"key": "regulated.consumer", "params": {"gpu": r["gpu_name"]}})
            break
    names = []
    r = wd.get("recommendation")
    if r and r.get("mode") == "rent":
        names.append(r.get("offer"))
    cost_d = wd.get("cost") or {}
    if cost_d.get("offer"):
        names.append(cost_d["offer"]["instance"])
    if any(is_community_cloud(n) for n in names):
        out.append({"key": "regulated.community", "params": {}})
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


def build_report(
    profile: Profile, catalog, *, lang: str | None = None, today: str | None = None
) -> dict:
    """The whole report as plain JSON-ready data (numbers unformatted, texts as keys). Its date
    is the profile's, else `today` (ISO), else the date it is made on: a report always carries
    one."""
    import datetime

    c = profile.constraints
    lang = lang or c.language
    if not isinstance(lang, str) or lang not in STRINGS:
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
                "target_tokens_per_s": (
                    w.per_user_tokens_per_s * (w.concurrent_users or 1)
                    if aw.task == "inference" and w.per_user_tokens_per_s is not None
                    else aw.target_tokens_per_s
                ),
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
            "serving_curve": None,  # serving: the throughput-latency curve (advisor.perf.serving)
            "cluster": None,  # training past one node (advisor.perf.cluster)
        }
        # memory on one GPU (the audit's reference) and in the recommended configuration
        if aw.task != "inference":
            wd["memory_one_gpu"] = _estimate(rec._training_setup(aw, 1, "ddp", 1)).to_dict()
        elif best is None and catalog.gpus:
            # what one GPU would need (independent of the card: weights, KV, workspace)
            i, o = sfit.split_context(aw.seq)
            wd["memory_one_gpu"] = serving_memory(
                sfit.fit(
                    aw.model,
                    max(catalog.gpus, key=lambda g: (g.memory_bytes, g.id)),
                    gpus=1,
                    concurrency=aw.batch,
                    input_tokens=i,
                    output_tokens=o,
                    weights=aw.inference_weights,
                    kv_dtype=aw.kv_dtype,
                    tensor_parallel=1,
                    speed=False,
                )
            )
        if best is not None:
            gpu = _gpu(catalog, best.gpu_id)
            if aw.task == "inference":
                fit = serving_fit_of(best, aw, gpu)
                one = sfit.fit(
                    aw.model,
                    gpu,
                    gpus=1,
                    concurrency=aw.batch,
                    input_tokens=fit.input_tokens,
                    output_tokens=fit.output_tokens,
                    weights=fit.weights,
                    kv_dtype=fit.kv_dtype,
                    tensor_parallel=1,
                    speed=False,
                )
                wd["memory_one_gpu"] = serving_memory(one)
                wd["memory"] = serving_memory(fit)
                wd["serving_fit"] = fit.to_dict()
                setup = est = None
            else:
                fit = None
                setup = _setup_for(best, aw)
                est = _estimate(setup)
                wd["memory"] = est.to_dict()
            wd["diagnosis"] = _diagnosis(best, aw, setup, est, gpu, fit)
            prec = (aw.quant or "bf16") if aw.task == "inference" else aw.train_precision
            sources.extend(_gpu_sources(gpu, timing.PEAK_KEY.get(prec, "bf16")))
            if runner is not None:
                sources.extend(
                    _gpu_sources(_gpu(catalog, runner.gpu_id), timing.PEAK_KEY.get(prec, "bf16"))
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
                        _gpu_sources(_gpu(catalog, x["gpu_id"]), timing.PEAK_KEY.get(prec, "bf16"))
                    )
            tco = wd["cost"]["tco"]
            if tco and tco.get("system_id"):
                sysd = next(x for x in catalog.systems if x.id == tco["system_id"])
                # sorted: the browser's catalog comes from JSON written with sorted keys
                for fld, src in sorted(sysd.sources.items()):
                    sources.append(
                        _src(src["url"], src["read"], f"{sysd.name}: {fld}", src.get("kind"))
                    )
            if tco:
                # the owning items' figures (catalog/owning), each with its kind
                for it in tco.get("items", ()):
                    src = it.get("source")
                    if (
                        src
                        and src.get("url")
                        and it.get("priced", True)
                        and it["key"] in ("network", "hosting", "software_support", "resale")
                    ):
                        sources.append(
                            _src(src["url"], src["read"], f"own_{it['key']}", src.get("kind"))
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
                    weights=fit.weights,
                    kv_dtype=fit.kv_dtype,
                    gpu_memory_utilization=sfit.GPU_MEMORY_UTILIZATION,
                    tensor_parallel=best.tensor_parallel,
                )
                wd["serving"] = cap.to_dict()
                wd["serving_curve"] = _serving_curve(spec, gpu, fit)
                _curve_costs(wd["serving_curve"], wd["recommendation"])
            elif aw.task == "train":
                wd["cluster"] = _cluster(spec, gpu, w, wd["pilot_offer"], catalog)
        else:
            wd["memory"] = None
            wd["diagnosis"] = None
            wd["cost"] = None
            if aw.task == "train" and w.total_tokens:
                # no single node does it: the cheapest plan past one node, if any
                wd["cluster"] = _cheapest_cluster(aw, w, catalog)
        # every constraint checked on the recommendation; with none that meets them all, the
        # nearest plan with what it misses
        wd["checks"] = constraint_checks(best, w, profile, runs, catalog)
        wd["nearest"] = None if best is not None else _nearest(aw, w, profile, catalog, runs)
        wd["risks"], wd["next_steps"] = _risks_and_steps(wd, w, profile)
        wd["regulated"] = regulated_flags(wd)
        workloads.append(wd)
    if c.currency != "USD" and rates is not None and hasattr(rates, "rates"):
        r = rates.rates.get(c.currency)
        if r is not None:
            sources.append(_src(r.source_url, r.read, f"USD → {c.currency}: {r.per_usd:g}"))
    if any(wd["cost"] and wd["cost"]["tco"] for wd in workloads):
        if c.electricity_usd_per_kwh is None:
            sources.append(_src(*EXTRA_SOURCES["electricity"], "electricity"))
        sources.append(_src(*EXTRA_SOURCES["pue"], f"PUE {cost.DEFAULT_PUE:g}"))
    uniq: list[dict] = []
    by_key: dict = {}
    for s in sources:
        k = (s["url"], s["read"])
        if k not in by_key:
            by_key[k] = {"url": s["url"], "read": s["read"], "what": [], "kind": s["kind"]}
            uniq.append(by_key[k])
        if s["what"] not in by_key[k]["what"]:
            by_key[k]["what"].append(s["what"])
    return {
        "lang": lang,
        "organisation": profile.organisation,
        "prepared_for": profile.prepared_for,
        "date": profile.date or today or datetime.date.today().isoformat(),
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
        "time_model": _time_model(),
    }


CLUSTER_NETWORK = "ib-ndr-400"


def _serving_curve(spec, gpu, fit) -> dict | None:
    """The throughput-latency curve of the recommended layout (advisor.perf.serving.plan: its TP,
    replicas and formats), with the operating point at the users' concurrency itself
    (`users_point`, the same figures as the diagnosis and the recommendation)."""
    from ..perf import serving

    try:
        plan = serving.plan(
            spec,
            gpu,
            input_tokens=fit.input_tokens,
            output_tokens=fit.output_tokens,
            weights=fit.weights,
            kv_dtype=fit.kv_dtype,
            tensor_parallel=fit.tensor_parallel,
            gpus=fit.gpus,
            tp_fabric=sfit.tp_fabric(gpu, fit.tensor_parallel),
        )
    except AdvisorError:
        return None
    d = plan.to_dict()
    users = fit.point.to_dict()
    pts = [p for p in d["points"] if p["concurrency"] != users["concurrency"]]
    d["points"] = sorted([*pts, users], key=lambda p: p["concurrency"])
    d["users_point"] = users
    return d


def _curve_costs(curve: dict | None, r: dict | None) -> None:
    """The interactivity curve's cost per million generated tokens at each point, rented and
    owned (advisor.money.interactivity's axes, in the report's currency): the recommendation's
    own hourly cost (advisor.advice.recommend: the billed instances' price; the owning total over
    its busy hours) spread over the point's tokens, i.e. its cost per million times its
    tokens/s over the point's. At the users' point the ratio is 1: the recommendation's figures
    (tests/test_report.py test_serving_sections_agree)."""
    if not curve or not r:
        return
    tps = r.get("tokens_per_s")
    for p in curve["points"]:
        ratio = tps / p["tokens_per_s"] if tps and p["tokens_per_s"] else None
        for key in ("per_million_tokens", "own_per_million_tokens"):
            v = r.get(key)
            p[key] = None if v is None or ratio is None else v * ratio


def _cluster(spec, gpu, w: Workload, pilot_offer, catalog) -> dict | None:
    """A cluster plan past one node for the run (advisor.perf.cluster.plan) on the recommended
    accelerator, for the profile's deadline of one run, at the pilot offer's price, over
    InfiniBand NDR between nodes (catalog/networks/ib-ndr-400.yaml)."""
    from ..perf import cluster

    if gpu.tier != "datacenter" or not w.total_tokens:
        return None
    try:
        net = catalog.network(CLUSTER_NETWORK) if catalog.networks else None
        p = cluster.plan(
            spec,
            gpu,
            tokens=int(w.total_tokens),
            seq=w.seq,
            deadline_hours=w.deadline_hours,
            price_usd_per_gpu_hour=(pilot_offer or {}).get("usd_per_gpu_hour"),
            network=net,
            precision="bf16",
        )
    except AdvisorError:
        return None
    if p.chosen is None or p.chosen.gpus <= 8:
        return None  # one node is enough: the recommendation table already says how fast
    return p.to_dict()


def _cheapest_cluster(aw, w: Workload, catalog) -> dict | None:
    """The cheapest cluster plan over the data-centre accelerators (advisor.advice.recommend.
    cluster_plans) for one run of the workload within its deadline, or None."""
    from dataclasses import replace as _replace

    one_run = _replace(aw, dataset_tokens=int(w.total_tokens), deadline_hours=w.deadline_hours)
    try:
        plans = rec.cluster_plans(one_run, catalog, network_id=CLUSTER_NETWORK, top=1)
    except AdvisorError:
        return None
    best = next((p for p in plans if p.chosen), None)
    return best.to_dict() if best else None


def _time_model() -> dict:
    """The time model's measured accuracy (advisor.perf.accuracy), all kinds together and by kind."""
    from ..perf import accuracy

    bands = accuracy.bands()
    n = sum(b.n for b in bands.values())
    median = max((b.median_abs_error for b in bands.values()), default=None)
    worst = max((b.worst_abs_error for b in bands.values()), default=None)
    return {
        "n": n,
        "median_abs_error": median,
        "worst_abs_error": worst,
        "bands": {k: b.to_dict() for k, b in bands.items()},
        "source": "bench_results/validation/throughput.json",
    }


def _param_count(spec) -> int:
    from ..arch.models import param_count

    return param_count(spec)
