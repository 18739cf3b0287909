"""The entry points: `run(name, params)` and `call(name, params_json)` (never raise), `dumps`, and
the tables `REQUESTS`, `DEFAULTS`, `FUNCTIONS`."""

from __future__ import annotations

import json
import math

from ..core.errors import (
    AdvisorError,
    clip,
    shown,
)
from ..core.files import check_json_depth
from .budget import BudgetRequest, budget
from .cluster import ClusterRequest, cluster
from .common import MAX_CONFIG_CHARS
from .picker import PickerRequest, picker
from .report import report
from .roofline import RooflineRequest, roofline
from .serving import ServingRequest, serving
from .vram import VramRequest, vram

REQUESTS = {
    "vram": VramRequest,
    "roofline": RooflineRequest,
    "budget": BudgetRequest,
    "picker": PickerRequest,
    "serving": ServingRequest,
    "cluster": ClusterRequest,
}
DEFAULTS = {name: req.defaults() for name, req in REQUESTS.items()}
FUNCTIONS = {
    "vram": vram,
    "roofline": roofline,
    "budget": budget,
    "picker": picker,
    "serving": serving,
    "cluster": cluster,
    "report": report,
}


def run(name, params) -> dict:
    """Call calculator `name` with `params`; never raises. An AdvisorError becomes
    {"error": {...}}; any other failure (a bug, or input nested too deeply) becomes an
    ``internal.error`` error object naming the calculator, so the page always gets JSON."""
    try:
        if not isinstance(name, str) or name not in FUNCTIONS:
            from ..core.errors import unknown_name

            raise unknown_name(
                "calculator", shown(name) if not isinstance(name, str) else name, FUNCTIONS
            )
        if not isinstance(params, dict):
            raise AdvisorError("field.not_object", "params: expected an object", field="params")
        return FUNCTIONS[name](params)
    except AdvisorError as exc:
        return {"error": exc.to_dict()}
    except RecursionError:
        return {
            "error": AdvisorError(
                "file.too_deep", "params: nested too deeply", field="params", maximum=64
            ).to_dict()
        }
    except Exception as exc:  # noqa: BLE001 - the contract: bad input never raises
        detail = clip(f"{exc.__class__.__name__}: {exc}", 120)
        return {
            "error": AdvisorError(
                "internal.error",
                f"{name}: could not compute this input ({detail})",
                field=None,
                detail=detail,
                calculator=str(name)[:40],
            ).to_dict()
        }


def _clean(x):
    """JSON cannot carry NaN or infinity: they become null."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def dumps(result: dict) -> str:
    try:
        return json.dumps(result, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: clean the (rare) result and retry
        return json.dumps(_clean(result), sort_keys=True, ensure_ascii=False, allow_nan=False)


def call(name, params_json) -> str:
    """JSON text in, JSON text out: what the Web Worker calls. Never raises."""
    try:
        if not isinstance(params_json, (str, bytes, bytearray)):
            raise TypeError(f"expected JSON text, got {type(params_json).__name__}")
        if len(params_json) > 2 * MAX_CONFIG_CHARS:
            raise ValueError(f"at most {2 * MAX_CONFIG_CHARS} characters")
        if isinstance(params_json, (bytes, bytearray)):
            params_json = bytes(params_json).decode("utf-8")
        check_json_depth(params_json, "params")  # before json.loads: Pyodide's stack is small
        params = json.loads(params_json)
    except AdvisorError as exc:
        return dumps({"error": exc.to_dict()})
    except (ValueError, TypeError, RecursionError) as exc:
        detail = clip(str(exc) or exc.__class__.__name__, 120)
        return dumps(
            {
                "error": AdvisorError(
                    "field.bad_json", detail, field="params", detail=detail
                ).to_dict()
            }
        )
    return dumps(run(name, params))
