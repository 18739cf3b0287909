"""Figures the guide cites, computed by advisor at site build time.

The guide pages are Jinja2 templates; every number in their prose comes from a function here
(`{{ facts.full_training().total_bytes | gib }}`), so the text can never drift from advisor or
the catalog. Each function is small, pure and cached; it returns a read-only mapping of plain
numbers (sizes in bytes, bandwidths in GB/s, powers in W, prices in USD) so that the page's
filters (`gib`, `gb`, `num`, `pct`, `money`) format them per language.

Inputs a reader should see (batch, context, user count) are returned alongside the results, so
the prose renders them too instead of typing them.

The only arithmetic done here, beyond calling advisor, is stated in each docstring with its source.

One module per group of pages (a fact's figures stay where its page looks):
- `common`: What every page's figures share: the catalog ids the guide uses, the build's catalog, cache reset.
- `sizes`: Parameter counts and weight sizes (every guide page that names a model).
- `training_memory`: Training memory (VRAM and bandwidth, training vs inference, multi-GPU pages, FAQ).
- `finetuning`: LoRA and QLoRA memory (quantisation page, FAQ).
- `serving_memory`: Inference and serving memory, KV cache, GPUs per served model (serving page, FAQ).
- `hardware`: Accelerators: cards, tiers, interconnects, decode bounds, power (tiers, multi-GPU, why-hardware pages, FAQ).
- `costs`: Prices: cloud rates, spot, rent vs buy, a training run's cost (budget page, FAQ).
- `accuracy`: How accurate advisor is: memory validation and the time model's measured error (methodology page, VRAM page).
"""

from __future__ import annotations

from .accuracy import (
    KIND_ORDER,
    THROUGHPUT_FILE,
    VALIDATION_FILE,
    finite,
    throughput_rows,
    throughput_summary,
    throughput_unexpressed,
    throughput_validation,
    units_note,
    validation,
    validation_rows,
    validation_summary,
)
from .common import (
    BTU_PER_H_PER_W,
    GPUS,
    HOURS_PER_YEAR,
    MODELS,
    ROOT,
    catalog,
    gpu,
    model,
    reset,
    root,
    use_catalog,
)
from .costs import (
    BREAK_EVEN_CARDS,
    prices,
    rent_vs_buy,
    spot,
    training_run,
)
from .finetuning import (
    qlora,
    qlora_24gb,
)
from .hardware import (
    card,
    decode_bound,
    flagships,
    fp4,
    interconnect,
    layered,
    moe,
    quant_70b,
    rack,
    system,
    systems_ranked,
    tiers,
    workstation_power,
)
from .serving_memory import (
    TP_DEGREES,
    inference,
    kv_per_token,
    kv_table,
    serve_70b_users,
    serving,
    serving_examples,
    serving_gpus,
)
from .sizes import (
    params,
    weight_formats,
    weights,
)
from .training_memory import (
    activations_options,
    batch_vs_vram,
    full_70b_gpus,
    full_training,
    max_batch_train,
    precision_options,
    rule_inference,
    sharding_8gpu,
    small_model_logits,
    training,
)

__all__ = [
    "BTU_PER_H_PER_W",
    "GPUS",
    "HOURS_PER_YEAR",
    "MODELS",
    "ROOT",
    "catalog",
    "gpu",
    "model",
    "reset",
    "root",
    "use_catalog",
    "params",
    "weight_formats",
    "weights",
    "activations_options",
    "batch_vs_vram",
    "full_70b_gpus",
    "full_training",
    "max_batch_train",
    "precision_options",
    "rule_inference",
    "sharding_8gpu",
    "small_model_logits",
    "training",
    "qlora",
    "qlora_24gb",
    "TP_DEGREES",
    "inference",
    "kv_per_token",
    "kv_table",
    "serve_70b_users",
    "serving",
    "serving_examples",
    "serving_gpus",
    "card",
    "decode_bound",
    "flagships",
    "fp4",
    "interconnect",
    "layered",
    "moe",
    "quant_70b",
    "rack",
    "system",
    "systems_ranked",
    "tiers",
    "workstation_power",
    "BREAK_EVEN_CARDS",
    "prices",
    "rent_vs_buy",
    "spot",
    "training_run",
    "KIND_ORDER",
    "THROUGHPUT_FILE",
    "VALIDATION_FILE",
    "finite",
    "throughput_rows",
    "throughput_summary",
    "throughput_unexpressed",
    "throughput_validation",
    "units_note",
    "validation",
    "validation_rows",
    "validation_summary",
]
