"""JSON-in / JSON-out entry points for the in-browser calculators (and for build-time prerendering
and tests): the same functions run in CPython and in Pyodide.

Each public function takes a plain dict of parameters (what the page's form holds: numbers as
numbers or strings, choices as strings) and returns a plain JSON-able dict. Bad input never
raises: it returns ``{"error": AdvisorError.to_dict()}`` so the page can show the translated
message (its ``key`` and ``params``) next to the offending ``field``.

Each calculator reads its form through one frozen request type (`VramRequest`,
`RooflineRequest`, `BudgetRequest`, `PickerRequest`) whose field defaults are the calculator's
only defaults (`DEFAULTS`, the prerendered first paint): a field left out of a direct call and of
`run()` takes the same value. Field defaults that are "" mean "not given" (e.g. budget's
`price_usd`: the catalog price).

`call(name, params_json)` is the one function the Web Worker calls: JSON text in, JSON text out,
so that every runtime returns byte-identical results. `run` and `call` never raise.

The formulas live in advisor.memory.estimate, advisor.arch.flops, advisor.perf (timing,
training, serving_fit), advisor.money.cost and advisor.advice.recommend (their
docstrings cite the sources); this module only validates, dispatches and shapes the output.

The package (scripts/split_webapi.py): `common`, `vram`, `roofline`, `budget`, `picker`,
`serving`, `cluster`, `report`, `dispatch`; this file re-exports every name, so
`advisor.webapi.run`, `call`, `DEFAULTS`, the request types and the handlers keep their import
path.
"""

from __future__ import annotations

from .budget import BudgetRequest, _no_fit_reason, budget  # noqa: F401
from .cluster import ClusterRequest, cluster  # noqa: F401
from .common import (  # noqa: F401
    _CATALOG_FILE,
    INFER_WEIGHTS,
    MAX_BATCH,
    MAX_CONFIG_CHARS,
    MAX_GPUS,
    MAX_SEQ,
    ROOFLINE_PHASES,
    TASKS,
    _bands,
    _cheapest_offer,
    _f,
    _flag,
    _gpu,
    _gpu_info,
    _memory_band,
    _model,
    _model_info,
    _num_value,
    _read,
    _Request,
    get_catalog,
    load_catalog_documents,
    set_catalog,
)
from .dispatch import DEFAULTS, FUNCTIONS, REQUESTS, _clean, call, dumps, run  # noqa: F401
from .picker import PickerRequest, _finite_or_none, picker  # noqa: F401
from .report import report  # noqa: F401
from .roofline import RooflineRequest, roofline  # noqa: F401
from .serving import ServingRequest, _owned_hour, _serving_ep, _speculation, serving  # noqa: F401
from .vram import (  # noqa: F401
    VramRequest,
    _estimate,
    _max_batch,
    _max_seq,
    _serving_layout,
    _setup,
    _vram_serving,
    vram,
)
