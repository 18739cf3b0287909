#!/usr/bin/env bash
# ONE prepared command for a machine with a CUDA GPU: every workload, results under $OUT.
#   OUT=/some/folder bench/gpu_run.sh        (default OUT=bench_results)
# Budget: about 6-8 minutes on one H200 (each step has its own timeout). Needs torch with CUDA;
# transformers (for the language-model workloads) and nvidia-ml-py (telemetry) are used when
# importable and skipped with a note otherwise. Copy $OUT/*.json into bench_results/ afterwards.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench_results}"
PY="${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT"
LOG="$OUT/gpu_run.log"
: > "$LOG"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }

step() {  # step SECONDS ARGS...: one workload with a time limit; a failure does not stop the rest
  local limit="$1"; shift
  say "bench run $*"
  if timeout --signal=INT --kill-after=15 "$limit" "$PY" -m bench run "$@" --out "$OUT" >>"$LOG" 2>&1; then
    say "  ok: $(tail -n 1 "$LOG")"
  else
    say "  FAILED or timed out (rc $?): see $LOG"
  fi
}

"$PY" - <<'PY' 2>&1 | tee -a "$LOG" || { say "no usable CUDA torch"; exit 1; }
import importlib.util, torch
assert torch.cuda.is_available(), "torch sees no CUDA device"
print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count(),
      torch.cuda.get_device_name(0))
for m in ("transformers", "pynvml"):
    print(m, "present" if importlib.util.find_spec(m) else "MISSING")
PY
NGPU=$("$PY" -c "import torch; print(torch.cuda.device_count())")
HAS_TF=$("$PY" -c "import importlib.util as u; print(int(u.find_spec('transformers') is not None))")
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv >>"$LOG" 2>&1 || true

step 150 matmul --device cuda --warmup 5 --iters 20
step 120 bandwidth --device cuda --warmup 3 --iters 10
if [ "$HAS_TF" = 1 ]; then
  step 150 train-step --device cuda --model gpt2-124m --dtype amp-bf16 --batch 16 --seq 1024 --warmup 3 --iters 20
  step 180 train-step --device cuda --model llama-3.2-1b --dtype amp-bf16 --batch 8 --seq 2048 --warmup 2 --iters 10
  step 90 dataloader --device cuda --iters 3
  step 240 max-batch --device cuda --model gpt2-124m --dtype amp-bf16 --seq 1024 --max-batch-cap 512
else
  say "transformers missing: train-step, dataloader comparison, max-batch and ddp skipped"
  step 90 dataloader --device cuda --iters 3
fi
if [ "$NGPU" -ge 2 ]; then
  step 150 allreduce --device cuda --nproc "$NGPU" --warmup 5 --iters 20
  [ "$HAS_TF" = 1 ] && step 240 ddp --device cuda --nproc "$NGPU" --model gpt2-124m --dtype bf16 --batch 8 --seq 1024 --iters 10
else
  say "one GPU: all-reduce bus bandwidth and DDP scaling need two or more (skipped)"
fi
say "done: $(ls "$OUT"/*.json 2>/dev/null | wc -l) result files in $OUT"
