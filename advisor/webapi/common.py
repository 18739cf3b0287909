"""What the calculators share: the request-parsing machinery (`_f` field metadata,
`_Request.from_params`, `_read`), the plausible-size limits, the catalog the calculators use
(`set_catalog`, `load_catalog_documents`, `get_catalog`), model and accelerator lookup, the
measured error bands."""

from __future__ import annotations

import re
from dataclasses import field, fields

from ..arch.models import from_config_json
from ..core import limits, vocab
from ..core.counts import parse_count
from ..core.errors import (
    AdvisorError,
    check_choice,
    check_int,
    parse_number,
    shown,
)
from ..core.files import MAX_FILE_BYTES
from ..data.catalog import Catalog, catalog_from_documents, load_catalog

TASKS = vocab.TASKS
INFER_WEIGHTS = vocab.WEIGHT_FORMATS
ROOFLINE_PHASES = vocab.ROOFLINE_PHASES
MAX_BATCH = 65_536
MAX_SEQ = 16_777_216
MAX_GPUS = 1024
MAX_CONFIG_CHARS = MAX_FILE_BYTES  # pasted config.json / profile text: 1 MB, like the CLI's files


def _f(default, kind: str, **meta):
    """A request field: its default and how a form value is read (`kind`: name, text, choice,
    int, tokens (a count that takes K/M/B/T), num, optnum, flag; `meta`: choices, maximum,
    bounds)."""
    return field(default=default, metadata={"kind": kind, **meta})


class _Request:
    """Reads a form dict into the frozen request: every field is type- and range-checked here,
    before anything is computed or cached (keys the request does not know are ignored: the page
    may send its whole state)."""

    @classmethod
    def defaults(cls) -> dict:
        return {f.name: f.default for f in fields(cls)}

    @classmethod
    def from_params(cls, params) -> _Request:
        if not isinstance(params, dict):
            raise AdvisorError("field.not_object", "params: expected an object", field="params")
        values = {}
        for f in fields(cls):
            values[f.name] = _read(f.name, params.get(f.name, f.default), f.metadata)
        return cls(**values)


def _read(name: str, v, meta):
    kind = meta["kind"]
    if kind in ("name", "text"):
        if v is None:
            v = ""
        if not isinstance(v, str):
            raise AdvisorError(
                "field.not_text", f"{name}: expected text, got {shown(v)}", field=name
            )
        limit = MAX_CONFIG_CHARS if kind == "text" else 200
        if len(v) > limit:
            raise AdvisorError(
                "field.too_large", f"{name}: at most {limit} characters", field=name, maximum=limit
            )
        return v.strip() if kind == "name" else v
    if kind == "choice":
        return check_choice(name, v, meta["choices"])
    if kind == "flag":
        return _flag(name, v)
    if kind == "optnum" and (v is None or (isinstance(v, str) and not v.strip())):
        return None
    if kind in ("int", "tokens"):
        # whole counts as people type them: "8,192", "2 000 000"; token counts also "2T"
        # (advisor.core.counts, the CLI's --tokens reading)
        if v is None or (isinstance(v, str) and not v.strip()):
            raise AdvisorError("field.required", f"{name}: a value is required", field=name)
        v = parse_count(name, v, suffixes=kind == "tokens")
        return check_int(name, v, minimum=meta.get("minimum", 1), maximum=meta.get("maximum"))
    v = _num_value(name, v)
    return limits.check_range(
        name, v, meta["bounds"], exclusive_low=meta.get("exclusive_low", False)
    )


_catalog: Catalog | None = None


def set_catalog(catalog: Catalog) -> None:
    global _catalog
    _catalog = catalog


_CATALOG_FILE = re.compile(
    r"(?:(?:models|gpus|clouds|efficiency|networks|systems|owning)/)?[A-Za-z0-9][A-Za-z0-9._-]*\.yaml"
)


