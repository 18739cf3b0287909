"""Links to the tools (issue 39): the calculators and the report builder, listed on the home page
and the calculators' index (`<!-- advisor:tools -->`), and from each guide page to the
calculator that answers its question, prefilled with the guide's own example
(`<!-- advisor:try -->`).

A prefilled link carries the calculator's state in its query as calc.mjs reads it
(`?KIND.FIELD=VALUE`, calcruntime/browser/calc.mjs `readUrl`). The values come from the catalog
ids of the examples the guide pages compute through hooks/facts/, so the calculator opens on
the very case the page describes. Every field named here must be a field of that calculator's
web API request (advisor.webapi.REQUESTS; tests/test_calclinks.py checks it).
"""

from __future__ import annotations

from urllib.parse import urlencode

from hooks import facts

# The calculators in the order the index and the home page list them (question first).
TOOLS = ("vram", "picker", "serving", "cluster", "budget", "roofline")
REPORT = "reports/new.md"


def _m(key: str) -> str:
    return facts.MODELS[key]


def _g(key: str) -> str:
    return facts.GPUS[key]


def guide_examples() -> dict[str, tuple[tuple[str, str, dict], ...]]:
    """Guide page (file stem) -> ((calculator, example key, its fields), ...): the example the
    page works through (hooks/facts/ names the function each comes from)."""
    llama8b, llama70b, h100 = _m("llama8b"), _m("llama70b"), _g("h100")
    # facts.full_training(): Llama 3.1 8B, full fine-tune, AdamW, amp-bf16, batch 1, 2,048 tokens
    ft = {"model": llama8b, "task": "train", "precision": "amp-bf16", "batch": 1, "seq": 2048}
    ft["checkpointing"] = "none"
    # facts.training_run(): Llama 3.1 8B on 10^12 tokens, 8 H100, 4,096-token sequences
    run = {"model": llama8b, "gpu": h100, "tokens": "1T", "seq": 4096, "max_gpus": 8}
    # facts.decode_bound(): single-stream decoding of Llama 3.1 8B on an H100 at 2,048 tokens
    decode = {"model": llama8b, "gpu": h100, "phase": "decode", "batch": 1, "seq": 2048}
    return {
        "why-hardware": (("roofline", "decode", decode), ("cluster", "run", run)),
        "training-vs-inference": (
            ("vram", "train", ft),
            ("vram", "infer", {"model": llama8b, "task": "inference", "batch": 1, "seq": 8192}),
        ),
        "vram-and-bandwidth": (("vram", "train", ft),),
        # facts.tiers(): which card for a workload
        "tiers": (("picker", "infer", {"model": llama8b, "task": "inference"}),),
        # facts.sharding_8gpu(): the same fine-tune on 8 GPUs under ZeRO-3
        "multi-gpu": (
            ("vram", "zero3", {**ft, "gpus": 8, "sharding": "zero3"}),
            ("cluster", "run", run),
        ),
        # facts.quant_70b() and facts.qlora_24gb(): 70B weights in 4 bits; QLoRA on a 24 GB card
        "quantisation": (
            ("vram", "int4", {"model": llama70b, "task": "inference", "weights": "awq"}),
            ("vram", "qlora", {"model": llama8b, "task": "qlora", "gpu": _g("rtx4090")}),
        ),
        # facts.serving_examples(): Llama 3.1 8B on an H100, 8k tokens of context
        "serving": (("serving", "h100", {"model": llama8b, "gpu": h100, "input_tokens": 7936}),),
        # facts.rent_vs_buy(): an H100 bought or rented
        "budget": (("budget", "h100", {"gpu": h100, "gpus": 8}),),
        "benchmarking": (("cluster", "run", run), ("roofline", "decode", decode)),
        # facts.full_training() and facts.qlora_24gb() as the week's first checks
        "start-this-week": (("vram", "train", ft), ("picker", "infer", {"model": llama8b})),
        # facts.layered(): DeepSeek-V3's latent KV cache, read layer by layer
        "moe-mla-hybrid": (
            (
                "vram",
                "infer",
                {"model": "deepseek-v3", "task": "inference", "batch": 1, "seq": 8192},
            ),
        ),
    }


def query(kind: str, fields: dict) -> str:
    """`?kind.field=value&...` as calc.mjs reads it."""
    return "?" + urlencode({f"{kind}.{k}": v for k, v in fields.items()})


def _up(page) -> str:
    """The path from the page's folder up to its language's root (docs/{lang}/)."""
    parts = page.file.src_uri.split("/")
    depth = len(parts) - 2 if parts and parts[0] in ("az", "en") else len(parts) - 1
    return "../" * depth


def calc_href(page, kind: str, fields: dict | None = None) -> str:
    """A Markdown link target from `page` to calculator `kind` (prefilled with `fields`)."""
    return f"{_up(page)}calculators/{kind}.md" + (query(kind, fields) if fields else "")


def report_href(page) -> str:
    return f"{_up(page)}{REPORT}"


def for_page(page) -> tuple:
    """The guide page's links: ({kind, example, href, model, gpu}, ...): `model` and `gpu` are
    the example's catalog names ("" where the calculator's default accelerator stands)."""
    stem = page.file.src_uri.rsplit("/", 1)[-1].removesuffix(".md")
    cat = facts.catalog()
    return tuple(
        {
            "kind": kind,
            "example": ex,
            "href": calc_href(page, kind, fields),
            "model": cat.model(fields["model"]).display_name if "model" in fields else "",
            "gpu": cat.gpu(fields["gpu"]).name if "gpu" in fields else "",
        }
        for kind, ex, fields in guide_examples().get(stem, ())
    )
