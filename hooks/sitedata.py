"""What the data pages show, computed from the catalog by advisor (no number typed into prose).

`SiteData` is handed to every page's template as `data`. Its methods return plain rows; the
templates (templates/pages/*.md.j2) only format them. Memory figures come from advisor.memory.estimate
(`inference_memory`, `training_memory`, `max_batch`, `max_seq`, `kv_cache_bytes_per_token`);
the ridge point is `GPU.ridge_point(precision)` = peak FLOP/s / memory bandwidth (Williams,
Waterman, Patterson, "Roofline", CACM 52(4), 2009, https://doi.org/10.1145/1498765.1498785).

Results are cached per build in the dict `cache` (shared by both languages), so each figure is
computed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.errors import AdvisorError
from advisor.data.hardware import GPU
from advisor.memory import estimate as memory

TIERS = ("datacenter", "workstation", "consumer")
INFER_CONTEXT = 4096  # tokens per sequence for the "fits for inference" tables
TRAIN_SEQ = 2048  # tokens per sequence for the training tables
LORA_RANK = 16

# (key, label key, setup kwargs) of the settings shown on model and accelerator pages.
INFERENCE_SETTINGS = (
    ("infer_bf16", {"weights": "bf16", "kv_dtype": "bf16"}),
    ("infer_fp8", {"weights": "fp8", "kv_dtype": "fp8"}),
    ("infer_int4", {"weights": "int4", "kv_dtype": "bf16"}),
)
TRAINING_SETTINGS = (
    ("train_full", {"precision": "amp-bf16", "optimizer": "adamw", "checkpointing": "none"}),
    ("train_full_ckpt", {"precision": "amp-bf16", "optimizer": "adamw", "checkpointing": "full"}),
    ("train_lora", {"precision": "bf16", "lora_rank": LORA_RANK}),
    ("train_qlora", {"precision": "bf16", "lora_rank": LORA_RANK, "quant": "nf4"}),
)


@dataclass(frozen=True)
class Fit:
    """One model x setting on one accelerator: the largest batch (and context) that fit."""

    setting: str
    max_batch: int | None  # None: advisor cannot estimate this combination
    max_seq: int | None = None
    note: str = ""


class SiteData:
    def __init__(self, catalog, lang: str, cache: dict):
        self.catalog = catalog
        self.lang = lang
        self.cache = cache
        self.memory = memory
        self.infer_context = INFER_CONTEXT
        self.train_seq = TRAIN_SEQ
        self.lora_rank = LORA_RANK

    # ------------------------------------------------------------------ catalog views

    def tiers(self):
        """[(tier, [GPU, ...]), ...] in tier order, GPUs by vendor then name."""
        out = []
        for tier in TIERS:
            gpus = sorted(
                (g for g in self.catalog.gpus if g.tier == tier), key=lambda g: (g.vendor, g.name)
            )
            if gpus:
                out.append((tier, gpus))
        return out

    def gpus_sorted(self):
        return [g for _, gpus in self.tiers() for g in gpus]

    def offers(self):
        """Every cloud offer, by GPU then on-demand price (offers with none, spot or capacity
        block only, after those of their GPU)."""
        od = "on_demand_usd_per_gpu_hour"
        return sorted(
            self.catalog.offers,
            key=lambda o: (
                o.gpu_id,
                getattr(o, od) is None,
                getattr(o, od) or 0.0,
                o.provider,
                o.instance,
            ),
        )

    def offers_for(self, gpu_id: str):
        return [o for o in self.offers() if o.gpu_id == gpu_id]

    def cheapest_hour(self, gpu_id: str):
        offers = self.offers_for(gpu_id)
        prices = [o.on_demand_usd_per_gpu_hour for o in offers]
        return min((p for p in prices if p is not None), default=None)

    @staticmethod
    def sources(gpu: GPU) -> list[tuple[str, str, str, str]]:
        """[(fields, url, read date, how checked)] of a GPU (`GPU.sources`: field -> Source),
        one row per distinct source; fields are the catalog's names ("peak_tflops.bf16"): the
        page shows each through its `field.*` translation."""
        groups: dict = {}
        for fld, s in sorted(gpu.sources.items()):
            groups.setdefault((s.url, s.read, s.checked), []).append(fld)
        return [(tuple(f), url, read, checked) for (url, read, checked), f in groups.items()]

    def achievable(self, gpu) -> dict:
        """What the time model takes as reachable on `gpu` (advisor.perf.efficiency.achievable_of,
        issue 34): the BF16 matmul and memory-bandwidth fractions of the datasheet peaks, and
        whether each is measured on this card, the median of the vendor's measured cards (with
        the spread of those cards as its band) or assumed (`Achievable.basis_of`, figure by
        figure: a card with a measured matmul and no measured bandwidth shows its bandwidth as
        the assumption it is, issue 34). `assumed_peers`: the band's cards whose bandwidth is the
        assumption, not a measurement."""
        from advisor.perf import efficiency

        a = efficiency.achievable_of(gpu)
        out = {
            "matmul": a.matmul("bf16"),
            "bandwidth": a.bandwidth_fraction,
            "matmul_kind": a.basis_of("bf16"),
            "bandwidth_kind": a.basis_of("bandwidth"),
            "peers": "",
        }
        peers = [efficiency.achievable_of(self.catalog.gpu(i)) for i in a.peers]
        if peers:
            mm = [p.matmul("bf16") for p in peers]
            bw = [p.bandwidth_fraction for p in peers]
            out.update(
                peers=", ".join(self.catalog.gpu(i).name for i in a.peers),
                matmul_low=min(mm),
                matmul_high=max(mm),
                bandwidth_low=min(bw),
                bandwidth_high=max(bw),
                assumed_peers=", ".join(
                    self.catalog.gpu(p.gpu_id).name
                    for p in peers
                    if p.basis_of("bandwidth") != "measured"
                ),
            )
        return out

    def system_for(self, gpu):
        """The rack or desktop box `gpu` is sold as (catalog/systems kind rack or desktop), or
        None."""
        for s in self.catalog.systems:
            if s.kind in ("rack", "desktop") and s.carries(gpu):
                return s
        return None

    @staticmethod
    def best_precision(gpu) -> str | None:
        for p in ("bf16", "fp16", "fp32"):
            if p in gpu.peak_tflops:
                return p
        return None

    # ------------------------------------------------------------------ memory

    def _cached(self, key, fn):
        if key not in self.cache:
            self.cache[key] = fn()
        return self.cache[key]

    def inference_setup(self, model, setting: str, batch=1, seq=INFER_CONTEXT):
        kwargs = dict(dict(INFERENCE_SETTINGS)[setting])
        return self.memory.InferenceSetup(model=model.spec, batch=batch, seq=seq, **kwargs)

    def training_setup(self, model, setting: str, batch=1, seq=TRAIN_SEQ):
        kwargs = dict(dict(TRAINING_SETTINGS)[setting])
        return self.memory.TrainingSetup(model=model.spec, batch=batch, seq=seq, **kwargs)

    def setup(self, model, setting: str, batch=1):
        if setting.startswith("infer"):
            seq = min(INFER_CONTEXT, model.spec.max_position_embeddings)
            return self.inference_setup(model, setting, batch, seq)
        seq = min(TRAIN_SEQ, model.spec.max_position_embeddings)
        return self.training_setup(model, setting, batch, seq)

    def estimate(self, model, setting: str):
        """MemoryEstimate at batch 1 (None if advisor does not model the combination)."""

        def run():
            setup = self.setup(model, setting)
            try:
                if setting.startswith("infer"):
                    return self.memory.inference_memory(setup)
                return self.memory.training_memory(setup)
            except AdvisorError:
                return None

        return self._cached(("estimate", model.id, setting), run)

    def kv_per_token(self, model, kv_dtype="bf16") -> int:
        return self._cached(
            ("kv", model.id, kv_dtype),
            lambda: self.memory.kv_cache_bytes_per_token(model.spec, kv_dtype),
        )

    def fit(self, model, gpu, setting: str) -> Fit:
        """Largest batch at the page's context on one `gpu`; max context at batch 1."""

        def run():
            setup = self.setup(model, setting)
            est = self.estimate(model, setting)
            if est is not None and est.total_bytes > gpu.memory_bytes:
                # what max_batch returns when batch 1 does not fit, without its search
                return Fit(setting, 0, None)
            try:
                batch = self.memory.max_batch(setup, gpu.memory_bytes)
                seq = None
                if setting.startswith("infer") and batch > 0 and model.spec.causal:
                    seq = min(
                        self.memory.max_seq(setup, gpu.memory_bytes),
                        model.spec.max_position_embeddings,
                    )
                return Fit(setting, batch, seq)
            except AdvisorError as exc:
                return Fit(setting, None, None, exc.key)

        # keyed by capacity, not GPU: accelerators with the same memory share one search
        return self._cached(("fit", model.id, gpu.memory_bytes, setting), run)

    def fits_on(self, gpu, settings=("infer_bf16", "infer_int4", "train_full", "train_qlora")):
        """[(model, [Fit per setting])] for every catalog model on `gpu`."""
        return [(m, [self.fit(m, gpu, s) for s in settings]) for m in self.catalog.models]

    def gpus_fitting(self, model, setting: str):
        """Accelerators on which `model` fits at batch 1 with `setting`: the batch-1 estimate's
        `total_bytes` (what `memory.max_batch` compares too) within the GPU's memory."""
        est = self.estimate(model, setting)
        if est is None:
            return []
        return [g for g in self.gpus_sorted() if est.total_bytes <= g.memory_bytes]

    # ------------------------------------------------------------------ charts

    def perf_per_dollar(self):
        """[(GPU, precision, dense TFLOPS per 1000 USD of list price)] for priced GPUs."""
        rows = []
        for g in self.gpus_sorted():
            p = self.best_precision(g)
            if g.price_usd and p:
                rows.append((g, p, g.peak_tflops[p] / g.price_usd * 1000.0))
        return sorted(rows, key=lambda r: -r[2])

    def perf_per_cloud_dollar(self):
        """[(GPU, precision, dense TFLOPS per USD per GPU-hour on the cheapest on-demand offer)]."""
        rows = []
        for g in self.gpus_sorted():
            p, hour = self.best_precision(g), self.cheapest_hour(g.id)
            if hour and p:
                rows.append((g, p, g.peak_tflops[p] / hour))
        return sorted(rows, key=lambda r: -r[2])

    def memory_per_dollar(self):
        """[(GPU, memory GB per 1000 USD of list price)]."""
        rows = [
            (g, g.memory_bytes / 1e9 / g.price_usd * 1000.0)
            for g in self.gpus_sorted()
            if g.price_usd
        ]
        return sorted(rows, key=lambda r: -r[1])

    def ridge_points(self):
        """[(GPU, precision, TFLOPS, bandwidth GB/s, ridge FLOP/byte)]."""
        rows = []
        for g in self.gpus_sorted():
            p = self.best_precision(g)
            if p:
                rows.append((g, p, g.peak_tflops[p], g.memory_bandwidth_gb_per_s, g.ridge_point(p)))
        return sorted(rows, key=lambda r: r[4])
