"""The words of advisor's inputs, defined once: every choice list and how the site labels it.

Modules validate against these tuples (memory, recommend, webapi, profile, perf.training), the site's
report form lists them (hooks/reports.py) and the calculators receive them as JSON
(`form_choices()`, shipped by calcruntime/build to calcruntime/browser/render.mjs), so no
list is copied anywhere. The first entry of each tuple is its default and comes first in a form.

"task" is one vocabulary, `TASKS`. A client profile speaks the buyer's words
(`PROFILE_TASKS` + `FINE_TUNING_METHODS`); `task_from_profile` is the explicit mapping.
Weight formats have two names because they are two things: `weights` is the stored format of
the weights served for inference (`WEIGHT_FORMATS`); `quant` is the frozen, quantised base of a
QLoRA fine-tune (`QLORA_BASE_FORMATS`, Dettmers et al. 2023, arXiv:2305.14314).
"""

from __future__ import annotations

# the workload's task (advisor.advice.recommend, advisor.webapi, the calculators)
TASKS = ("inference", "train", "lora", "qlora")
TRAINING_TASKS = TASKS[1:]  # advisor.perf.training's tasks
# a client profile (advisor.advice.profile): the buyer's words, with the fine-tuning method
PROFILE_TASKS = ("serving", "fine-tuning", "training")
FINE_TUNING_METHODS = ("lora", "qlora")
ROOFLINE_PHASES = ("decode", "prefill", "train")

PRECISIONS = ("amp-bf16", "amp-fp16", "bf16", "fp16", "fp32")  # training compute precision
# inference weights: advisor.arch.quant.FORMATS (tests/test_vocab.py checks that the two agree)
WEIGHT_FORMATS = (
    "bf16",
    "fp16",
    "fp32",
    "fp8",
    "int8",
    "int4",
    "nf4",
    "gptq",
    "awq",
    "nvfp4",
    "mxfp4",
    "q8_0",
    "q4_k_m",
    "mlx-4bit",
)
# the local runtimes' formats (llama.cpp GGUF Q8_0 / Q4_K_M, MLX 4-bit): one user on a desktop
# or unified-memory box (advisor.arch.quant, advisor.data.support.local_format)
LOCAL_WEIGHT_FORMATS = ("q8_0", "q4_k_m", "mlx-4bit")
QLORA_BASE_FORMATS = ("nf4", "int8", "int4", "fp8")  # the quantised base of QLoRA
# nvfp4: TensorRT-LLM's FP4 KV cache; mxfp4: SGLang's (`--kv-cache-dtype fp4_e2m1`, OCP MXFP4)
KV_DTYPES = ("bf16", "fp16", "fp32", "fp8", "nvfp4", "mxfp4")
OPTIMIZERS = ("adamw", "adamw-8bit", "adafactor", "sgd", "sgd-momentum")
CHECKPOINTING = ("none", "selective", "full")
# what a form or profile may ask for: "default" is advisor.memory.estimate.default_checkpointing's rule
CHECKPOINTING_CHOICES = ("default", *CHECKPOINTING)
ATTENTION = ("sdpa", "eager")
SHARDING = ("ddp", "zero1", "zero2", "zero3")
ACQUIRE = ("either", "rent", "own")
PRICINGS = ("on_demand", "spot", "reserved")
CURRENCIES = ("USD", "AZN", "EUR")
LANGUAGES = ("az", "en")
SERVING_ENGINES = ("vllm", "trtllm")  # advisor.perf.serving: whose memory plan and step overhead
# prefill and decode on the same GPUs, or on separate pools (advisor.perf.disaggregated)
SERVING_POOLS = ("colocated", "disaggregated")
CLUSTER_PRECISIONS = (
    "bf16",
    "fp8",
    "mxfp8",
    "nvfp4",
)  # advisor.perf.training precisions a cluster plan offers
# A published run's token budget in the cluster calculator (advisor.perf.cluster.TOKEN_BUDGETS;
# "custom": the form's own token count)
TRAINING_RUNS = (
    "custom",
    "mlperf-llama31-405b",
    "mlperf-llama2-70b-lora",
    "deepseek-v3-pretraining",
)
# The VRAM calculator's inference: a continuous-batching server (advisor.perf.serving_fit) or, when
# asked for, one static prefill of the whole batch (advisor.memory.estimate.inference_memory)
INFERENCE_MODES = ("serving", "static")
# The picker's serving formats: "auto" searches advisor.perf.serving_fit.SEARCH_FORMATS; NVFP4 /
# MXFP4 rank only the cards whose FP4 tensor cores take them (advisor.advice.recommend, issue 34);
# llama.cpp's Q8_0 / Q4_K_M and MLX 4-bit only where that runtime runs (advisor.data.support)
PICKER_WEIGHTS = (
    "auto",
    "bf16",
    "fp8",
    "nvfp4",
    "mxfp4",
    "awq",
    "gptq",
    "int8",
    "q8_0",
    "q4_k_m",
    "mlx-4bit",
)

# The calculators' select fields: field name -> choices.
FORM_FIELDS = {
    "task": TASKS,
    "precision": PRECISIONS,
    "weights": WEIGHT_FORMATS,
    "kv_dtype": KV_DTYPES,
    "optimizer": OPTIMIZERS,
    "checkpointing": CHECKPOINTING_CHOICES,
    "sharding": SHARDING,
    "phase": ROOFLINE_PHASES,
    "currency": CURRENCIES,
    "acquire": ACQUIRE,
    "engine": SERVING_ENGINES,
    "pools": SERVING_POOLS,
    "cluster_precision": CLUSTER_PRECISIONS,
    "training_run": TRAINING_RUNS,
    "mode": INFERENCE_MODES,
    "picker_weights": PICKER_WEIGHTS,
}
# The translation key that labels a choice in the calculators (templates/i18n: calc.o.*).
LABEL_KEY = "calc.o.{}"


def label_key(value: str) -> str:
    return LABEL_KEY.format(value)


def form_choices() -> dict[str, list[list[str]]]:
    """{field: [[value, label key], ...]} for the calculators' forms (JSON for the page)."""
    return {name: [[v, label_key(v)] for v in values] for name, values in FORM_FIELDS.items()}


def task_from_profile(task: str, method: str | None = None) -> str:
    """A profile's (task, method) in `TASKS`: serving -> inference, training -> train,
    fine-tuning -> its method (lora | qlora; lora when unset)."""
    if task == "serving":
        return "inference"
    if task == "training":
        return "train"
    if task == "fine-tuning":
        return method if method in FINE_TUNING_METHODS else "lora"
    raise ValueError(f"task: expected one of {PROFILE_TASKS}, got {task!r}")
