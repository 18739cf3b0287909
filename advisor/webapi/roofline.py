"""The roofline calculator."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..arch import flops
from ..data import support
from ..memory import estimate as memory
from ..perf import timing
from .common import (
    INFER_WEIGHTS,
    MAX_BATCH,
    MAX_SEQ,
    ROOFLINE_PHASES,
    _bands,
    _f,
    _gpu,
    _gpu_info,
    _model,
    _model_info,
    _Request,
)


@dataclass(frozen=True)
class RooflineRequest(_Request):
    model: str = _f("llama-3.1-8b", "name")
    config: str = _f("", "text")
    phase: str = _f("decode", "choice", choices=ROOFLINE_PHASES)
    gpu: str = _f("h100-sxm", "name")
    batch: int = _f(1, "int", maximum=MAX_BATCH)
    seq: int = _f(4096, "int", maximum=MAX_SEQ)
    weights: str = _f("bf16", "choice", choices=INFER_WEIGHTS)
    precision: str = _f("bf16", "choice", choices=("bf16", "fp16", "fp8", "fp32", "tf32"))


def roofline(params: dict) -> dict:
    """The workload's arithmetic intensity against the chosen accelerator's roofline
    (Williams, Waterman, Patterson 2009, CACM 52(4)) at datasheet peaks (advisor.perf.timing.roofline);
    FLOPs from advisor.arch.flops, bytes from advisor.perf.timing."""
    req = RooflineRequest.from_params(params)
    spec = _model(req)
    g = _gpu(req.gpu)
    support.check_weights(g, req.weights)
    phase, batch, seq, weights, precision = (
        req.phase,
        req.batch,
        req.seq,
        req.weights,
        req.precision,
    )
    if phase == "decode":
        from ..arch.models import require_causal

        require_causal(spec)  # an encoder has no decode step
        fl = flops.decode_flops(spec, seq, batch)
        nbytes = timing.decode_weight_bytes(spec, weights, batch) + timing.kv_read_bytes(
            spec, seq, batch
        )
        est = memory.inference_memory(
            memory.InferenceSetup(model=spec, batch=batch, seq=seq, weights=weights)
        )
    elif phase == "prefill":
        fl = flops.prefill_flops(spec, seq, batch)
        nbytes = timing.decode_weight_bytes(spec, weights, batch) + timing.kv_read_bytes(
            spec, seq, batch
        )
        est = memory.inference_memory(
            memory.InferenceSetup(model=spec, batch=batch, seq=seq, weights=weights)
        )
    else:
        setup = memory.TrainingSetup(model=spec, batch=batch, seq=seq, precision="amp-bf16")
        est = memory.training_memory(setup)
        fl = flops.training_flops(spec, batch * seq, seq).hardware_flops
        nbytes = timing.training_bytes(est.components)
    r = timing.roofline(fl, nbytes, g, precision, fits=est.total_bytes <= g.memory_bytes)
    out = r.to_dict()
    if math.isinf(out["intensity_flop_per_byte"]):
        out["intensity_flop_per_byte"] = None
    out.update(
        model=_model_info(spec),
        gpu=_gpu_info(g),
        phase=phase,
        total_bytes=est.total_bytes,
        accuracy=_bands({"decode": "decode", "prefill": "prefill"}.get(phase, "training")),
    )
    return out
