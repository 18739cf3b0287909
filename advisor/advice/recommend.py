"""Recommendations: every catalog accelerator x count (1, 2, 4, 8) for a workload, ranked by fit,
time and cost, each rejection with its reason (message key, params, English text).

How a candidate is judged, in order (the first failure is its rejection):
1. sharding: the simplest that fits in memory (advisor.memory.estimate, per GPU, `total_bytes` against the
   card's memory): training tries DDP, then ZeRO-3 (FSDP), then tensor parallelism over all the
   GPUs (Megatron-style; heads must divide); inference tries the smallest tensor-parallel degree
   that fits and serves with count / degree replicas;
2. the card must have a dense rate for the precision (no bf16 on V100 / T4);
3. time: training hours for `dataset_tokens` (advisor.perf.training: the kernel-level step of
   the setup, `setup_step`, as `advisor time train` times it) against `deadline_hours`; serving
   tokens/s (advisor.perf.serving_fit, as the serving calculator) against the targets; the
   bound from the kernel-level roofline (advisor.perf.timing.decode_roofline,
   advisor.perf.training.step_roofline);
4. money: rent (the cheapest catalog offer) and/or own (advisor.money.cost.tco with the card's catalog
   price) must be possible and within `budget` (rent: the cost over the horizon, or of the run
   for training; own: the purchase).
Ranking: candidates that pass first, by cost over the horizon (rounded to a whole currency unit),
then time, then accelerator id and count; rejected ones after them by id and count
(deterministic).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields

from ..arch.models import ModelSpec
from ..core import limits, vocab
from ..core.errors import AdvisorError, check_choice, check_int, check_positive
from ..core.units import GIB
from ..data import support, systems
from ..data.hardware import TIERS
from ..memory import estimate as mem
from ..money import cost
from ..perf import efficiency as perf_eff
from ..perf import serving_fit as sfit
from ..perf import timing, training

TASKS = vocab.TASKS
ACQUIRE = vocab.ACQUIRE
COUNTS = (1, 2, 4, 8)
# Serving scales past one server by replicas (advisor.perf.serving_fit): whole 8-GPU nodes beyond 8,
# and 72, a rack-scale NVLink domain (GB200 / GB300 NVL72, catalog/systems: bought as one rack).
SERVING_NODE_COUNTS = (16, 24, 32, 48, 64, 72)
# US average retail electricity price to commercial customers, 2023: 12.7 cents/kWh (U.S. EIA,
# Electric Power Monthly, Table 5.3); used when the workload gives none.
DEFAULT_ELECTRICITY_USD_PER_KWH = 0.127


@dataclass(frozen=True)
class Workload:
    """What the reader wants to run. Money in `currency` (budget) and USD (server, electricity).

    `batch` is training's micro-batch per data-parallel rank, and for inference the requests in
    flight in total (any number; advisor.perf.serving_fit spreads them over the replicas); `seq` the
    context length (inference: input + output, split by serving_fit.split_context).
    `formats` (inference): the weight formats to search, in order of preference (empty: the
    one `weights` names); `target_tokens_per_s_per_user`: the speed each user must see. `utilisation` is the busy share
    of the horizon's hours; None: a training run's own hours over the horizon, or 1.0 for serving.
    """

    model: ModelSpec
    task: str = "inference"
    batch: int = 1
    seq: int = 2048
    precision: str | None = None  # training precision; None: amp-bf16 (qlora: bf16)
    # QLoRA base format (vocab.QLORA_BASE_FORMATS; None: nf4). For task "inference" it is still
    # read as the weight format when `weights` is unset (its old, second meaning).
    quant: str | None = None
    kv_dtype: str = "bf16"
    optimizer: str = "adamw"
    checkpointing: str = "default"  # vocab.CHECKPOINTING_CHOICES; memory.default_checkpointing
    lora_rank: int = 16
    target_tokens_per_s: float | None = None
    deadline_hours: float | None = None
    dataset_tokens: int | None = None
    budget: float | None = None
    horizon_months: int = 36
    acquire: str = "either"
    max_gpus: int = 8
    utilisation: float | None = None
    pricing: str = "on_demand"
    currency: str = "USD"
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    server_usd_per_gpu: float = 0.0
    pue: float = cost.DEFAULT_PUE
    tiers: tuple[str, ...] = ()  # empty: all tiers
    weights: str | None = None  # inference weight format (vocab.WEIGHT_FORMATS; None: bf16)
    formats: tuple[str, ...] = ()  # inference: weight formats searched (empty: `weights`)
    kv_formats: tuple[str, ...] = ()  # inference: KV formats searched (empty: `kv_dtype`)
    target_tokens_per_s_per_user: float | None = None

    def validated(self) -> Workload:
        if not isinstance(self.model, ModelSpec):
            raise AdvisorError("field.model", "model: expected a model", field="model")
        check_choice("task", self.task, TASKS)
        # Names are checked here, once, so that a typo is one named error, not "0 fit" with
        # the same rejection on every row.
        if self.precision is not None:
            check_choice("precision", self.precision, mem.PRECISIONS)
        if self.quant is not None:
            check_choice("quant", self.quant, (*mem.WEIGHT_FORMATS, *mem.QUANT))
        if self.weights is not None:
            check_choice("weights", self.weights, vocab.WEIGHT_FORMATS)
        check_choice("kv_dtype", self.kv_dtype, mem.KV_DTYPES)
        if not isinstance(self.formats, tuple):
            raise AdvisorError("field.not_list", "formats: expected a list", field="formats")
        for f in self.formats:
            check_choice("weights", f, vocab.WEIGHT_FORMATS)
        if not isinstance(self.kv_formats, tuple):
            raise AdvisorError("field.not_list", "kv_formats: expected a list", field="kv_dtype")
        for f in self.kv_formats:
            check_choice("kv_dtype", f, mem.KV_DTYPES)
        check_choice("optimizer", self.optimizer, mem.OPTIMIZERS)
        check_choice("checkpointing", self.checkpointing, vocab.CHECKPOINTING_CHOICES)
        if not isinstance(self.tiers, tuple):
            raise AdvisorError("field.not_list", "tiers: expected a list of tiers", field="tiers")
        for t in self.tiers:
            check_choice("tier", t, TIERS)
        check_int("batch", self.batch, maximum=1_000_000)
        check_int("seq", self.seq, maximum=16_777_216)
        check_int("lora_rank", self.lora_rank, maximum=65_536)
        for name, bounds in (
            ("target_tokens_per_s", limits.TOKENS_PER_S),
            ("target_tokens_per_s_per_user", limits.TOKENS_PER_S),
            ("deadline_hours", limits.HOURS),
            ("budget", limits.BUDGET),
        ):
            v = getattr(self, name)
            if v is not None:
                limits.check_range(name, v, bounds, exclusive_low=True)
        if self.dataset_tokens is not None:
            check_int("dataset_tokens", self.dataset_tokens, maximum=limits.TOKENS[1])
        check_int("horizon_months", self.horizon_months, maximum=600)
        check_choice("acquire", self.acquire, ACQUIRE)
        check_int("max_gpus", self.max_gpus, maximum=1024)
        if self.utilisation is not None:
            check_positive("utilisation", self.utilisation, maximum=1.0)
        check_choice("pricing", self.pricing, cost.PRICINGS)
        check_choice("currency", self.currency, cost.CURRENCIES)
        limits.check_range(
            "electricity_usd_per_kwh", self.electricity_usd_per_kwh, limits.USD_PER_KWH
        )
        limits.check_range("server_usd_per_gpu", self.server_usd_per_gpu, limits.USD_PER_SERVER)
        check_positive("pue", self.pue, maximum=5.0)
        if (
            self.deadline_hours is not None
            and self.task != "inference"
            and self.dataset_tokens is None
        ):
            raise AdvisorError(
                "workload.deadline_needs_tokens",
                "deadline_hours: give dataset_tokens too, to know how long training takes",
                field="dataset_tokens",
            )
        return self

    @property
    def inference_weights(self) -> str:
        """The stored format of the served weights."""
        legacy = self.quant if self.task == "inference" else None
        return self.weights or legacy or "bf16"

    @property
    def serving_formats(self) -> tuple[str, ...]:
        """The weight formats the serving search tries (advisor.perf.serving_fit.best_fit)."""
        return self.formats or (self.inference_weights,)

    @property
    def counts(self) -> tuple[int, ...]:
        """GPU counts judged: 1, 2, 4, 8, and for serving whole nodes of 8 beyond and a rack
        of 72."""
        extra = SERVING_NODE_COUNTS if self.task == "inference" else ()
        return tuple(c for c in (*COUNTS, *extra) if c <= self.max_gpus)

    @property
    def qlora_base(self) -> str:
        """The quantised base of a QLoRA fine-tune."""
        return (self.quant if self.task == "qlora" else None) or "nf4"

    @property
    def train_precision(self) -> str:
        if self.precision:
            return self.precision
        return "bf16" if self.task == "qlora" else "amp-bf16"


@dataclass(frozen=True)
class Reason:
    """Why a candidate is rejected: a stable message key, its params, the English text."""

    key: str
    params: dict
    message: str


@dataclass(frozen=True)
class Recommendation:
    gpu_id: str
    gpu_name: str
    tier: str
    count: int
    sharding: str  # "single" | "ddp" | "zero3" | "tp2" ... | "tp2x2" (tp degree x replicas)
    tensor_parallel: int
    ok: bool
    rank: int
    memory_per_gpu_bytes: int | None
    capacity_bytes: int
    bound: str | None
    hours: float | None  # training wall hours for dataset_tokens
    tokens_per_s: float | None  # training tokens/s, or decode tokens/s (all replicas)
    mode: str | None  # "rent" | "own": the cheaper allowed
    cost: float | None  # in `currency`: the ranking figure (horizon cost)
    rent_cost: float | None
    own_cost: float | None
    run_cost: float | None  # training: the cloud bill of the run
    per_million_tokens: float | None  # inference, when rented
    offer: str | None  # "provider instance (region), read DATE"
    currency: str = "USD"
    # Serving (advisor.perf.serving_fit): the layout's formats, replicas and operating point
    weights: str | None = None
    kv_dtype: str | None = None
    replicas: int | None = None
    concurrency_per_replica: int | None = None
    tokens_per_s_per_user: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    own_per_million_tokens: float | None = None  # inference, when owned
    purchase: float | None = None  # own: what is bought (cards, server), in `currency`
    system: str | None = None  # own: the catalog/systems id the cards go into
    server_priced: bool | None = None  # own: False when that system has no public price
    # own: True when the server counted is the catalog's stated assumption (no published price)
    server_assumed: bool | None = None
    reasons: tuple[Reason, ...] = field(default=())
    # Flags on an accepted row (e.g. a training run that outlasts the horizon), same shape
    notes: tuple[Reason, ...] = field(default=())

    def to_dict(self) -> dict:
        # Shallow by hand: `dataclasses.asdict` deep-copies every reason's params.
        return row_dict({f.name: getattr(self, f.name) for f in fields(self)})


def _reason(key: str, message: str, **params) -> Reason:
    return Reason(key, params, message)


def _training_setup(w: Workload, count: int, sharding: str, tp: int):
    kwargs = dict(
        model=w.model,
        batch=w.batch,
        seq=w.seq,
        precision=w.train_precision,
        optimizer=w.optimizer,
        checkpointing=mem.resolve_checkpointing(
            w.checkpointing, w.lora_rank if w.task in ("lora", "qlora") else 0
        ),
        gpus=count,
        sharding=sharding,
        tensor_parallel=tp,
    )
    if w.task in ("lora", "qlora"):
        kwargs["lora_rank"] = w.lora_rank
    if w.task == "qlora":
        kwargs["quant"] = w.qlora_base
    return mem.TrainingSetup(**kwargs)


def _inference_setup(w: Workload, tp: int):
    return mem.InferenceSetup(
        model=w.model,
        batch=w.batch,
        seq=w.seq,
        weights=w.inference_weights,
        kv_dtype=w.kv_dtype,
        tensor_parallel=tp,
    )


def _plans(w: Workload, count: int):
    """(label, setup, tensor_parallel, replicas) in order of simplicity."""
    heads = w.model.num_heads
    if w.task == "inference":
        tp = 1
        while tp <= count:
            if heads % tp == 0:
                if count == 1:
                    label = "single"
                elif tp == 1:
                    label = f"replicas{count}"
                else:
                    label = f"tp{tp}" if tp == count else f"tp{tp}x{count // tp}"
                yield label, _inference_setup(w, tp), tp, count // tp
            tp *= 2
        return
    if count == 1:
        yield "single", _training_setup(w, 1, "ddp", 1), 1, 1
        return
    yield "ddp", _training_setup(w, count, "ddp", 1), 1, 1
    yield "zero3", _training_setup(w, count, "zero3", 1), 1, 1
    if heads % count == 0:
        yield f"tp{count}", _training_setup(w, count, "ddp", count), count, 1


def _estimate(setup):
    if isinstance(setup, mem.InferenceSetup):
        return mem.inference_memory(setup)
    return mem.training_memory(setup)


def _plan_estimates(w: Workload, count: int) -> tuple:
    """`_plans` with each plan's memory estimate: (label, setup, tp, replicas, estimate), in
    order, ending with the AdvisorError of the first plan that cannot be built, if any. The
    same for every accelerator, so `recommend` computes it once per count."""
    out = []
    try:
        for label, setup, tp, replicas in _plans(w, count):
            out.append((label, setup, tp, replicas, _estimate(setup)))
    except AdvisorError as exc:
        out.append(exc)
    return tuple(out)


def _cheapest_price(offers, gpu_id: str, pricing: str, count: int | None = None):
    """The cheapest offer for `gpu_id`: by price per GPU-hour, or, given `count`, by the bill for
    `count` GPUs in whole instances. Ties go to provider, instance, region (deterministic)."""
    best = _cheapest_of(_priced([o for o in offers if o.gpu_id == gpu_id], pricing), count)
    return None if best is None else best[2]


def _priced(offers, pricing: str) -> list:
    """(USD per GPU-hour, GPUs per instance, offer) of the offers with a `pricing` price."""
    out = []
    for o in offers:
        p = cost.offer_price(o, pricing)
        if p is not None:
            out.append((p, max(1, int(o.gpus_per_instance)), o))
    return out


def _cheapest_of(priced, count: int | None):
    """The cheapest entry of `_priced` (see `_cheapest_price`), or None."""
    best = None
    for entry in priced:
        p, gpi, o = entry
        bill = p if count is None else p * math.ceil(count / gpi) * gpi
        key = (bill, p, o.provider, o.instance, o.region)
        if best is None or key < best[0]:
            best = (key, entry)
    return None if best is None else best[1]


@functools.lru_cache(maxsize=8192)
def _own_cost(own, util, horizon_months):
    """(own_total, purchase) in USD of the owning inputs `own` (advisor.money.cost.owning_plan's
    `OwnHardware`, frozen) over the horizon (advisor.money.cost.own_totals); cached: the same for
    every input change that leaves them alone."""
    res = cost.own_totals(own, utilisation=util, horizon_months=horizon_months)
    return res.own_total, res.purchase


def _fmt_money(v: float, currency: str) -> str:
    return f"{v:,.0f} {currency}"


def recommend(
    workload: Workload,
    catalog,
    *,
    measured=None,
    rates=None,
) -> tuple[Recommendation, ...]:
    """Rank every catalog accelerator x count for `workload` (module docstring). `measured`
    (advisor.data.achievable.Measured records from bench runs) replaces, per accelerator, the
    model's training step by the measured MFU and its achievable bandwidth by the measured one;
    `rates` defaults to `catalog.currency`."""
    rows = ranked_rows(workload, catalog, measured=measured, rates=rates)
    return tuple(Recommendation(**r) for r in rows)


def row_dict(row: dict) -> dict:
    """A row of `ranked_rows` as plain JSON-able data (what Recommendation.to_dict gives)."""
    return {
        **row,
        "reasons": [
            {"key": r.key, "params": dict(r.params), "message": r.message} for r in row["reasons"]
        ],
        "notes": [
            {"key": r.key, "params": dict(r.params), "message": r.message}
            for r in row.get("notes", ())
        ],
    }


def ranked_rows(
    workload: Workload,
    catalog,
    *,
    measured=None,
    rates=None,
) -> list[dict]:
    """`recommend` as dicts of Recommendation's fields, without building the 128 frozen
    objects (a fifth of the picker's time per input change in the browser)."""
    w = workload.validated()
    if rates is None:
        rates = getattr(catalog, "currency", None)
    factor = cost._rate(w.currency, rates)
    offers_by_gpu: dict[str, list] = {}
    for o in getattr(catalog, "offers", ()) or ():
        offers_by_gpu.setdefault(o.gpu_id, []).append(o)
    # where a GPU's offers all lack the chosen pricing's price and say why (`on_demand_note`:
    # the provider publishes spot or capacity-block prices only), the rejection says so
    no_price_note = {g: cost.no_price_note(v, w.pricing) for g, v in offers_by_gpu.items()}
    offers_by_gpu = {g: _priced(v, w.pricing) for g, v in offers_by_gpu.items()}
    counts = list(w.counts)
    # the same for every accelerator (serving is sized per accelerator: advisor.perf.serving_fit)
    plans = {c: () if w.task == "inference" else _plan_estimates(w, c) for c in counts}
    out: list[dict] = []
    sys_catalog = tuple(getattr(catalog, "systems", ()) or ())
    figures = getattr(catalog, "owning", None)
    for gpu in catalog.gpus:
        if w.tiers and gpu.tier not in w.tiers:
            continue
        eff = perf_eff.measured_for(gpu.id, measured)
        priced = offers_by_gpu.get(gpu.id, ())
        decode = {}  # tensor-parallel degree -> decode rate: the same for every count
        for count in counts:
            out.append(
                _judge(
                    w,
                    gpu,
                    count,
                    eff,
                    priced,
                    factor,
                    plans[count],
                    decode,
                    sys_catalog,
                    figures,
                    no_price_note=no_price_note.get(gpu.id),
                )
            )

    def key(r: dict):
        if not r["ok"]:
            return (1, 0.0, 0.0, r["gpu_id"], r["count"])
        speed = r["hours"] if r["hours"] is not None else -(r["tokens_per_s"] or 0.0)
        # costs within 1 unit: faster first
        return (0, round(r["cost"]), speed, r["gpu_id"], r["count"])

    ranked = sorted(out, key=key)
    for i, r in enumerate(ranked, 1):
        r["rank"] = i
    return ranked


def _judge(
    w: Workload,
    gpu,
    count: int,
    eff,
    priced,
    factor: float,
    plans,
    decode,
    sys_catalog=(),
    figures=None,
    no_price_note: str | None = None,
) -> dict:
    """One candidate: the fields of its Recommendation (all but `rank`). `eff`: the bench
    runs' figures for this accelerator (advisor.data.achievable.Measured) or None. `priced`: this
    accelerator's offers (`_priced`); `plans`: `_plan_estimates` for `count`; `decode`
    memoises its decode rate per tensor-parallel degree across counts."""
    capacity = int(gpu.memory_bytes)
    # One dict, filled in as the candidate gets through the checks (a rejection returns it with
    # what is known so far).
    rec = {
        "gpu_id": gpu.id,
        "gpu_name": gpu.name,
        "tier": gpu.tier,
        "count": count,
        "capacity_bytes": capacity,
        "currency": w.currency,
        "sharding": "-",
        "tensor_parallel": 1,
        "ok": False,
        "memory_per_gpu_bytes": None,
        "bound": None,
        "hours": None,
        "tokens_per_s": None,
        "mode": None,
        "cost": None,
        "rent_cost": None,
        "own_cost": None,
        "run_cost": None,
        "per_million_tokens": None,
        "offer": None,
        "reasons": (),
        "notes": (),
        "weights": None,
        "kv_dtype": None,
        "replicas": None,
        "concurrency_per_replica": None,
        "tokens_per_s_per_user": None,
        "ttft_s": None,
        "tpot_s": None,
        "own_per_million_tokens": None,
        "purchase": None,
        "system": None,
        "server_priced": None,
        "server_assumed": None,
    }

    def reject(reason: Reason) -> dict:
        rec["reasons"] = (reason,)
        return rec

    hours = None
    if w.task == "inference":
        why = _judge_serving(w, gpu, count, eff, rec)
        if why is not None:
            return reject(why)
        tps = rec["tokens_per_s"]
        return _judge_money(
            w,
            gpu,
            count,
            priced,
            factor,
            rec,
            hours,
            tps,
            reject,
            sys_catalog,
            figures,
            no_price_note=no_price_note,
        )

    # 1. memory
    chosen = None
    smallest = None
    for plan in plans:
        if isinstance(plan, AdvisorError):
            return reject(_reason(plan.key, plan.message, **plan.params))
        est = plan[4]
        if smallest is None or est.total_bytes < smallest[4].total_bytes:
            smallest = plan
        if est.total_bytes <= capacity:
            chosen = plan
            break
    if chosen is None:
        label, _, tp, _, est = smallest
        need = est.total_bytes
        rec.update(sharding=label, tensor_parallel=tp, memory_per_gpu_bytes=need)
        rec["bound"] = "vram_capacity"
        return reject(
            _reason(
                "recommend.vram",
                f"needs {need / GIB:.1f} GiB per GPU, has {capacity / GIB:.1f} GiB",
                needs_gib=round(need / GIB, 1),
                has_gib=round(capacity / GIB, 1),
                sharding=label,
            )
        )
    label, setup, tp, replicas, est = chosen
    rec.update(sharding=label, tensor_parallel=tp, memory_per_gpu_bytes=est.total_bytes)

    # 2-3. time
    for why in support.training(gpu, w.task, w.train_precision):
        return reject(_reason(why.key, why.message, **why.params))
    try:
        mfu = eff.train_mfu if eff is not None else None
        st = training.setup_step(setup, gpu, mfu=mfu, mfu_source=eff.source if eff else "")
        if w.dataset_tokens is not None:
            hours = training.run(st, w.dataset_tokens).hours
        tps = st.tokens_per_s
        bound = training.step_roofline(st, setup, gpu, est).bound
    except AdvisorError as exc:
        return reject(_reason(exc.key, exc.message, **exc.params))
    rec.update(hours=hours, tokens_per_s=tps, bound=bound)
    if w.deadline_hours is not None and hours is not None and hours > w.deadline_hours:
        return reject(
            _reason(
                "recommend.too_slow_hours",
                f"needs {hours:,.1f} h, deadline {w.deadline_hours:,.1f} h",
                hours=round(hours, 1),
                deadline_hours=w.deadline_hours,
            )
        )

    rec["notes"] = tuple(rec["notes"]) + tuple(
        _reason(n.key, n.message, **n.params) for n in support.notes_for_training(gpu, w.task)
    )
    return _judge_money(
        w,
        gpu,
        count,
        priced,
        factor,
        rec,
        hours,
        tps,
        reject,
        sys_catalog,
        figures,
        no_price_note=no_price_note,
    )


def _judge_serving(w: Workload, gpu, count: int, eff, rec: dict) -> Reason | None:
    """Memory and speed of a serving candidate (advisor.perf.serving_fit.best_fit: the layout and
    format that meet the per-user and total targets); fills `rec`; the rejection or None."""
    if not w.model.causal:
        return _reason(
            "model.not_causal",
            "an encoder (not causal) generates no tokens: no decode rate, no price per token",
            model=w.model.name,
        )
    input_tokens, output_tokens = sfit.split_context(w.seq)
    asked = w.serving_formats
    if len(asked) == 1 and asked[0] in sfit.FP4_WEIGHTS and not gpu.runs_fp4(asked[0]):
        # the picker offers an FP4 block format only on the cards whose FP4 tensor cores take
        # it (catalog fp4_formats); elsewhere the weights would be dequantised (issue 34)
        rec["weights"] = asked[0]
        return _reason(
            "support.fp4_format",
            f"{asked[0].upper()}: {gpu.name} has no FP4 tensor cores for this format",
            format=asked[0].upper(),
            gpu=gpu.id,
        )
    # a bench run's measured copy bandwidth replaces the catalog's achievable one
    achievable = perf_eff.achievable_with(gpu, eff) if eff and eff.bandwidth_fraction else None
    try:
        f = sfit.best_fit(
            w.model,
            gpu,
            gpus=count,
            concurrency=w.batch,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            formats=w.serving_formats,
            kv_dtype=w.kv_dtype,
            kv_dtypes=w.kv_formats,
            per_user_tokens_per_s=w.target_tokens_per_s_per_user,
            total_tokens_per_s=w.target_tokens_per_s,
            achievable=achievable,
        )
    except AdvisorError as exc:
        return _reason(exc.key, exc.message, **exc.params)
    rec.update(
        sharding=f.label,
        tensor_parallel=f.tensor_parallel,
        memory_per_gpu_bytes=f.total_bytes,
        weights=f.weights,
        kv_dtype=f.kv_dtype,
        replicas=f.replicas,
        concurrency_per_replica=f.per_replica,
    )
    if f.unsupported:
        u = f.unsupported[0]
        return _reason(u.key, u.message, **u.params)
    if not f.fits:
        rec["bound"] = "vram_capacity"
        need, has = f.total_bytes, f.capacity_bytes
        return _reason(
            "recommend.vram",
            f"needs {need / GIB:.1f} GiB per GPU, has {has / GIB:.1f} GiB",
            needs_gib=round(need / GIB, 1),
            has_gib=round(has / GIB, 1),
            sharding=f.label,
        )
    p = f.point
    try:  # the roofline's bound; a card with no dense rate for the format is refused here
        roof = timing.decode_roofline(
            w.model,
            gpu,
            batch=f.per_replica,
            context=w.seq,
            weights=f.weights,
            kv_dtype=f.kv_dtype,
            tensor_parallel=f.tensor_parallel,
            achievable=achievable,
        )
        bound = roof.bound
    except AdvisorError as exc:
        return _reason(exc.key, exc.message, **exc.params)
    rec.update(
        tokens_per_s=p.tokens_per_s,
        tokens_per_s_per_user=p.tokens_per_s_per_user,
        ttft_s=p.ttft_s,
        tpot_s=p.tpot_s,
        bound=bound,
    )
    per_user = w.target_tokens_per_s_per_user
    if per_user is not None and p.tokens_per_s_per_user < per_user:
        return _reason(
            "recommend.too_slow_per_user",
            f"reaches {p.tokens_per_s_per_user:,.1f} tokens/s per user at {w.batch} requests "
            f"in flight, target {per_user:,.1f}",
            tokens_per_s=round(p.tokens_per_s_per_user, 1),
            target=per_user,
            concurrency=w.batch,
        )
    if w.target_tokens_per_s is not None and p.tokens_per_s < w.target_tokens_per_s:
        return _reason(
            "recommend.too_slow_tokens",
            f"reaches {p.tokens_per_s:,.0f} tokens/s, target {w.target_tokens_per_s:,.0f}",
            tokens_per_s=round(p.tokens_per_s, 1),
            target=w.target_tokens_per_s,
        )
    return None


def _judge_money(
    w: Workload,
    gpu,
    count: int,
    priced,
    factor: float,
    rec,
    hours,
    tps,
    reject,
    sys_catalog=(),
    figures=None,
    no_price_note: str | None = None,
):
    """Step 4 of the module docstring: rent and own costs, the budget; fills `rec`. Owning
    buys whole systems (advisor.data.systems.purchase_for: the server beside the cards, its power)."""
    horizon_months = w.horizon_months
    horizon_hours = horizon_months * cost.HOURS_PER_MONTH
    outlasts = hours is not None and hours > horizon_hours
    if outlasts:
        # The run outlasts the horizon: cost it in full (rent: all its hours; own: as many
        # months as it runs, fully busy) and say so, rather than cutting it at the horizon.
        horizon_months = min(limits.MONTHS[1], math.ceil(hours / cost.HOURS_PER_MONTH))
        rec["notes"] = (
            _reason(
                "recommend.outlasts_horizon",
                f"the run takes {hours:,.0f} h ({hours / 8760:,.1f} years), longer than the "
                f"{w.horizon_months}-month horizon: costed in full ({horizon_months} months)",
                hours=round(hours, 1),
                horizon_months=w.horizon_months,
                costed_months=horizon_months,
            ),
            *rec["notes"],
        )
        if hours > limits.MONTHS[1] * cost.HOURS_PER_MONTH:
            return reject(
                _reason(
                    "recommend.too_slow_hours",
                    f"needs {hours:,.0f} h, more than {limits.MONTHS[1] // 12} years",
                    hours=round(hours, 1),
                    deadline_hours=limits.MONTHS[1] * cost.HOURS_PER_MONTH,
                )
            )
        horizon_hours = horizon_months * cost.HOURS_PER_MONTH
    if w.utilisation is not None and not outlasts:
        util = w.utilisation
    elif hours is not None:
        util = min(1.0, hours / horizon_hours)
    else:
        util = 1.0
    best = _cheapest_of(priced, count) if w.acquire != "own" else None
    rent_cost = run_cost = None
    if best is not None:
        price, gpi, offer = best
        billed = math.ceil(count / gpi) * gpi
        rent_cost = rec["rent_cost"] = price * billed * horizon_hours * util * factor
        if hours is not None:
            run_cost = rec["run_cost"] = price * billed * hours * factor
        if w.task == "inference":
            # the whole instances billed (a provider rents its shapes, not single GPUs)
            rec["per_million_tokens"] = cost.cost_per_million_tokens(tps, price * billed) * factor
        rec["offer"] = f"{offer.provider} {offer.instance} ({offer.region}), read {offer.read}"
    own_cost = purchase = None
    # SXM / OAM: whole boards only; racks of 72; at most `max_systems` boxes (advisor.data.systems)
    board = not systems.ownable(gpu, count, sys_catalog)
    plan = None
    if w.acquire != "rent" and not board:
        # the one owning plan (advisor.money.cost.owning_plan): a card with a price, or a rack /
        # desktop box priced whole; neither priced: not ownable here
        try:
            plan = cost.owning_plan(
                gpu,
                count,
                electricity_usd_per_kwh=w.electricity_usd_per_kwh,
                horizon_months=horizon_months,
                systems=sys_catalog,
                figures=figures,
                pue=max(1.0, w.pue),
                extra_server_usd=w.server_usd_per_gpu * count,
            )
        except AdvisorError as exc:
            if exc.key != "budget.no_price":
                raise
    if plan is not None:
        rec["system"] = plan.system_id
        rec["server_priced"] = plan.server_priced
        rec["server_assumed"] = plan.server_assumed
        if plan.server_assumed:
            # no published server price: the stated assumption is counted, and said
            server_usd = plan.item("server").usd * factor
            rec["notes"] = (
                *rec["notes"],
                _reason(
                    "recommend.server_assumed",
                    f"{plan.nodes} x {plan.system_name}: the server's price is an assumption "
                    f"({server_usd:,.0f} {w.currency}), not published; ask the vendor for a quote",
                    n=plan.nodes,
                    system=plan.system_name,
                    cost=round(server_usd, 2),
                    currency=w.currency,
                ),
            )
        own_total, purchase_usd = _own_cost(plan.own, util, horizon_months)
        own_cost = rec["own_cost"] = own_total * factor
        purchase = rec["purchase"] = purchase_usd * factor
        if w.task == "inference" and tps:
            busy_h = horizon_months * cost.HOURS_PER_MONTH * util
            rec["own_per_million_tokens"] = own_cost / (tps * 3600 * busy_h) * 1e6
    options = []
    if rent_cost is not None:
        options.append((rent_cost, "rent"))
    if own_cost is not None:
        options.append((own_cost, "own"))
    if not options and board and w.acquire != "rent":
        sizes = systems.platform_sizes(gpu, sys_catalog)
        limit = systems.max_count(gpu, sys_catalog)
        if limit is not None and count > limit:
            return reject(
                _reason(
                    "recommend.max_systems",
                    f"{gpu.name}: at most {limit} linked as one configuration, not {count}",
                    gpu=gpu.id,
                    count=count,
                    limit=limit,
                )
            )
        return reject(
            _reason(
                "recommend.platform",
                f"{gpu.name} is sold on boards of {' or '.join(map(str, sizes))} GPUs, "
                f"not as {count}",
                gpu=gpu.id,
                count=count,
                sizes=list(sizes),
            )
        )
    if not options:
        why = {
            "rent": ("recommend.no_offer", f"no {w.pricing.replace('_', '-')} cloud offer"),
            "own": ("recommend.no_price", "no purchase price in the catalog"),
            "either": ("recommend.no_offer_no_price", "no cloud offer and no price"),
        }[w.acquire]
        if w.acquire == "rent" and no_price_note:
            why = (
                "recommend.no_pricing_published",
                f"no {w.pricing.replace('_', '-')} price published; spot or capacity block only "
                f"({no_price_note})",
            )
            return reject(
                _reason(why[0], why[1], gpu=gpu.id, pricing=w.pricing, note=no_price_note)
            )
        return reject(_reason(why[0], why[1], gpu=gpu.id, pricing=w.pricing))
    if w.budget is not None:
        spend = {}
        if rent_cost is not None:
            spend["rent"] = run_cost if run_cost is not None else rent_cost
        if own_cost is not None:
            spend["own"] = purchase
        within = [(c, m) for c, m in options if spend[m] <= w.budget]
        if not within:
            low = min(spend.values())
            return reject(
                _reason(
                    "recommend.over_budget",
                    f"costs {_fmt_money(low, w.currency)}, budget {_fmt_money(w.budget, w.currency)}",
                    cost=round(low, 2),
                    budget=w.budget,
                    currency=w.currency,
                )
            )
        options = within
    rec["cost"], rec["mode"] = min(options)
    rec["ok"] = True
    return rec


# ---------------------------------------------------------------------------------------------
# Cluster plans (more than one node)
# ---------------------------------------------------------------------------------------------


def cluster_plans(w: Workload, catalog, *, network_id: str = "ib-ndr-400", top: int = 5):
    """For a full training run (`task` train with `dataset_tokens`): the advisor.perf.cluster plan of
    each data-centre accelerator with a cloud price, at its cheapest on-demand rate, for the
    workload's deadline and budget (converted to USD), cheapest chosen plan first, then the
    accelerators with no plan (with the reason). `top` plans at most."""
    from ..perf import cluster

    w = w.validated()
    if w.task != "train" or not w.dataset_tokens:
        raise AdvisorError(
            "cluster.needs_training",
            "cluster plans need --task train and --dataset-tokens",
            field="dataset_tokens",
        )
    network = catalog.network(network_id)
    rate = catalog.currency.rate(w.currency) if catalog.currency and w.currency != "USD" else 1.0
    budget_usd = w.budget / rate if w.budget is not None else None
    precision = "bf16" if w.train_precision in ("amp-bf16", "bf16") else w.train_precision
    if precision not in ("bf16", "fp16", "amp-fp16", "fp32"):
        precision = "bf16"
    plans = []
    for gpu in catalog.gpus:
        if gpu.tier != "datacenter" or (w.tiers and gpu.tier not in w.tiers):
            continue
        offers = catalog.offers_for(gpu.id)
        if not offers or not (gpu.peak_tflops or {}).get("bf16"):
            continue
        best = _cheapest_price(offers, gpu.id, w.pricing)  # None: no price of that kind
        price = cost.offer_price(best, w.pricing) if best is not None else None
        plans.append(
            cluster.plan(
                w.model,
                gpu,
                tokens=int(w.dataset_tokens),
                seq=w.seq,
                deadline_hours=w.deadline_hours,
                budget_usd=budget_usd,
                price_usd_per_gpu_hour=price,
                network=network,
                precision=precision,
            )
        )
    chosen = sorted(
        (p for p in plans if p.chosen),
        key=lambda p: (p.chosen.cost_usd or math.inf, p.chosen.hours, p.gpu),
    )
    rest = sorted((p for p in plans if not p.chosen), key=lambda p: p.gpu)
    return tuple(chosen[:top]) + tuple(rest)
