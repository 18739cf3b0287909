"""The catalog: model presets, accelerators and cloud offers, read from `catalog/` (one YAML per
entity) into advisor's frozen types. The same loader runs at site build time, in tests and in
the CLI; the browser receives the parsed documents as JSON (`read_documents`) and builds the
catalog with the same validators (`catalog_from_documents`), without parsing YAML.

Every error names the file and the field.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..arch.models import ModelSpec, from_hf_config
from ..core.errors import AdvisorError, check_http_url, shown, unknown_name, yaml_error
from ..core.files import check_depth, read_text, require_folder
from ..core.ids import check_id
from ..core.limits import check_range
from .fabrics import fabric_from_dict
from .hardware import GPU, check_iso_date, check_keys, gpu_from_dict
from .prices import CloudOffer, CurrencyRates, currency_from_dict, offers_from_dict


def default_root() -> Path:
    """`$ADVISOR_CATALOG`, else the repository's `catalog/` beside the package."""
    env = os.environ.get("ADVISOR_CATALOG")
    return Path(env) if env else Path(__file__).resolve().parent.parent.parent / "catalog"


MODEL_KEYS = (
    "id",
    "display_name",
    "source",
    "config",
    "family_note",
    "license",
    "published_params",
    "published_params_source",
    "notes",
    "same_architecture",
)
VARIANT_KEYS = ("id", "display_name", "source")


def read_document(path: Path, name: str):
    """One catalog YAML document: at most 1 MB of UTF-8 (advisor.core.files), nested at most 64 deep;
    errors name the file."""
    # here, not at the top: the calculators' worker builds its catalog from the documents as
    # JSON (catalog_from_documents) and needs no YAML reader, so PyYAML is installed there only
    # when a report first asks for it (calcruntime/browser/worker.mjs REPORT_ONLY)
    from ..core import yamlsafe

    try:
        doc = yamlsafe.loads(read_text(path, name), source=name)
    except RecursionError:
        raise AdvisorError(
            "file.too_deep", f"{name}: nested too deeply", field=name, file=name
        ) from None
    except AdvisorError:
        raise
    except ValueError as exc:  # the YAML reader's own failure on malformed text
        raise yaml_error(name, exc) from None
    check_depth(doc, name)
    return doc


def _plausible_numbers(source: str, obj, path: str, limit: float = 1e15) -> None:
    """Every number in a model's config within +-`limit` (rope_theta, the largest real figure,
    is ~1e7; sizes are checked one by one by advisor.arch.models): a 1e300 would reach the pages."""
    stack = [(obj, path)]
    while stack:
        x, where = stack.pop()
        if isinstance(x, dict):
            stack.extend((v, f"{where}.{k}") for k, v in x.items())
        elif isinstance(x, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(x))
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            finite = math.isfinite(x) if isinstance(x, float) else True
            if not finite or abs(x) > limit:
                raise AdvisorError(
                    "field.too_large",
                    f"{source}: {where}: {shown(x)} is not a plausible figure (at most {limit:g})",
                    field=f"{source}:{where}",
                    maximum=limit,
                )


def _yaml_files(folder: Path) -> list[Path]:
    """The folder's `*.yaml` files. Any `*.yml`, `*.YAML` (or other YAML-looking) file is refused:
    it would otherwise be silently left out of the catalog."""
    stray = sorted(
        p.name
        for p in folder.iterdir()
        if p.suffix.lower() in (".yml", ".yaml", ".json") and p.suffix != ".yaml"
    )
    if stray:
        raise AdvisorError(
            "catalog.bad_extension",
            f"{folder.name}/{stray[0]}: catalog documents end in .yaml (rename it or remove it)",
            field=f"{folder.name}/{stray[0]}",
            file=f"{folder.name}/{stray[0]}",
        )
    return sorted(folder.glob("*.yaml"))


@dataclass(frozen=True)
class ModelPreset:
    """A catalog model: its architecture plus where the numbers come from."""

    id: str
    display_name: str
    spec: ModelSpec
    source_url: str
    source_read: str  # ISO date the config was read
    doc: dict  # the whole YAML document (for pages and the browser)
    # released checkpoints with this exact architecture (DeepSeek-R1 beside DeepSeek-V3): each
    # is asked for by its own id and answers with this spec (`Catalog.model`)
    variants: tuple = ()


@dataclass(frozen=True)
class ModelVariant:
    """A released model whose config.json has the same sizes as its preset's (`same_architecture`
    in catalog/models/*.yaml): its own id, name and source, the preset's spec."""

    id: str
    display_name: str
    source_url: str
    source_read: str


