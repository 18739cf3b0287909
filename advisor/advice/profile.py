"""Client profiles: who the client is, what they want to run and under which constraints.

A profile is a YAML document (read with `advisor.core.yamlsafe`) turned into frozen dataclasses. Every
bad field is collected and reported at once: `parse_profile` raises ONE `AdvisorError` with key
``"profile.invalid"`` whose ``params["errors"]`` lists ``{field, key, message}`` for each bad
field (fields named by their path, e.g. ``workloads[1].seq``). Text fields are kept exactly as
written; escaping is the renderer's job (advisor.report escapes every value).

Schema (units in the names)::

    organisation: "Example Bank"            # required text
    prepared_for: "IT department"           # optional text
    date: "2026-12-02"                      # optional ISO date of the engagement
    workloads:                              # at least one
      - name: "Internal assistant"          # required text
        model: llama-3.1-70b                # catalog preset id, or {name: ..., config: {HF config}}
        task: serving                       # training | fine-tuning | serving
        method: qlora                       # fine-tuning only: lora | qlora (default lora)
        dataset_tokens: 50000000            # training / fine-tuning: tokens per epoch
        epochs: 3                           # default 1
        seq: 4096                           # context length in tokens (default 2048)
        batch: 4                            # training micro-batch per GPU (default 1)
        weights: bf16                       # serving weight format (default bf16; auto: searched)
        concurrent_users: 50                # serving: simultaneous requests at peak
        users: 500                          # serving: people who use it (informative)
        target_latency_ms: 50.0             # serving: time per output token per user, or
        target_tokens_per_s: 20.0           # serving: tokens/s per user
        deadline_hours: 48.0                # training: wall-clock limit of one run
        hours_per_day: 10.0                 # serving: busy hours a day (default 24)
        runs_per_year: 12                   # training: how often the run is repeated (default 1)
    constraints:
      budget: 200000.0                      # in `currency`: the most to spend (purchase or bill)
      horizon_months: 36                    # default 36
      power_kw: 10.0                        # on-premises power available for the cards
      rack_units: 8                         # on-premises rack space (informative)
      acquire: own                          # rent | own | either (default either)
      currency: AZN                         # USD | AZN | EUR (default USD)
      language: az                          # az | en (default az)
      electricity_usd_per_kwh: 0.08         # default: U.S. EIA commercial average
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass

from ..core import vocab, yamlsafe
from ..core.errors import AdvisorError, shown, suggest

TASKS = vocab.PROFILE_TASKS
METHODS = vocab.FINE_TUNING_METHODS
ACQUIRE = vocab.ACQUIRE
CURRENCIES = vocab.CURRENCIES
LANGUAGES = vocab.LANGUAGES
# the inference weight formats (advisor.core.vocab, fp32 aside) and "auto": the serving search
# (advisor.perf.serving_fit.SEARCH_FORMATS / SEARCH_KV) picks the format;
# nvfp4 / mxfp4: FP4 block formats (only cards with a path for them rank, advisor.data.support);
# llama.cpp's q8_0 / q4_k_m and MLX's mlx-4bit: one user's desktop runtimes (advisor.arch.quant)
WEIGHTS = (*(f for f in vocab.WEIGHT_FORMATS if f != "fp32"), "auto")
_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# The workload fields each task uses (the report form shows these; `_workload` refuses the
# serving fields on a training workload and the training fields on a serving one).
TASK_FIELDS = {
    "serving": (
        "workload", "model", "task", "weights", "seq", "users", "concurrent_users",
        "target_latency_ms", "target_tokens_per_s", "hours_per_day",
    ),
    "fine-tuning": (
        "workload", "model", "task", "method", "dataset_tokens", "epochs", "seq", "batch",
        "deadline_hours", "runs_per_year",
    ),
    "training": (
        "workload", "model", "task", "dataset_tokens", "epochs", "seq", "batch",
        "deadline_hours", "runs_per_year",
    ),
}  # fmt: skip


def _calendar_day(text: str) -> bool:
    """A real calendar day in ISO form, 1990-2100 (2026-02-31 is not; issue 40)."""
    if not _ISO.fullmatch(text):
        return False
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return 1990 <= day.year <= 2100


_TOP = ("organisation", "prepared_for", "date", "workloads", "constraints")
_WORKLOAD = (
    "name",
    "model",
    "task",
    "method",
    "dataset_tokens",
    "epochs",
    "seq",
    "batch",
    "weights",
    "concurrent_users",
    "users",
    "target_latency_ms",
    "target_tokens_per_s",
    "deadline_hours",
    "hours_per_day",
    "runs_per_year",
)
_CONSTRAINTS = (
    "budget",
    "horizon_months",
    "power_kw",
    "rack_units",
    "acquire",
    "currency",
    "language",
    "electricity_usd_per_kwh",
)


@dataclass(frozen=True)
class ModelRef:
    """A catalog preset (`preset` set) or an inline Hugging Face config (`config` set)."""

    preset: str | None = None
    name: str | None = None
    config: dict | None = None

    @property
    def label(self) -> str:
        return self.preset or self.name or "custom"


@dataclass(frozen=True)
class Workload:
    name: str
    model: ModelRef
    task: str
    method: str | None = None  # fine-tuning: lora | qlora
    dataset_tokens: int | None = None
    epochs: int = 1
    seq: int = 2048
    batch: int = 1
    weights: str = "bf16"
    concurrent_users: int | None = None
    users: int | None = None
    target_latency_ms: float | None = None
    target_tokens_per_s: float | None = None
    deadline_hours: float | None = None
    hours_per_day: float | None = None
    runs_per_year: int | None = None

    @property
    def advisor_task(self) -> str:
        """The task name advisor.advice.recommend uses (`vocab.task_from_profile`)."""
        return vocab.task_from_profile(self.task, self.method)

    @property
    def per_user_tokens_per_s(self) -> float | None:
        """Serving target per user: tokens/s, or 1000 / time-per-output-token in ms."""
        if self.target_tokens_per_s is not None:
            return self.target_tokens_per_s
        if self.target_latency_ms is not None:
            return 1000.0 / self.target_latency_ms
        return None

    @property
    def total_tokens(self) -> int | None:
        """Tokens one training run processes: dataset tokens x epochs."""
        if self.dataset_tokens is None:
            return None
        return self.dataset_tokens * self.epochs


@dataclass(frozen=True)
class Constraints:
    budget: float | None = None
    horizon_months: int = 36
    power_kw: float | None = None
    rack_units: int | None = None
    acquire: str = "either"
    currency: str = "USD"
    language: str = "az"
    electricity_usd_per_kwh: float | None = None


@dataclass(frozen=True)
class Profile:
    organisation: str
    workloads: tuple[Workload, ...]
    constraints: Constraints
    prepared_for: str | None = None
    date: str | None = None

    @property
    def slug(self) -> str:
        """A file-name-safe slug of the organisation (advisor.core.files.file_slug: non-ASCII names
        get a short hash, so two organisations never share a report file name)."""
        from ..core.files import file_slug

        return file_slug(self.organisation)


# ---------------------------------------------------------------------------------------------
# Parsing with every error collected
# ---------------------------------------------------------------------------------------------


class _Errors:
    def __init__(self):
        self.items: list[dict] = []

    def add(self, field: str, key: str, message: str, **params) -> None:
        """One bad field: its path, message key, English message and the key's parameters
        (plain JSON: the report form shows the message in the page's language with them)."""
        self.items.append(
            {"field": field, "key": key, "message": f"{field}: {message}", "params": params}
        )


# What a profile field takes when it is left out (the report form in hooks/reports.py shows the
# same values): the one place these defaults live.
DEFAULTS = {"epochs": 1, "seq": 2048, "batch": 1, "horizon_months": 36}


def _unknown_keys(doc: dict, allowed, prefix: str, errs: _Errors) -> None:
    for key in doc:
        if key not in allowed:
            hints = suggest(str(key), allowed)
            tail = f"; did you mean {', '.join(hints)}?" if hints else ""
            errs.add(
                f"{prefix}{key}",
                "profile.unknown_field",
                f"unknown field{tail}",
                name=str(key)[:80],
                suggestions=hints,
            )


def _text(doc, key, field, errs, required=False):
    v = doc.get(key)
    if v is None:
        if required:
            errs.add(field, "field.required", "required")
        return None
    if not isinstance(v, str) or not v.strip():
        errs.add(field, "field.not_text", f"expected text, got {v!r}")
        return None
    if len(v) > 500:
        errs.add(field, "field.too_long", "must be at most 500 characters", maximum=500)
        return None
    return v


def _int(doc, key, field, errs, *, minimum=1, maximum=None, default=None):
    v = doc.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        errs.add(field, "field.not_integer", f"expected a whole number, got {v!r}")
        return default
    if v < minimum:
        errs.add(field, "field.too_small", f"must be at least {minimum}, got {v}", minimum=minimum)
        return default
    if maximum is not None and v > maximum:
        errs.add(field, "field.too_large", f"must be at most {maximum}, got {v}", maximum=maximum)
        return default
    return v


def _num(doc, key, field, errs, *, maximum=None, default=None, allow_zero=False):
    v = doc.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        errs.add(field, "field.not_number", f"expected a number, got {v!r}")
        return default
    if math.isnan(v) or math.isinf(v):
        errs.add(field, "field.not_finite", f"must be a finite number, got {v}")
        return default
    if v < 0 or (v == 0 and not allow_zero):
        word = "not be negative" if allow_zero else "be greater than 0"
        key = "field.non_negative" if allow_zero else "field.positive"
        errs.add(field, key, f"must {word}, got {v}")
        return default
    if maximum is not None and v > maximum:
        errs.add(field, "field.too_large", f"must be at most {maximum:g}, got {v}", maximum=maximum)
        return default
    return float(v)


def _choice(doc, key, field, errs, choices, default):
    v = doc.get(key)
    if v is None:
        return default
    if not isinstance(v, str) or v not in choices:
        hints = suggest(str(v), choices)
        tail = f"; did you mean {', '.join(hints)}?" if hints else ""
        errs.add(
            field,
            "name.unknown",
            f"unknown value {v!r} (one of {', '.join(choices)}){tail}",
            name=str(v)[:80],
            suggestions=hints or list(choices),
        )
        return default
    return v


def _model(doc, field, errs, catalog) -> ModelRef | None:
    v = doc.get("model")
    if v is None:
        errs.add(field, "field.required", "required (a catalog model id or {name, config})")
        return None
    if isinstance(v, str):
        if catalog is not None:
            ids = list(catalog.model_names())
            if v not in ids:
                hints = suggest(v, ids)
                tail = f"; did you mean {', '.join(hints)}?" if hints else ""
                errs.add(
                    field,
                    "name.unknown",
                    f"unknown model {v!r}{tail}",
                    name=v[:80],
                    suggestions=hints,
                )
                return None
        return ModelRef(preset=v)
    if isinstance(v, dict):
        _unknown_keys(v, ("name", "config"), f"{field}.", errs)
        name = _text(v, "name", f"{field}.name", errs, required=True)
        cfg = v.get("config")
        if not isinstance(cfg, dict):
            errs.add(f"{field}.config", "field.required", "expected a Hugging Face config mapping")
            return None
        from ..arch.models import from_hf_config

        try:
            from_hf_config(cfg, name=name or "custom")
        except AdvisorError as exc:
            errs.add(f"{field}.config", exc.key, exc.message)
            return None
        return ModelRef(name=name, config=cfg)
    errs.add(field, "field.not_text", f"expected a model id or a mapping, got {v!r}")
    return None


def _workload(doc, i: int, errs: _Errors, catalog) -> Workload | None:
    p = f"workloads[{i}]"
    if not isinstance(doc, dict):
        errs.add(p, "profile.not_mapping", "expected a mapping")
        return None
    before = len(errs.items)
    _unknown_keys(doc, _WORKLOAD, f"{p}.", errs)
    name = _text(doc, "name", f"{p}.name", errs, required=True)
    model = _model(doc, f"{p}.model", errs, catalog)
    task = doc.get("task")
    if task is None:
        errs.add(f"{p}.task", "field.required", f"required ({', '.join(TASKS)})")
    else:
        task = _choice(doc, "task", f"{p}.task", errs, TASKS, None)
    method = _choice(doc, "method", f"{p}.method", errs, METHODS, None)
    kw = dict(
        dataset_tokens=_int(doc, "dataset_tokens", f"{p}.dataset_tokens", errs, maximum=10**15),
        epochs=_int(doc, "epochs", f"{p}.epochs", errs, maximum=1000, default=DEFAULTS["epochs"]),
        seq=_int(doc, "seq", f"{p}.seq", errs, maximum=16_777_216, default=DEFAULTS["seq"]),
        batch=_int(doc, "batch", f"{p}.batch", errs, maximum=1_000_000, default=DEFAULTS["batch"]),
        weights=_choice(doc, "weights", f"{p}.weights", errs, WEIGHTS, "bf16"),
        concurrent_users=_int(
            doc, "concurrent_users", f"{p}.concurrent_users", errs, maximum=10**6
        ),
        users=_int(doc, "users", f"{p}.users", errs, maximum=10**9),
        target_latency_ms=_num(
            doc, "target_latency_ms", f"{p}.target_latency_ms", errs, maximum=1e6
        ),
        target_tokens_per_s=_num(
            doc, "target_tokens_per_s", f"{p}.target_tokens_per_s", errs, maximum=1e7
        ),
        deadline_hours=_num(doc, "deadline_hours", f"{p}.deadline_hours", errs, maximum=1e6),
        hours_per_day=_num(doc, "hours_per_day", f"{p}.hours_per_day", errs, maximum=24.0),
        runs_per_year=_int(doc, "runs_per_year", f"{p}.runs_per_year", errs, maximum=10_000),
    )
    if task is not None:
        if task == "serving":
            for k in ("dataset_tokens", "deadline_hours", "runs_per_year", "method"):
                if doc.get(k) is not None:
                    errs.add(f"{p}.{k}", "profile.not_for_task", "not used by a serving workload")
            if kw["concurrent_users"] is None and doc.get("concurrent_users") is None:
                errs.add(f"{p}.concurrent_users", "field.required", "required for serving")
            if (
                doc.get("target_latency_ms") is not None
                and doc.get("target_tokens_per_s") is not None
            ):
                errs.add(
                    f"{p}.target_tokens_per_s",
                    "profile.one_of",
                    "give target_latency_ms or target_tokens_per_s, not both",
                )
        else:
            for k in ("concurrent_users", "users", "target_latency_ms", "target_tokens_per_s"):
                if doc.get(k) is not None:
                    errs.add(f"{p}.{k}", "profile.not_for_task", f"not used by a {task} workload")
            if doc.get("hours_per_day") is not None:
                errs.add(
                    f"{p}.hours_per_day", "profile.not_for_task", "serving only; use runs_per_year"
                )
            if kw["dataset_tokens"] is None and doc.get("dataset_tokens") is None:
                errs.add(f"{p}.dataset_tokens", "field.required", f"required for {task}")
            if task == "training" and method is not None:
                errs.add(f"{p}.method", "profile.not_for_task", "fine-tuning only (lora | qlora)")
            if task == "fine-tuning" and method is None:
                method = "lora"
    if len(errs.items) > before:
        return None
    return Workload(name=name, model=model, task=task, method=method, **kw)


def profile_from_dict(doc, catalog=None) -> Profile:
    """Validate a profile mapping (see the module docstring); with `catalog`, model ids are
    checked against its presets. Raises one AdvisorError listing every bad field."""
    errs = _Errors()
    if not isinstance(doc, dict):
        raise AdvisorError(
            "profile.invalid",
            "profile: expected a mapping",
            field="profile",
            errors=[
                {
                    "field": "profile",
                    "key": "profile.not_mapping",
                    "message": "profile: expected a mapping",
                }
            ],
        )
    _unknown_keys(doc, _TOP, "", errs)
    organisation = _text(doc, "organisation", "organisation", errs, required=True)
    prepared_for = _text(doc, "prepared_for", "prepared_for", errs)
    date = doc.get("date")
    if date is not None and (not isinstance(date, str) or not _calendar_day(date)):
        errs.add("date", "field.not_date", f"expected an ISO date YYYY-MM-DD, got {shown(date)}")
        date = None
    wl = doc.get("workloads")
    workloads = []
    if not isinstance(wl, list) or not wl:
        errs.add("workloads", "field.required", "expected a list of at least one workload")
    else:
        if len(wl) > 20:
            errs.add("workloads", "field.too_large", "at most 20 workloads")
        for i, w in enumerate(wl[:20]):
            workloads.append(_workload(w, i, errs, catalog))
    c = doc.get("constraints") or {}
    if not isinstance(c, dict):
        errs.add("constraints", "profile.not_mapping", "expected a mapping")
        c = {}
    _unknown_keys(c, _CONSTRAINTS, "constraints.", errs)
    p = "constraints."
    constraints = Constraints(
        budget=_num(c, "budget", p + "budget", errs, maximum=1e13),
        horizon_months=_int(
            c,
            "horizon_months",
            p + "horizon_months",
            errs,
            maximum=120,
            default=DEFAULTS["horizon_months"],
        ),
        power_kw=_num(c, "power_kw", p + "power_kw", errs, maximum=1e5),
        rack_units=_int(c, "rack_units", p + "rack_units", errs, maximum=10_000),
        acquire=_choice(c, "acquire", p + "acquire", errs, ACQUIRE, "either"),
        currency=_choice(c, "currency", p + "currency", errs, CURRENCIES, "USD"),
        language=_choice(c, "language", p + "language", errs, LANGUAGES, "az"),
        electricity_usd_per_kwh=_num(
            c,
            "electricity_usd_per_kwh",
            p + "electricity_usd_per_kwh",
            errs,
            maximum=10.0,
            allow_zero=True,
        ),
    )
    if errs.items:
        n = len(errs.items)
        raise AdvisorError(
            "profile.invalid",
            f"profile: {n} invalid field{'s' if n != 1 else ''}: "
            + "; ".join(e["message"] for e in errs.items),
            field="profile",
            errors=errs.items,
        )
    return Profile(
        organisation=organisation,
        workloads=tuple(workloads),
        constraints=constraints,
        prepared_for=prepared_for,
        date=date,
    )


def parse_profile(text: str, catalog=None, source: str = "profile") -> Profile:
    """Parse YAML text into a Profile (YAML syntax errors are reported as one bad field)."""
    try:
        doc = yamlsafe.loads(text, source=source)
    except AdvisorError as exc:
        raise AdvisorError(
            "profile.invalid",
            f"profile: {exc.message}",
            field="profile",
            errors=[{"field": source, "key": exc.key, "message": exc.message}],
        ) from None
    return profile_from_dict(doc, catalog)


def load_profile(path, catalog=None) -> Profile:
    """Read and validate a profile file."""
    from pathlib import Path

    p = Path(path)
    return parse_profile(yamlsafe.read_text(p, "profile"), catalog, source=p.name)
