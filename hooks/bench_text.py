"""The bench results' English texts (formulas, notes, reasons, units: written by bench/ into
bench_results/*.json) in the page's language.

Each text bench/ writes has a pattern here (`PATTERNS`: a full-match regex with named groups for
its variable parts) and a translation key in templates/i18n/bench.{az,en}.yaml whose text uses
those groups as `{name}` parameters. A note made of parts joined by "; " is translated part by
part. Decimal numbers in a group are shown in the page language's form (advisor.core.numfmt). A text
no pattern knows (an exception's message in a failure note) is shown as it is, marked
`lang="en"`: the quoted output of a run, not the site's own words.

    tr = bench_text.translator(t, lang)
    tr("formula", "B*S/median step = 512/median")  # Markup in the page's language
"""

from __future__ import annotations

import re

import markupsafe

from advisor.core import numfmt
from hooks.templating import MissingTranslation, escape_value

_ID = r"[\w.\-]+"
_NUM = r"[\d.e+\-]+"

# (kind, key, regex): kind "formula" | "note"; bench.<kind>.<key> is the translation key.
PATTERNS: tuple[tuple[str, str, str], ...] = (
    # train-step (bench/workloads.py, bench/lm.py)
    ("formula", "step_time", r"median\(step_time_s samples\)"),
    ("formula", "tokens_per_s", r"B\*S/median step = (?P<tokens>\d+)/median"),
    ("formula", "samples_per_s", r"B/median step = (?P<batch>\d+)/median"),
    (
        "formula",
        "epoch_time",
        r"ceil\(dataset_samples/B\)\*median step = ceil\((?P<samples>\d+)/(?P<batch>\d+)\)\*median",
    ),
    (
        "formula",
        "flops_per_step",
        r"B\*S\*\(6\*N \+ 12\*L\*S\*d_attn\) with N = matmul parameters \(embeddings excluded, "
        r"tied head counted\) = (?P<n>\d+), L = (?P<layers>\d+), d_attn = (?P<d_attn>\d+) "
        r"\(advisor\.(?:compute|perf\.compute|arch\.flops)\.training_flops; Kaplan 2020, PaLM app\. B\)",
    ),
    ("formula", "achieved_tflops", r"flops_per_step/median/1e12"),
    (
        "formula",
        "mfu",
        rf"achieved FLOP/s / catalog dense (?P<dtype>\w+) peak of (?P<gpu>{_ID}) "
        rf"\((?P<peak>{_NUM}) TFLOP/s\)",
    ),
    ("formula", "mfu_none", r"achieved / catalog dense peak"),
    # matmul
    (
        "formula",
        "matmul_best",
        r"max over shapes of 2\*M\*N\*K/median time; best at (?P<shape>\d+x\d+x\d+)",
    ),
    (
        "formula",
        "matmul_fraction",
        rf"best_tflops_(?P<dtype>\w+) / catalog dense \w+ peak of (?P<gpu>{_ID}) \((?P<peak>{_NUM})\)",
    ),
    # bandwidth
    (
        "formula",
        "copy_largest",
        r"2\*bytes/median \(read \+ write, as STREAM's Copy counts bytes\) at the largest size, "
        r"(?P<bytes>\d+) bytes; GB = 1e9 bytes",
    ),
    (
        "formula",
        "bytes_largest",
        r"bytes/median at the largest size, (?P<bytes>\d+) bytes; GB = 1e9 bytes",
    ),
    (
        "formula",
        "copy_best",
        r"max over sizes of 2\*bytes/median \(read \+ write, as STREAM's Copy counts bytes\); "
        r"at (?P<bytes>\d+) bytes \(may be a cache\)",
    ),
    (
        "formula",
        "bytes_best",
        r"max over sizes of bytes/median; at (?P<bytes>\d+) bytes \(may be a cache\)",
    ),
    (
        "formula",
        "bandwidth_fraction",
        rf"device_copy_gb_per_s / catalog (?P<gpu>{_ID}) (?P<bandwidth>{_NUM}) GB/s",
    ),
    # dataloader
    (
        "formula",
        "tokenise",
        r"tokens/median seconds to tokenise the text and pack it into B x S tensors, one process",
    ),
    (
        "formula",
        "feed_ratio",
        rf"(?P<tokenizer>[\w\-]+)_tokens_per_s / train-step tokens_per_s \((?P<train>{_NUM}), "
        rf"(?P<file>{_ID})\)",
    ),
    (
        "formula",
        "processes_needed",
        r"ceil\(1 / (?P<tokenizer>[\w\-]+)_feed_ratio\); this host has (?P<cpus>\d+) CPUs",
    ),
    # max-batch
    (
        "formula",
        "max_batch_budget",
        r"largest batch whose training step fits an imposed budget of (?P<mib>[\d.]+) MiB of live "
        r"tensor bytes \(StorageTracker raises BudgetExceeded\); doubling then bisection, "
        r"cap (?P<cap>\d+)",
    ),
    (
        "formula",
        "max_batch_gpu",
        r"largest batch whose training step fits the GPU's memory \(torch\.cuda\.OutOfMemoryError "
        r"caught and recovered\); doubling then bisection, cap (?P<cap>\d+)",
    ),
    ("formula", "predicted_budget", r"largest b with advisor peak_allocated_bytes <= budget"),
    (
        "formula",
        "predicted_gpu",
        r"advisor\.memory\.max_batch\(setup, GPU memory\) \(uses total_bytes\)",
    ),
    # allreduce, ddp (bench/dist.py)
    (
        "formula",
        "busbw",
        r"max over sizes of \(bytes / t\) \* 2\(n-1\)/n with n = (?P<n>\d+), t = slowest rank's "
        r"median \(nccl-tests PERFORMANCE\.md\); best at (?P<bytes>\d+) bytes",
    ),
    ("formula", "algbw", r"bytes / t at the same size"),
    ("formula", "small_latency", r"smallest median time over sizes"),
    ("formula", "ddp_step", r"median step time at n = (?P<n>\d+)"),
    ("formula", "ddp_tokens", r"n\*B\*S/median step \(global\)"),
    (
        "formula",
        "scaling",
        r"tokens_per_s\(n\) / \(n \* tokens_per_s\(1\)\), weak scaling \(B per rank fixed\)",
    ),
    # notes and reasons
    ("note", "cpu_peak", r"no catalog peak: CPU run"),
    ("note", "gpu_given", rf"catalog GPU given: (?P<gpu>{_ID})"),
    ("note", "gpu_detected", rf"catalog GPU detected: (?P<gpu>{_ID})"),
    ("note", "gpu_unknown", r"no catalog entry matches (?P<name>.+)"),
    ("note", "random", r"random weights and random tokens; loss is not meaningful"),
    ("note", "fp8_skipped", r"fp8 skipped: needs CUDA compute capability >= 8\.9"),
    ("note", "shape_failed", r"(?P<dtype>\w+) (?P<shape>\d+x\d+x\d+) failed: (?P<error>.+)"),
    ("note", "h2d_cpu", r"host-to-device: not applicable on a CPU-only run"),
    (
        "note",
        "no_train_step",
        r"no train-step result for this device in the output folder: no feed ratio",
    ),
    ("note", "no_prediction", r"no advisor prediction: (?P<error>.+)"),
    (
        "note",
        "cpu_ranks",
        r"CPU ranks share this host's cores: scaling here says little about GPUs",
    ),
    (
        "note",
        "one_process_link",
        r"one process: the bus-bandwidth factor 2\(n-1\)/n is 0; no link was measured",
    ),
    ("note", "one_process", r"one process only: no scaling measured"),
)