def _model_source(src, where: str, field: str) -> tuple[str, str]:
    """(url, read) of a model's or a variant's `source`: a mapping with an http(s) url and an ISO
    read date; errors name `field`."""
    if not isinstance(src, dict) or not src.get("url") or not src.get("read"):
        raise AdvisorError(
            "catalog.source", f"{where}: field 'source' needs 'url' and 'read' (date)", field=field
        )
    check_http_url(f"{field}.url", src["url"])
    check_iso_date(where, "source.read", src["read"])
    return src["url"], str(src["read"])


def _variants(doc: dict, source: str) -> tuple:
    """`same_architecture`: a list of {id, display_name, source: {url, read, checked}}."""
    items = doc.get("same_architecture", [])
    if not isinstance(items, list):
        raise AdvisorError(
            "field.not_list",
            f"{source}: same_architecture: expected a list",
            field=f"{source}:same_architecture",
        )
    out = []
    for i, v in enumerate(items):
        where = f"{source}:same_architecture[{i}]"
        if not isinstance(v, dict):
            raise AdvisorError("catalog.not_mapping", f"{where}: expected a mapping", field=where)
        check_keys(where, v, VARIANT_KEYS)
        check_id(where, "id", v.get("id"))
        name = v.get("display_name")
        if not isinstance(name, str) or not name.strip():
            raise AdvisorError(
                "field.not_text",
                f"{where}: display_name: expected text",
                field=f"{where}.display_name",
            )
        url, read = _model_source(v.get("source"), where, f"{where}.source")
        out.append(ModelVariant(v["id"], name, url, read))
    return tuple(out)


def model_preset_from_dict(doc: dict, source: str) -> ModelPreset:
    """Validate one `catalog/models/*.yaml` document (errors name `source` and the field)."""
    if not isinstance(doc, dict):
        raise AdvisorError("catalog.not_mapping", f"{source}: expected a mapping", field=source)
    for key in ("id", "display_name", "source", "config"):
        if key not in doc:
            raise AdvisorError(
                "catalog.missing", f"{source}: missing field {key!r}", field=f"{source}:{key}"
            )
    check_keys(source, doc, MODEL_KEYS)
    check_id(source, "id", doc["id"])
    for key in ("id", "display_name", "family_note", "license", "published_params_source"):
        if (key in doc or key in ("id", "display_name")) and (
            not isinstance(doc[key], str) or not doc[key].strip()
        ):
            raise AdvisorError(
                "field.not_text", f"{source}: {key}: expected text", field=f"{source}:{key}"
            )
    if "published_params" in doc:
        try:
            check_range("published_params", doc["published_params"], (1e4, 1e14))
        except AdvisorError as exc:
            raise AdvisorError(
                exc.key, f"{source}: {exc.message}", field=f"{source}:published_params"
            ) from None
    _plausible_numbers(source, doc.get("config"), "config")
    url, read = _model_source(doc["source"], source, f"{source}:source")
    try:
        spec = from_hf_config(doc["config"], name=doc["id"], display_name=doc["display_name"])
    except AdvisorError as exc:
        raise AdvisorError(
            exc.key, f"{source}: {exc.message}", field=f"{source}:{exc.field}"
        ) from None
    return ModelPreset(doc["id"], doc["display_name"], spec, url, read, doc, _variants(doc, source))


# catalog/<folder>/*.yaml
FOLDERS = ("models", "gpus", "efficiency", "networks", "clouds", "systems", "owning")
TOP_LEVEL = ("currency.yaml",)


def read_documents(root: str | os.PathLike) -> dict[str, object]:
    """Every catalog document under `root`, parsed (`read_document`): {relative path: document}
    in path order, e.g. "gpus/h100-sxm.yaml". Plain data only (text, numbers, true/false, null,
    lists, mappings: advisor.core.yamlsafe), so it travels as JSON: the site ships it to the browser,
    which then builds the catalog without parsing YAML (`catalog_from_documents`; parsing
    with pure-Python PyYAML took 0.3 s of the calculators' plain start)."""
    root = require_folder(root, "catalog", "catalog.missing_folder")
    docs: dict[str, object] = {}
    for folder in FOLDERS:
        if (root / folder).is_dir():
            for path in _yaml_files(root / folder):
                name = f"{folder}/{path.name}"
                docs[name] = read_document(path, name)
    for name in TOP_LEVEL:
        if (root / name).exists():
            docs[name] = read_document(root / name, name)
    return dict(sorted(docs.items()))


