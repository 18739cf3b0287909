"""How close a rejected candidate came (issue 39: the picker lists every rejection, the nearest
misses first): the ratio of what the workload needs to what the candidate offers for the check
that failed, >= 1 (1.3: 30 % short). Memory: needed / available GiB per GPU; speed: target /
reached tokens/s; time: needed / deadline hours; money: cost / budget. A rejection that no
amount of the same resource would fix (no price, an encoder, an unsupported precision) has no
ratio (infinity) and sorts last.
"""

from __future__ import annotations

import math

# reason key -> (param of what is needed, param of what is there)
_RATIOS = {
    "recommend.vram": ("needs_gib", "has_gib"),
    "recommend.too_slow_tokens": ("target", "tokens_per_s"),
    "recommend.too_slow_hours": ("hours", "deadline_hours"),
    "recommend.over_budget": ("cost", "budget"),
}


def shortfall(row: dict) -> float:
    """The ratio for a rejected row of advisor.advice.recommend.ranked_rows (or its row_dict)."""
    best = math.inf
    for r in row.get("reasons", ()):
        key, params = (r["key"], r["params"]) if isinstance(r, dict) else (r.key, r.params)
        names = _RATIOS.get(key)
        if not names:
            continue
        need, have = params.get(names[0]), params.get(names[1])
        if isinstance(need, (int, float)) and isinstance(have, (int, float)) and have > 0:
            best = min(best, max(need / have, 1.0))
    return best


def nearest_first(rows: list) -> list:
    """Rejected rows, the nearest misses first (ties: accelerator id, then count)."""
    return sorted(rows, key=lambda r: (shortfall(r), r["gpu_id"], r["count"]))
