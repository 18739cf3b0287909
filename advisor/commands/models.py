"""`python -m advisor models`: list the catalog's model presets, or show one spec
(`models show NAME` or `models show --config FILE`)."""

from __future__ import annotations

from ..arch.models import ModelSpec, active_param_count, describe, embedding_params, param_count
from ..data.catalog import load_catalog
from ._common import print_json, print_table, read_config


def _row(spec: ModelSpec) -> dict:
    return {
        "id": spec.name,
        "display_name": spec.display_name or spec.name,
        "family": spec.family,
        "attention": spec.attention_kind,
        "total_params": param_count(spec),
        "active_params": active_param_count(spec),
        "num_heads": spec.num_heads,
        "num_kv_heads": spec.num_kv_heads,
        "context": spec.max_position_embeddings,
        "sliding_window": spec.sliding_window,
    }


def _layer_lines(d: dict) -> list[str]:
    """The layer list in words: MoE split, experts, windows, MTP, vision tower."""
    lines = []
    if d["moe_layers"]:
        shared = f", shared width {d['shared_expert_width']:,}" if d["shared_expert_width"] else ""
        lines.append(
            f"layers: {d['dense_layers']} dense + {d['moe_layers']} MoE ({d['experts']} routed "
            f"experts, {d['experts_per_token']} per token{shared}); routed-expert weights "
            f"{d['expert_params']:,} (active counts them at k/E)"
        )
    else:
        lines.append(f"layers: {d['layers']} dense")
    if d["windowed_layers"]:
        lines.append(
            f"windowed layers: {d['windowed_layers']} of {d['layers']} keep {d['window_tokens']:,} "
            f"tokens ({d['window_kind']}) once decoding"
        )
    lines.append(
        f"KV cache: {d['kv_elems_per_token']:,} elements per token (all layers, no window)"
    )
    if d["mtp_params"]:
        lines.append(f"MTP modules: {d['mtp_params']:,} parameters, not in the total")
    if d["vision_not_counted"]:
        lines.append("multimodal config: the text model only; the vision tower is not counted")
    return lines


def _billions(n: int) -> str:
    return f"{n / 1e9:.3f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def _list(args) -> int:
    catalog = load_catalog(args.catalog)
    # each preset, then the released models with its architecture (DeepSeek-R1 after V3)
    ids = [i for m in catalog.models for i in (m.id, *(v.id for v in m.variants))]
    rows = [_row(catalog.model(i).spec) for i in ids]
    if args.json:
        return print_json(rows, indent=2)
    head = ("id", "family", "attn", "total", "active", "heads/kv", "context")
    table = [
        (
            r["id"],
            r["family"],
            r["attention"],
            _billions(r["total_params"]),
            _billions(r["active_params"]),
            f"{r['num_heads']}/{r['num_kv_heads']}",
            str(r["context"]),
        )
        for r in rows
    ]
    print_table(head, table)
    extra = len(rows) - len(catalog.models)
    same = f", {extra} sharing a preset's architecture" if extra else ""
    print(f"{len(rows)} models{same} (total/active: parameters, B = 10^9)")
    return 0


def _show(args) -> int:
    if args.config:
        spec = read_config(args.config)
        source = {"config_file": args.config}
    else:
        if not args.name:
            from ..core.errors import AdvisorError

            raise AdvisorError(
                "cli.models.show", "models show: give a preset NAME or --config FILE", field="name"
            )
        preset = load_catalog(args.catalog).model(args.name)
        spec = preset.spec
        source = {"url": preset.source_url, "read": preset.source_read}
    out = {
        **_row(spec),
        "embedding_params": embedding_params(spec),
        "layers": describe(spec),
        "spec": spec.to_dict(),
        "source": source,
    }
    if args.json:
        return print_json(out, indent=2)
    print(f"{out['display_name']}  ({spec.family}, {spec.attention_kind})")
    print(f"  parameters: {out['total_params']:,} total, {out['active_params']:,} active")
    for line in _layer_lines(out["layers"]):
        print("  " + line)
    for key, value in spec.to_dict().items():
        if key not in ("name", "display_name"):
            print(f"  {key}: {value}")
    print("  source: " + ", ".join(f"{k}={v}" for k, v in source.items()))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="list model presets, or show one model's spec")
    p.add_argument("--json", action="store_true", help="JSON output")
    p.set_defaults(func=_list)
    sub = p.add_subparsers(dest="models_command", metavar="show")
    s = sub.add_parser("show", help="one preset (NAME) or a Hugging Face config.json (--config)")
    s.add_argument("name", nargs="?", help="preset id, e.g. llama-3.1-8b")
    s.add_argument("--config", metavar="FILE", help="a Hugging Face config.json file")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=_show)
