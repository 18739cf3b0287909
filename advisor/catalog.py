"""The catalog: model presets, accelerators and cloud offers, read from `catalog/` (one YAML per
entity) into advisor's frozen types. The same loader runs at site build time, in tests and in
the CLI; the browser receives the validated catalog as JSON (`Catalog.to_json`).

Every error names the file and the field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import yamlish
from .errors import AdvisorError, unknown_name
from .models import ModelSpec, from_hf_config


def default_root() -> Path:
    """`$ADVISOR_CATALOG`, else the repository's `catalog/` beside the package."""
    env = os.environ.get("ADVISOR_CATALOG")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "catalog"


@dataclass(frozen=True)
class ModelPreset:
    """A catalog model: its architecture plus where the numbers come from."""

    id: str
    display_name: str
    spec: ModelSpec
    source_url: str
    source_read: str  # ISO date the config was read
    doc: dict  # the whole YAML document (for pages and the browser)


def model_preset_from_dict(doc: dict, source: str) -> ModelPreset:
    """Validate one `catalog/models/*.yaml` document (errors name `source` and the field)."""
    if not isinstance(doc, dict):
        raise AdvisorError("catalog.not_mapping", f"{source}: expected a mapping", field=source)
    for key in ("id", "display_name", "source", "config"):
        if key not in doc:
            raise AdvisorError(
                "catalog.missing", f"{source}: missing field {key!r}", field=f"{source}:{key}"
            )
    src = doc["source"]
    if not isinstance(src, dict) or not src.get("url") or not src.get("read"):
        raise AdvisorError(
            "catalog.source",
            f"{source}: field 'source' needs 'url' and 'read' (date)",
            field=f"{source}:source",
        )
    try:
        spec = from_hf_config(doc["config"], name=doc["id"], display_name=doc["display_name"])
    except AdvisorError as exc:
        raise AdvisorError(
            exc.key, f"{source}: {exc.message}", field=f"{source}:{exc.field}"
        ) from None
    return ModelPreset(doc["id"], doc["display_name"], spec, src["url"], str(src["read"]), doc)


def _load_dir(folder: Path, build):
    items = []
    if not folder.is_dir():
        return items
    for path in sorted(folder.glob("*.yaml")):
        doc = yamlish.load_file(path)
        items.append(build(doc, f"{folder.name}/{path.name}"))
    return items


@dataclass(frozen=True)
class Catalog:
    models: tuple[ModelPreset, ...] = ()
    gpus: tuple = ()  # advisor.hardware.GPU
    offers: tuple = ()  # advisor.prices.CloudOffer

    def model(self, name: str) -> ModelPreset:
        for m in self.models:
            if m.id == name:
                return m
        raise unknown_name("model", name, [m.id for m in self.models])

    def to_json(self) -> str:
        """Plain JSON for the browser: the YAML documents as validated."""
        return json.dumps(
            {
                "models": [m.doc for m in self.models],
                "gpus": [g.doc for g in self.gpus],
                "offers": [o.doc for o in self.offers],
            },
            sort_keys=True,
            ensure_ascii=False,
        )


def load_catalog(root: str | os.PathLike | None = None) -> Catalog:
    """Read and validate the whole catalog under `root` (default: `default_root()`)."""
    root = Path(root) if root is not None else default_root()
    models = _load_dir(root / "models", model_preset_from_dict)
    ids = [m.id for m in models]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise AdvisorError(
            "catalog.duplicate", f"models: duplicate id(s) {sorted(dupes)}", field="models"
        )
    return Catalog(models=tuple(models))
