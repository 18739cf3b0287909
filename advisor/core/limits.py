"""Plausible ranges for every number a reader can type: one table for the CLI, the web API and
the core validators (advisor.money.cost, advisor.advice.recommend, advisor.perf.training), so that a slip such as
`--gpu-price 1e308` or `--mfu 1e-300` ends in a named error instead of NaN, infinity or a
300-digit figure. Each range is (lowest, highest), inclusive; the highest sits far above any
real product or plan (catching unit slips), never near a realistic one.
"""

from __future__ import annotations

from .errors import AdvisorError, _number, param, shown

# money (USD)
USD_PER_CARD = (0.0, 10_000_000.0)  # one accelerator: the dearest today cost ~0.05 M USD
USD_PER_SERVER = (0.0, 1_000_000_000.0)  # a server / cluster share
USD_PER_GPU_HOUR = (0.0, 1_000.0)  # cloud: ~2-100 USD per GPU-hour today
# a price that is charged (catalog offers, `time --price`): below a cent per GPU-hour it would
# show as $0.00 (issue 40: 1e-300 did); the cheapest real offers are ~0.1 USD
PRICE_USD_PER_GPU_HOUR = (0.01, 1_000.0)
USD_PER_KWH = (0.0, 10.0)  # electricity: 0.03-0.6 USD/kWh worldwide
USD_PER_MONTH = (0.0, 100_000_000.0)  # hosting
USD_PER_KW_MONTH = (0.0, 10_000.0)  # colocation per kW of IT power (CBRE 2024: 184 USD)
BUDGET = (0.0, 1e13)  # in the chosen currency
# power, time, rates
POWER_W = (0.0, 10_000_000.0)  # host draw: up to a large cluster
PUE = (1.0, 5.0)  # The Green Grid WP#49: 1.0 is the ideal; 5 far above any real site
HOURS = (0.0, 1_000_000.0)  # ~114 years of wall-clock time
TOKENS = (1, 10**18)  # training tokens: the largest runs use ~3e13
TOKENS_PER_S = (1e-3, 1e9)
MFU = (1e-3, 1.0)  # model FLOPs utilisation: 0.1 % .. 100 %
FRACTION = (0.0, 1.0)  # utilisation, resale, maintenance, loan rate, down payment
MONTHS = (1, 600)
LOAN_MONTHS = (0, 600)
GPUS = (1, 100_000)


def check_range(field: str, value, limits: tuple, *, exclusive_low: bool = False) -> float:
    """`value` if it is a finite number within `limits` (lowest, highest), else an AdvisorError
    naming `field` (``field.not_number``, ``field.not_finite``, ``field.too_small`` or
    ``field.too_large``) with the range in its params."""
    v = _number(field, value)
    lo, hi = limits
    if v < 0 <= lo and not exclusive_low:
        raise AdvisorError(
            "field.non_negative",
            f"{field}: must not be negative, got {shown(value)}",
            field=field,
            value=param(v),
        )
    if v < lo or (exclusive_low and v <= lo):
        word = "greater than" if exclusive_low else "at least"
        raise AdvisorError(
            "field.positive" if exclusive_low and lo == 0 else "field.too_small",
            f"{field}: must be {word} {lo:g}, got {shown(value)}",
            field=field,
            value=param(v),
            minimum=lo,
        )
    if v > hi:
        raise AdvisorError(
            "field.too_large",
            f"{field}: must be at most {hi:g}, got {shown(value)}",
            field=field,
            value=param(v),
            maximum=hi,
        )
    return v
