"""What every page's figures share: the catalog ids the guide uses, the build's catalog, cache reset.

Part of hooks/facts/ (the guide's figures; see its __init__)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parents[2]

# Catalog ids the guide uses (one place to change them).
MODELS = {
    "gpt2": "gpt2-124m",
    "llama1b": "llama-3.2-1b",
    "qwen05": "qwen2.5-0.5b",
    "llama8b": "llama-3.1-8b",
    "llama70b": "llama-3.1-70b",
    "llama405b": "llama-3.1-405b",
    "mixtral": "mixtral-8x7b",
    "dsv3": "deepseek-v3",
    "qwen3moe": "qwen3-30b-a3b",
    "gptoss20": "gpt-oss-20b",
    "gptoss120": "gpt-oss-120b",
    "gemma3": "gemma-3-27b",
}
GPUS = {
    "h100": "h100-sxm",
    "h100pcie": "h100-pcie",
    "h200": "h200",
    "b200": "b200",
    "a100": "a100-80gb-sxm",
    "mi300x": "mi300x",
    "l40s": "l40s",
    "rtx6000ada": "rtx-6000-ada",
    "rtx4090": "rtx-4090",
    "rtx3090": "rtx-3090",
    "rtxa6000": "rtx-a6000",
    "rtx5090": "rtx-5090",
    "rtx3060": "rtx-3060-12gb",
    # issue 34: the accelerators of 2026
    "b300": "b300",
    "gb200": "gb200",
    "gb300": "gb300",
    "h20": "h20",
    "mi355x": "mi355x",
    "mi350x": "mi350x",
    "tpuv5e": "tpu-v5e",
    "tpuv5p": "tpu-v5p",
    "tpuv6e": "tpu-v6e",
    "tpu7x": "tpu-7x",
    "trn2": "trainium2",
    "m3ultra": "m3-ultra",
    "m4max": "m4-max",
    "spark": "dgx-spark",
    "strix": "ryzen-ai-max-395",
}

# Thermal conversion: 1 W = 3.412 BTU/h (NIST SP 811, appendix B.8).
BTU_PER_H_PER_W = 3.412
HOURS_PER_YEAR = 8760


def _frozen(**kw) -> MappingProxyType:
    return MappingProxyType(kw)


_SOURCE: dict = {}  # "catalog", "root": what the build handed over (hooks.state.load)


def use_catalog(cat, root: Path) -> None:
    """Compute every figure from `cat` (the build's one catalog) and files under `root`; the
    cached figures of a previous build are dropped."""
    reset()
    _SOURCE.update(catalog=cat, root=root)


def reset() -> None:
    """Back to the default catalog (loaded on first use)."""
    _SOURCE.clear()
    for value in _all_values():
        if callable(value) and hasattr(value, "cache_clear"):
            value.cache_clear()


def root() -> Path:
    return _SOURCE.get("root", ROOT)


def catalog():
    """The build's catalog; outside a build (tests of this module) `$ADVISOR_CATALOG` or the
    repository's catalog/, loaded once."""
    if "catalog" not in _SOURCE:
        from advisor.data.catalog import load_catalog

        _SOURCE["catalog"] = load_catalog(os.environ.get("ADVISOR_CATALOG") or ROOT / "catalog")
    return _SOURCE["catalog"]


def model(key: str):
    """The catalog preset for a guide key (or a catalog id)."""
    return catalog().model(MODELS.get(key, key))


def gpu(key: str):
    """The catalog accelerator for a guide key (or a catalog id)."""
    return catalog().gpu(GPUS.get(key, key))


def _mem():
    from advisor.memory import estimate as memory

    return memory


def _all_values() -> list:
    """Everything the modules of this package define (`reset` clears their caches)."""
    pkg = __name__.rpartition(".")[0]
    return [
        v
        for name, m in list(sys.modules.items())
        if name == pkg or name.startswith(pkg + ".")
        for v in vars(m).values()
    ]