def _documents_in(docs: dict, folder: str) -> list[tuple[str, object]]:
    """(name, document) of `docs` in catalog/`folder`/, in name order."""
    return sorted((k, v) for k, v in docs.items() if k.startswith(folder + "/"))


def _load_dir(docs: dict, folder: str, build):
    return [(build(doc, name), name) for name, doc in _documents_in(docs, folder)]


@dataclass(frozen=True)
class Catalog:
    models: tuple[ModelPreset, ...] = ()
    gpus: tuple[GPU, ...] = ()
    offers: tuple[CloudOffer, ...] = ()
    currency: CurrencyRates | None = None
    networks: tuple = ()  # advisor.data.fabrics.Fabric, from catalog/networks/
    systems: tuple = ()  # advisor.data.systems.System, from catalog/systems/
    owning: object = None  # advisor.data.owning.OwningFigures, from catalog/owning/

    def network(self, fabric_id: str):
        """The network fabric with this id (catalog/networks/); unknown ids raise with
        suggestions."""
        for f in self.networks:
            if f.id == fabric_id:
                return f
        raise unknown_name("network", str(fabric_id), [f.id for f in self.networks])

    def model(self, name: str) -> ModelPreset:
        """The preset with this id, or a released variant of one (`same_architecture`: DeepSeek-R1
        is DeepSeek-V3's architecture) under its own id, name and source; unknown names raise
        `unknown_name` with suggestions."""
        from dataclasses import replace

        for m in self.models:
            if m.id == name:
                return m
        for m in self.models:
            for v in m.variants:
                if v.id == name:
                    spec = replace(m.spec, name=v.id, display_name=v.display_name)
                    return replace(
                        m,
                        id=v.id,
                        display_name=v.display_name,
                        spec=spec,
                        source_url=v.source_url,
                        source_read=v.source_read,
                    )
        raise unknown_name("model", name, self.model_names())

    def model_names(self) -> tuple[str, ...]:
        """Every id `model` answers: the presets' and their variants'."""
        return tuple(m.id for m in self.models) + tuple(
            v.id for m in self.models for v in m.variants
        )

    def gpu(self, gpu_id: str) -> GPU:
        """The accelerator with this id; unknown ids raise `unknown_name` with suggestions."""
        for g in self.gpus:
            if g.id == gpu_id:
                return g
        raise unknown_name("gpu", str(gpu_id), [g.id for g in self.gpus])

    @property
    def providers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o.provider for o in self.offers))

    def offers_for(self, gpu_id: str) -> tuple[CloudOffer, ...]:
        """Offers for a GPU, cheapest on-demand first, then those with no on-demand price (spot or
        capacity block only; `on_demand_note` says why). An unknown id raises, with suggestions."""
        self.gpu(gpu_id)
        hits = [o for o in self.offers if o.gpu_id == gpu_id]
        od = "on_demand_usd_per_gpu_hour"
        return tuple(
            sorted(hits, key=lambda o: (getattr(o, od) is None, getattr(o, od) or 0.0, o.provider))
        )

    def offers_by_provider(self, provider: str) -> tuple[CloudOffer, ...]:
        if provider not in self.providers:
            raise unknown_name("provider", str(provider), self.providers)
        return tuple(o for o in self.offers if o.provider == provider)

    def to_json(self) -> str:
        """Plain JSON for the browser: the validated documents, offers and currency rates."""
        return json.dumps(
            {
                "models": [m.doc for m in self.models],
                "gpus": [g.to_dict() for g in self.gpus],
                "offers": [o.doc for o in self.offers],
                "currency": self.currency.doc if self.currency else None,
            },
            sort_keys=True,
            ensure_ascii=False,
        )


def _unique(kind: str, items: list[tuple]) -> tuple:
    """The built items of `_load_dir`; two documents with one id name both files."""
    seen: dict[str, str] = {}
    for item, name in items:
        if item.id in seen:
            raise AdvisorError(
                "catalog.duplicate",
                f"{name}: id: {item.id!r} is also the id in {seen[item.id]}",
                field=f"{name}:id",
                file=name,
                other=seen[item.id],
                id=item.id,
            )
        seen[item.id] = name
    return tuple(item for item, _ in items)


