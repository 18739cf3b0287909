"""`python -m advisor gpus [--tier T] [--json]`: the accelerator catalog as a table."""

from __future__ import annotations

from ..core.errors import check_choice
from ..data.catalog import load_catalog
from ..data.hardware import TIERS
from ._common import print_json, print_table


def register(sub) -> None:
    p = sub.add_parser("gpus", help="list the accelerator catalog (dense tensor TFLOPS)")
    p.add_argument("--tier", help=f"only one tier: {', '.join(TIERS)}")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _num(v, fmt="{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


# why a card has no price (advisor.data.hardware.PRICE_STATUSES)
_NO_PRICE = {
    "not_published": "not published",
    "system": "with its system",
    "rented_only": "rented only",
}


def run(args) -> int:
    catalog = load_catalog(args.catalog)
    gpus = catalog.gpus
    if args.tier is not None:
        check_choice("tier", args.tier, TIERS)
        gpus = tuple(g for g in gpus if g.tier == args.tier)
    if args.json:
        return print_json([g.to_dict() for g in gpus], indent=1)
    head = (
        "id", "name", "tier", "GB", "GiB", "GB/s", "bf16 TF", "fp8 TF", "fp4 TF", "TDP W",
        "price USD",
    )  # fmt: skip
    rows = [
        (
            g.id,
            g.name,
            g.tier,
            _num(g.memory_gib, "{:g}"),
            _num(g.memory_bytes / 2**30),
            _num(g.memory_bandwidth_gb_per_s, "{:g}"),
            _num(g.peak_tflops.get("bf16")),
            _num(g.peak_tflops.get("fp8")),
            _num(g.peak_tflops.get("fp4")),
            _num(g.tdp_w, "{:g}"),
            # no price: why, where the catalog says (advisor.data.hardware.PRICE_STATUSES)
            _NO_PRICE.get(g.price_status, "-")
            if g.price_usd is None
            else f"{g.price_usd:,.0f} ({g.price_kind} price, as of {g.price_date[:7]})",
        )
        for g in gpus
    ]
    print_table(head, rows)
    print(
        "Dense tensor throughput (no 2:4 sparsity); GeForce bf16/fp8 at FP32 accumulate; fp4: "
        "FP4 tensor cores only (elsewhere 4-bit weights are dequantised)."
    )
    return 0