_COMPILED = tuple((kind, key, re.compile(rx)) for kind, key, rx in PATTERNS)
# Groups quoted from a run's output (an exception's text, a device name): shown as they are.
_QUOTED = {"error", "name"}


def _number(value: str, lang: str) -> str:
    if re.fullmatch(r"\d+\.\d+", value):
        return numfmt.number(float(value), len(value.split(".")[1]), lang)
    if re.fullmatch(r"\d+", value):  # a count (bytes, samples, layers): grouped as on every page
        return numfmt.number(int(value), 0, lang)
    return value


def _quoted(text: str) -> markupsafe.Markup:
    """A run's own English text as it is, marked `lang="en"`: HTML-escaped and its Markdown
    syntax neutralised (templating.escape_value), so a `[x](javascript:...)` in a formula or a
    note stays text (issue 40: it became a link on the benchmarks pages)."""
    return markupsafe.Markup('<span lang="en">{}</span>').format(escape_value(text))


def known(kind: str, text: str) -> bool:
    """Whether a pattern of `kind` matches the whole `text`."""
    return any(k == kind and rx.fullmatch(text) for k, _, rx in _COMPILED)


def translator(t, lang: str):
    """`tr(kind, text)`: the bench text in the page's language (Markup); `tr("unit", u)` too."""

    def one(kind: str, text: str):
        for k, key, rx in _COMPILED:
            if k != kind:
                continue
            m = rx.fullmatch(text)
            if m is None:
                continue
            params = {}
            for name, value in m.groupdict().items():
                if name in _QUOTED:
                    params[name] = _quoted(value)
                else:
                    params[name] = _number(value, lang)
            return t(f"bench.{kind}.{key}", **params)
        return _quoted(text)

    def tr(kind: str, text: str):
        if kind == "unit":
            try:
                return t(f"bench.unit.{text}")
            except MissingTranslation:  # a unit symbol (s, GB/s, FLOP) needs no words
                return text
        if kind == "note" and not known("note", text):
            return markupsafe.Markup("; ").join(one("note", part) for part in text.split("; "))
        return one(kind, text)

    return tr