def _load_offers(docs: dict, gpu_ids: list[str]) -> list[CloudOffer]:
    offers: list[CloudOffer] = []
    seen: dict[str, str] = {}
    for name, doc in _documents_in(docs, "clouds"):
        got = offers_from_dict(doc, name)
        if got and got[0].provider in seen:
            raise AdvisorError(
                "catalog.duplicate",
                f"{name}: provider: {got[0].provider!r} is also in {seen[got[0].provider]}",
                field=f"{name}:provider",
            )
        for i, o in enumerate(got):
            if o.gpu_id not in gpu_ids:
                exc = unknown_name("gpu", o.gpu_id, gpu_ids)
                raise AdvisorError(
                    exc.key,
                    f"{name}: offers[{i}].gpu: {exc.message}",
                    field=f"{name}:offers[{i}].gpu",
                    **{k: v for k, v in exc.params.items() if k != "field"},
                )
        if got:
            seen[got[0].provider] = name
        offers.extend(got)
    return offers


def load_catalog(root: str | os.PathLike | None = None) -> Catalog:
    """Read and validate the whole catalog under `root` (default: `default_root()`)."""
    return catalog_from_documents(read_documents(root if root is not None else default_root()))


def catalog_from_documents(docs: dict) -> Catalog:
    """Validate the parsed documents of `read_documents` ({relative path: document}) into the
    catalog: the one builder behind `load_catalog` and the browser's JSON copy."""
    for name, doc in docs.items():
        check_depth(doc, name)
    loaded = _load_dir(docs, "models", model_preset_from_dict)
    models = _unique("models", loaded)
    # a variant's id is asked for like a preset's: it may not be another model's id
    _unique("models", [(m, n) for m, n in loaded] + [(v, n) for m, n in loaded for v in m.variants])
    gpus = _unique("gpus", _load_dir(docs, "gpus", gpu_from_dict))
    gpu_ids = [g.id for g in gpus]
    gpus = _with_achievable(docs, list(gpus))
    networks = _unique("networks", _load_dir(docs, "networks", fabric_from_dict))
    offers = _load_offers(docs, gpu_ids)
    from .systems import system_from_dict

    systems = _unique("systems", _load_dir(docs, "systems", system_from_dict))
    from .owning import owning_from_documents

    owning = owning_from_documents(_documents_in(docs, "owning"))
    currency = (
        currency_from_dict(docs["currency.yaml"], "currency.yaml")
        if "currency.yaml" in docs
        else None
    )
    return Catalog(
        models=tuple(models),
        gpus=tuple(gpus),
        offers=tuple(offers),
        currency=currency,
        networks=tuple(networks),
        systems=tuple(systems),
        owning=owning,
    )


def _with_achievable(docs: dict, gpus: list[GPU]) -> list[GPU]:
    """Each GPU with its advisor.data.achievable.Achievable: its own `catalog/efficiency/<id>.yaml`
    where there is one, else its vendor's median (achievable.vendor_defaults)."""
    from dataclasses import replace

    from .achievable import achievable_from_dict, vendor_defaults

    by_id = {g.id: g for g in gpus}
    measured, measured_in, searched = {}, {}, {}
    for name, doc in _documents_in(docs, "efficiency"):
        gid = doc.get("id") if isinstance(doc, dict) else None
        check_id(name, "id", gid)
        if gid in measured:
            raise AdvisorError(
                "catalog.duplicate",
                f"{name}: id: {gid!r} also has {measured_in[gid]}",
                field=f"{name}:id",
                file=name,
                other=measured_in[gid],
                id=gid,
            )
        if gid not in by_id:
            err = unknown_name("id", shown(str(gid)), list(by_id))
            raise AdvisorError("catalog.efficiency", f"{name}: {err.message}", field=f"{name}:id")
        try:
            found = achievable_from_dict(doc, name, by_id[gid])
        except AdvisorError as exc:
            if name in exc.message:
                raise
            raise AdvisorError(
                exc.key, f"{name}: {exc.message}", field=f"{name}:{exc.field}"
            ) from None
        if not found.sources:
            # no figure: the file records where a measurement was looked for (notes); the card
            # keeps its vendor's median or the stated assumption and joins no median
            searched[gid] = name
            measured_in[gid] = name
            continue
        measured[gid] = found
        measured_in[gid] = name
    table = vendor_defaults(gpus, measured)
    for gid, name in searched.items():
        if not table[gid].peers:
            table[gid] = replace(table[gid], sources={"searched": f"catalog/{name}"})
    return [replace(g, achievable=table[g.id]) for g in gpus]