def load_catalog_documents(docs: dict) -> Catalog:
    """Build the catalog from `docs` (from advisor.data.catalog.read_documents, e.g. through JSON) and make it
    the one `get_catalog` returns."""
    if not isinstance(docs, dict):
        raise AdvisorError(
            "field.not_object", "catalog documents: expected an object", field="documents"
        )
    for rel in docs:
        # only catalog/-shaped names, as read_documents gives them
        if not isinstance(rel, str) or not _CATALOG_FILE.fullmatch(rel) or ".." in rel:
            raise AdvisorError(
                "catalog.bad_name",
                f"catalog documents: {shown(rel)} is not a catalog file name",
                field="documents",
            )
    cat = catalog_from_documents(docs)
    set_catalog(cat)
    return cat


def get_catalog() -> Catalog:
    global _catalog
    if _catalog is None:
        _catalog = load_catalog()
    return _catalog


def _num_value(name: str, v):
    """A form value as a number: numbers as they are, text in ASCII digits ("0,5" too)."""
    if v is None or (isinstance(v, str) and not v.strip()):
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    return parse_number(name, v)


def _model(req):
    """A ModelSpec from pasted config.json text (`config`) or else a catalog preset (`model`)."""
    if req.config.strip():
        try:
            return from_config_json(req.config, name="custom")
        except AdvisorError as exc:
            if exc.field and not exc.field.startswith("config"):
                exc.field = "config"
            raise
    if not req.model:
        raise AdvisorError("field.required", "model: a value is required", field="model")
    return get_catalog().model(req.model).spec


def _gpu(gid: str, name: str = "gpu"):
    cat = get_catalog()
    if not cat.gpus:
        raise AdvisorError("catalog.no_gpus", "the catalog lists no accelerators", field=name)
    if not gid:
        raise AdvisorError("field.required", f"{name}: a value is required", field=name)
    return cat.gpu(gid)


def _model_info(spec) -> dict:
    from ..arch.models import active_param_count, describe, param_count

    return {
        "layers": describe(spec),
        "name": spec.name,
        "display_name": spec.display_name or spec.name,
        "family": spec.family,
        "params": param_count(spec),
        "active_params": active_param_count(spec),
        "num_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "attention": spec.attention_kind,
        "max_position_embeddings": spec.max_position_embeddings,
    }


def _gpu_info(g) -> dict:
    return {"id": g.id, "name": g.name, "tier": g.tier, "memory_bytes": g.memory_bytes}


def _flag(name: str, v) -> bool:
    """An on/off field as a form or a link sends it (a checkbox's true/false, a link's 1/0, the
    words people type); anything else is refused, naming the field, never read as "on"."""
    if v is None or isinstance(v, bool):
        return bool(v)
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in _FLAG_WORDS:
        return _FLAG_WORDS[v.strip().lower()]
    raise AdvisorError(
        "field.not_bool", f"{name}: expected true or false, got {shown(v)}", field=name
    )


_FLAG_WORDS = {
    "": False,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
}


def _memory_band() -> dict | None:
    """The memory model's measured error band (advisor.perf.accuracy.memory_band)."""
    from ..perf import accuracy

    return accuracy.memory_band()


def _cheapest_offer(gpu_id: str):
    best = None
    for o in get_catalog().offers:
        price = o.on_demand_usd_per_gpu_hour
        if o.gpu_id != gpu_id or price is None:
            continue
        if best is None or price < best.on_demand_usd_per_gpu_hour:
            best = o
    return best


def _bands(*kinds: str, spec=None) -> dict:
    """The time model's measured error bands (advisor.perf.accuracy) for the kinds a result shows;
    with `spec`, a layer-list MoE model's "serving" entry is the MoE serving band
    (accuracy.serving_kind: its `kind` field says which)."""
    from ..perf import accuracy

    pick = {"serving": accuracy.serving_kind(spec)} if spec is not None else {}
    return {k: accuracy.band_dict(pick.get(k, k)) for k in kinds if accuracy.band(pick.get(k, k))}
