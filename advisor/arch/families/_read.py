"""Reading one family's config.json fields: defaults as in that family's transformers
configuration class, every error naming the field (with `text_config.` for a nested text
model). What the families read alike is read here once: heads and head_dim (`heads`), experts
(`experts`), a GQA attention from its `layer_types` name (`attention`), and the fields every
spec takes (`spec`: vocabulary, context, tied embeddings, activation)."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import AdvisorError, check_int, shown
from .. import layers as L
from ._spec import assemble

# Largest sizes accepted from a config: well above any published model, low enough to catch typos.
MAX = {
    "vocab_size": 2_000_000,
    "hidden_size": 131_072,
    "num_hidden_layers": 1_024,
    "num_attention_heads": 1_024,
    "num_key_value_heads": 1_024,
    "head_dim": 4_096,
    "max_position_embeddings": 16_777_216,
    "experts": 4_096,
}
_MAX_WIDTH = 1_048_576
# a `layer_types` name -> the attention's span (transformers' names; others attend to all keys)
SPANS = {"sliding_attention": "sliding", "chunked_attention": "chunked"}


@dataclass(frozen=True)
class Reader:
    """`cfg` with its family's `defaults`; `prefix` names fields in messages ("config." or
    "config.text_config.")."""

    cfg: dict
    defaults: dict
    prefix: str = "config."

    def field(self, key: str) -> str:
        return self.prefix + key

    def raw(self, key: str):
        v = self.cfg.get(key)
        return self.defaults.get(key) if v is None else v

    def has(self, key: str) -> bool:
        return self.raw(key) is not None

    def int(self, key: str, minimum: int = 1, maximum: int | None = None) -> int:
        """A whole number; missing with no class default: ``config.missing``."""
        v = self.raw(key)
        if v is None:
            raise AdvisorError(
                "config.missing",
                f"config.json: missing field {self.field(key)[len('config.') :]!r}",
                field=self.field(key),
            )
        return check_int(self.field(key), v, minimum=minimum, maximum=maximum or _max(key))

    def opt_int(self, key: str, minimum: int = 1, maximum: int | None = None) -> int | None:
        return None if self.raw(key) is None else self.int(key, minimum, maximum)

    def flag(self, key: str, default: bool = False) -> bool:
        v = self.cfg.get(key)
        if v is None:
            v = self.defaults.get(key, default)
        if not isinstance(v, bool):
            raise AdvisorError(
                "field.not_bool",
                f"{self.field(key)}: expected true or false, got {shown(v)}",
                field=self.field(key),
                value=shown(v),
            )
        return v

    def int_list(self, key: str, maximum: int) -> tuple[int, ...] | None:
        """A list of layer indices (0 <= i < maximum), or None when absent."""
        v = self.raw(key)
        if v is None:
            return None
        if not isinstance(v, list):
            raise AdvisorError(
                "field.not_list",
                f"{self.field(key)}: expected a list of layer numbers, got {shown(v)}",
                field=self.field(key),
                value=shown(v),
            )
        return tuple(check_int(self.field(key), i, minimum=0, maximum=maximum - 1) for i in v)

    def layer_types(self, n: int, allowed: tuple[str, ...]) -> tuple[str, ...] | None:
        """`layer_types` when the config gives it: n names from `allowed`."""
        v = self.cfg.get("layer_types")
        if v is None:
            return None
        if not isinstance(v, list) or len(v) != n or any(t not in allowed for t in v):
            raise AdvisorError(
                "config.layer_types",
                f"{self.field('layer_types')}: expected {n} entries from {', '.join(allowed)}, "
                f"got {shown(v)}",
                field=self.field("layer_types"),
                layers=n,
                allowed=", ".join(allowed),
            )
        return tuple(v)

    def heads(self, hidden: int, default_head_dim: int | None = None):
        """(heads, kv_heads, head_dim) with GQA checks: kv heads divide heads; head_dim given,
        else the class default, else hidden // heads (which must divide)."""
        heads = self.int("num_attention_heads")
        kv = self.cfg.get("num_key_value_heads")
        if kv is None:
            kv = self.defaults.get("num_key_value_heads") or heads
        kv = check_int(self.field("num_key_value_heads"), kv, maximum=MAX["num_key_value_heads"])
        if heads % kv:
            raise AdvisorError(
                "config.kv_heads",
                f"{self.field('num_key_value_heads')}: {kv} does not divide "
                f"num_attention_heads {heads}",
                field=self.field("num_key_value_heads"),
            )
        hd = self.cfg.get("head_dim")
        if hd is None:
            hd = default_head_dim
        if hd is None:
            if hidden % heads:
                raise AdvisorError(
                    "config.heads",
                    f"{self.field('num_attention_heads')}: {heads} does not divide hidden_size "
                    f"{hidden} (and no head_dim is given)",
                    field=self.field("num_attention_heads"),
                    heads=heads,
                    hidden_size=hidden,
                )
            hd = hidden // heads
        hd = check_int(self.field("head_dim"), hd, maximum=MAX["head_dim"])
        return heads, kv, hd

    def experts(self, key: str, k_key: str = "num_experts_per_tok") -> tuple[int, int]:
        """(experts, experts per token), the latter at most the former."""
        e = self.int(key, maximum=MAX["experts"])
        k = self.int(k_key, maximum=MAX["experts"])
        if k > e:
            raise AdvisorError(
                "config.experts_per_token",
                f"{self.field(k_key)}: {k} experts per token, but only {e} experts ({key})",
                field=self.field(k_key),
                value=k,
                maximum=e,
            )
        return e, k

    def attention(
        self,
        heads: int,
        kv: int,
        head_dim: int,
        layer_type: str = "full_attention",
        window: int | None = None,
        *,
        qk_norm: str = "",
        sinks: bool = False,
        o_bias: bool = True,
        bias: bool = False,
    ) -> L.Attention:
        """A GQA attention (MHA and MQA by their head counts) as the family's transformers
        module builds it: `attention_bias` (class default `bias`) on the q, k, v projections
        and on o (`o_bias` False: a family whose o_proj never has one); sliding or chunked over `window` keys
        when `layer_type` names it (SPANS), else over the whole context."""
        bias = self.flag("attention_bias", bias)
        span = SPANS.get(layer_type, "full")
        return L.Attention(
            kind="gqa",
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=head_dim,
            span=span,
            window=window if span != "full" else None,
            sinks=sinks,
            qk_norm=qk_norm,
            qkv_bias=bias,
            o_bias=bias and o_bias,
        )

    def spec(
        self,
        *,
        name: str,
        display_name: str,
        family: str,
        layers: tuple,
        hidden_size: int,
        tie: bool = False,
        act_keys: tuple[str, ...] = ("hidden_act",),
        act: str = "silu",
        **extra,
    ) -> dict:
        """`assemble` with the fields every family reads alike: `vocab_size`,
        `max_position_embeddings`, `tie_word_embeddings` (the class default `tie`) and the
        activation (the first of `act_keys` given, else `act`)."""
        return assemble(
            name=name,
            display_name=display_name,
            family=family,
            cfg=self.cfg,
            layers=layers,
            vocab_size=self.int("vocab_size"),
            hidden_size=hidden_size,
            max_position_embeddings=self.int("max_position_embeddings"),
            tie_word_embeddings=self.flag("tie_word_embeddings", tie),
            hidden_act=next((self.cfg[k] for k in act_keys if self.cfg.get(k)), act),
            **extra,
        )


def _max(key: str) -> int:
    if key in MAX:
        return MAX[key]
    if "size" in key or "rank" in key or "dim" in key:
        return _MAX_WIDTH
    return MAX["experts"] if "expert" in key else 16_777_216
