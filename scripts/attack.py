"""Replay issue 18's reproductions and many random hostile inputs against the CLI, the web API,
config.json reading and the catalog loader; print what was tried and what failed.

A failure is: an exception escaping the CLI's main() or webapi.call/run, an `internal.error`
answer, a CLI error that is not one line (exit 2), NaN / infinity / a 40-digit number in any
output, or a reproduction whose answer is not the expected named error or flagged figure.

    .venv/bin/python scripts/attack.py [--random N] [--seed S]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor import webapi  # noqa: E402
from advisor.arch.models import from_config_json  # noqa: E402
from advisor.cli import main  # noqa: E402
from advisor.core.errors import AdvisorError  # noqa: E402
from advisor.data.catalog import load_catalog  # noqa: E402

CATALOG_FILE = re.compile(
    r"(?:(?:models|gpus|clouds|efficiency|networks|systems)/[\w.-]+|currency)\.yaml"
)
HORIZON_HOURS = 24 * 365 * 10  # advisor.perf.cluster's, for a version before issue 40 that had none
BAD_NUMBER = re.compile(r"\b(?:nan|inf)\b|\d{40,}")  # Python's text for NaN / infinity


def json_problem(text: str) -> str | None:
    """NaN, infinity (JSON NaN / Infinity tokens) or a number beyond 1e40 anywhere in `text`."""
    bad = []

    def const(name):
        bad.append(name)
        return 0.0

    try:
        doc = json.loads(text, parse_constant=const)
    except ValueError:
        return "not JSON"
    if bad:
        return f"{bad[0]} in JSON output"
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) > 1e40:
            return f"number {x:.3g} in JSON output"
        elif isinstance(x, str) and re.search(r"\d{40,}", x):
            return "40-digit number in a JSON string"
    return None


class Tally:
    def __init__(self):
        self.tried: dict[str, int] = {}
        self.failed: list[tuple[str, str, str]] = []

    def check(self, kind: str, what: str, problem: str | None) -> None:
        self.tried[kind] = self.tried.get(kind, 0) + 1
        if problem:
            self.failed.append((kind, what[:160], problem[:300]))


def cli(argv: list[str]) -> tuple[int | None, str, str, str | None]:
    """(exit code, stdout, stderr, escaped exception) of one in-process CLI run."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except SystemExit as exc:  # argparse's own exit (an older main() let it through)
        code = exc.code if isinstance(exc.code, int) else 2
        return code, out.getvalue(), err.getvalue(), None
    except BaseException as exc:  # noqa: BLE001
        return None, out.getvalue(), err.getvalue(), f"{exc.__class__.__name__}: {exc}"
    return rc, out.getvalue(), err.getvalue(), None


def cli_problem(argv, rc, out, err, exc, expect=None) -> str | None:
    if exc:
        return exc
    if rc not in (0, 2):
        return f"exit {rc}"
    if "--json" in argv and rc == 0:
        problem = json_problem(out)
        if problem:
            return problem
    elif BAD_NUMBER.search(out):
        return f"bad number in output: {BAD_NUMBER.search(out).group(0)}"
    if re.search(r"\d{40,}", err):
        return "a 40-digit number echoed on stderr"
    if rc == 2:
        lines = [x for x in err.splitlines() if x.strip()]
        if "report" not in argv and len(lines) != 1:
            return f"{len(lines)} error lines"
        if any(len(x) > 400 for x in lines):
            return "error line longer than 400 characters"
        if "Traceback" in err:
            return "traceback"
        if "error: internal:" in err:
            return err.strip()[:300]
    if expect is not None:
        try:
            return expect(rc, out, err)
        except Exception as exc:  # noqa: BLE001 - an answer of the wrong shape
            return f"unexpected answer ({exc.__class__.__name__}: {exc})"
    return None


def api_problem(text: str, expect=None) -> str | None:
    problem = json_problem(text)
    if problem:
        return problem
    doc = json.loads(text)
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict) and err.get("key") == "internal.error":
        return "internal.error: " + err.get("message", "")
    if expect is not None:
        try:
            return expect(doc)
        except Exception as exc:  # noqa: BLE001 - an answer of the wrong shape
            return f"unexpected answer ({exc.__class__.__name__}: {exc})"
    return None


def _exit2(*words):
    def check(rc, out, err):
        if rc != 2:
            return f"expected a named error (exit 2), got exit {rc}"
        missing = [w for w in words if w not in err]
        return f"error does not mention {missing}: {err.strip()[:200]}" if missing else None

    return check


def _api_error(key=None):
    def check(doc):
        if "error" not in doc:
            return "expected an error object"
        if key and doc["error"]["key"] != key:
            return f"expected {key}, got {doc['error']['key']}"
        return None

    return check


def _outlasting_run(rc, out, err):
    if rc != 0:
        return f"exit {rc}: {err.strip()[:200]}"
    rows = [r for r in json.loads(out) if r["ok"]]
    for r in rows:
        hours = r["hours"]
        if hours and hours > 36 * 730:
            if not any(n["key"] == "recommend.outlasts_horizon" for n in r["notes"]):
                return f"{r['gpu_id']} x{r['count']}: {hours:.0f} h run not flagged"
            if r["mode"] == "rent" and r["run_cost"] and r["cost"] < 0.999 * r["run_cost"]:
                return (
                    f"{r['gpu_id']}: rent cost {r['cost']:.0f} below the run's {r['run_cost']:.0f}"
                )
    return None


def reproductions(tmp: Path) -> list:
    """(kind, description, thunk) for each reproduction in issue 18."""
    cfgs = {
        "gpt2-null.json": json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": 768,
                "n_head": 12,
                "n_layer": 12,
                "vocab_size": 50257,
                "resid_pdrop": None,
            }
        ),
        "list-act.json": json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 512,
                "num_attention_heads": 8,
                "num_hidden_layers": 2,
                "intermediate_size": 1024,
                "vocab_size": 1000,
                "hidden_act": ["silu"],
            }
        ),
        "deep.json": "[" * 100_000 + "]" * 100_000,
    }
    for name, text in cfgs.items():
        (tmp / name).write_text(text)
    (tmp / "latin1.json").write_bytes('{"model_type": "llamä"}'.encode("latin-1"))
    (tmp / "dir.yaml").mkdir(exist_ok=True)
    big = tmp / "big.yaml"
    big.write_text("organisation: x\n" + "# " + "x" * 50_000_000 + "\n")
    m = ["--model", "llama-3.1-8b"]
    R = []

    def c(argv, expect=None, desc=None):
        R.append(("repro-cli", desc or " ".join(argv), ("cli", argv, expect)))

    def a(name, params, expect=None, desc=None, raw=False):
        R.append(
            ("repro-api", desc or f"{name} {params!r}"[:120], ("api", name, params, expect, raw))
        )

    cheap = ["--gpu", "h100-sxm", "--utilisation", "0.5", "--electricity", "0.1"]
    c(["cost", "tco", *cheap, "--gpu-price", "1e308"], _exit2("gpu"))
    c(["cost", "run", "--gpu", "h100-sxm", "--hours", "1e308"], _exit2("hours"))
    c(
        ["cost", "tco", "--gpu", "h100-sxm", "--utilisation", "0.5", "--electricity", "1e308"],
        _exit2("electricity"),
    )
    c(["cost", "run", "--gpu", "h100-sxm", *m, "--tokens", "1e9", "--mfu", "1e-300"], _exit2("mfu"))
    c(["cost", "tokens", "--gpu", "h100-sxm", "--tokens-per-s", "1e-300"], _exit2("tokens"))
    c(["cost", "tokens", "--gpu", "rtx-4090", "--model", "llama-3.1-405b"], _exit2("does not fit"))
    c(["cost", "tokens", "--gpu", "h100-sxm", "--model", "bert-base-uncased"], _exit2("encoder"))
    c(
        ["recommend", "--model", "llama-3.1-70b", "--task", "train", "--dataset-tokens", "2e12",
         "--acquire", "rent", "--no-bench", "--json"],
        _outlasting_run,
    )  # fmt: skip
    for f in ("gpt2-null.json", "list-act.json", "deep.json", "latin1.json"):
        c(["memory", "--config", str(tmp / f), "--task", "infer", "--batch", "1", "--seq", "128"])
    c(
        ["memory", "--config", "/dev/zero", "--task", "infer", "--batch", "1", "--seq", "8"],
        _exit2("larger"),
    )
    c(
        ["memory", "--config", str(tmp), "--task", "infer", "--batch", "1", "--seq", "8"],
        _exit2("config"),
    )
    c(["report", "/dev/zero", "--out", str(tmp / "out")], _exit2("larger"))
    c(["report", str(big), "--out", str(tmp / "out")], _exit2("larger"))
    c(["report", str(tmp / "dir.yaml"), "--out", str(tmp / "out")], _exit2("profile"))
    (tmp / "uzzzz.yaml").write_text('organisation: "\\uZZZZ"\n')
    (tmp / "deep.yaml").write_text("a: " + "[" * 50_000 + "]" * 50_000 + "\n")
    (tmp / "latin1.yaml").write_bytes("organisation: Bakü\n".encode("latin-1"))
    for f in ("uzzzz.yaml", "deep.yaml", "latin1.yaml"):
        c(["report", str(tmp / f), "--out", str(tmp / "out")], _exit2("profile"))
    a("report", {"profile": 'organisation: "\\uZZZZ"', "publisher": {"name": "x"}}, _api_error())
    c(["--catalog", "/nonexistent", "gpus"], _exit2("catalog"))
    c(["recommend", *m, "--task", "train", "--precision", "fp64"], _exit2("precision"))
    c(["recommend", *m, "--task", "train", "--optimizer", "lion"], _exit2("optimizer"))
    c(["recommend", *m, "--tier", "bogus"], _exit2("tier"))
    c(
        ["memory", *m, "--task", "infer", "--batch", "1", "--seq", "8", "--gpus", "2"],
        _exit2("gpus"),
    )
    c(["memory", *m, "--task", "infer", "--batch", "١٢", "--seq", "8"], _exit2("batch"))
    c(["cost", "run", "--gpu", "h100-sxm", "--hours", "١٠"], _exit2("hours"))
    c(["recommend", "--model", "x" * 100_000], _exit2("model"))
    a("vram", None, _api_error(), raw=True)
    a("vram", 12, _api_error(), raw=True)
    R.append(("repro-api", "run(['vram'], {})", ("run", ["vram"], {})))
    a("report", {"profile": "organisation: x\n", "lang": ["en"]}, _api_error("name.unknown"))
    a("vram", {"batch": "١٢"}, _api_error("field.not_number"))
    a("vram", {"config": cfgs["gpt2-null.json"]})
    a("vram", {"config": cfgs["list-act.json"]}, _api_error())
    a("vram", {"config": "[" * 100_000}, _api_error())

    def same_direct_and_run(doc):
        direct = webapi.dumps(webapi.vram({"model": "llama-3.1-8b"}))
        return None if json.loads(direct) == doc else "vram direct differs from run()"

    a("vram", {"model": "llama-3.1-8b"}, same_direct_and_run, desc="vram direct == run()")

    def budget_no_fit(doc):
        t = doc.get("training") or {}
        if t.get("fits") is False and t.get("cloud_cost") is not None:
            return "training priced although it does not fit"
        return None

    a("budget", {"gpu": "rtx-4090", "gpus": 1, "model": "llama-3.1-70b"}, budget_no_fit)

    def bert_no_tokens(doc):
        inf = doc.get("inference") or {}
        return "BERT got a per-token price" if inf.get("per_million_tokens") is not None else None

    a("budget", {"model": "bert-base-uncased"}, bert_no_tokens)
    # Catalog schema gaps
    for desc, mutate, word in CATALOG_REPROS:
        R.append(("repro-catalog", desc, ("catalog", mutate, word)))
    # one corrupt bench result is skipped with a warning
    R.append(("repro-cli", "corrupt bench_results/*.json skipped", ("bench", None, None)))
    R.extend(issue40_reproductions(tmp))
    return R


def _no_plan_past_horizon(rc, out, err):
    from advisor.perf import cluster

    if rc != 0:
        return f"exit {rc}: {err.strip()[:200]}"
    plan = json.loads(out)["plan"]
    chosen = plan["chosen"]
    if chosen is None:
        return None
    if chosen["hours"] > getattr(cluster, "HORIZON_HOURS", HORIZON_HOURS):
        return f"chose a run of {chosen['days']:.0f} days"
    return None


def _mfu_at_most_one(doc):
    for o in doc.get("options") or []:
        if o["step"]["mfu"] > 1.0:
            return f"MFU {o['step']['mfu']:.3f} at {o['gpus']} GPUs"
    return None


def issue40_reproductions(tmp: Path) -> list:
    """(kind, description, thunk) for each reproduction in issue 40."""
    R = []

    def c(argv, expect=None, desc=None):
        R.append(("repro40-cli", desc or " ".join(argv), ("cli", argv, expect)))

    def a(name, params, expect=None, desc=None):
        R.append(
            (
                "repro40-api",
                desc or f"{name} {params!r}"[:120],
                ("api", name, params, expect, False),
            )
        )

    m8 = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm"]
    c(
        [
            "time",
            "train",
            "--model",
            "gemma-2-27b",
            "--gpu",
            "gaudi2",
            "--precision",
            "fp8",
            "--micro-batch",
            "16",
            "--micro-batches",
            "256",
            "--seq",
            "2048",
        ],
        _exit2("layout:", "GiB"),
    )
    c(
        ["time", "train", "--model", "llama-3.1-405b", "--gpu", "rtx-4090", "--tokens", "1T"],
        _exit2("layout:", "GiB"),
    )
    c(["time", "train", *m8, "--tokens", "1e18"], _exit2("layout:"))
    c(
        ["time", "train", *m8, "--dp", "8", "--sharding", "zero3", "--tokens", "1e18"],
        _exit2("tokens:", "horizon"),
    )
    c(["time", "train", *m8, "--tokens", "1.0e300T"], _exit2("--tokens"))
    c(
        ["time", "plan", *m8, "--tokens", "1T", "--global-batch-tokens", "9.0e307K"],
        _exit2("--global-batch-tokens"),
    )
    c(["time", "train", *m8, "--tokens", "\u0661.\u0665T"], _exit2("--tokens", "expected a number"))
    c(
        [
            "time",
            "plan",
            "--model",
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--tokens",
            "15T",
            "--precision",
            "fp32",
            "--json",
        ],
        _no_plan_past_horizon,
    )
    c(["time", "serve", *m8, "--tp", "3"], _exit2("tensor_parallel"))
    c(["time", "serve", *m8, "--tp", "72", "--gpus", "72"], _exit2("tensor_parallel"))
    c(["time", "serve", "--model", "llama-3.1-405b", "--gpu", "rtx-4090"], _exit2("gpu:"))
    example = str(ROOT / "examples" / "bank-serving-70b.yaml")
    c(["report", example, "--out", " "], _exit2("out:"))
    (tmp / "date.yaml").write_text(
        (ROOT / "examples" / "bank-serving-70b.yaml")
        .read_text(encoding="utf-8")
        .replace('date: "2026-12-02"', 'date: "2026-02-31"'),
        encoding="utf-8",
    )
    c(["report", str(tmp / "date.yaml"), "--out", str(tmp / "out")], _exit2("date"))
    deep = "[" * 3000 + "]" * 3000
    a(
        "vram",
        {"model": "", "config": '{"model_type": "llama", "x": ' + deep + "}"},
        _api_error("file.too_deep"),
    )
    a("serving", {"model": "llama-3.1-8b", "tensor_parallel": 3}, _api_error("layout.heads"))
    a(
        "serving",
        {"model": "llama-3.1-8b", "tensor_parallel": 72, "gpus": 72},
        _api_error("layout.tp_node"),
    )
    a(
        "cluster",
        {"model": "gemma-2-27b", "gpu": "gaudi2", "precision": "fp8", "tokens": 10**11},
        _mfu_at_most_one,
    )
    for desc, mutate, word in CATALOG_REPROS_40:
        R.append(("repro40-catalog", desc, ("catalog", mutate, word)))
    for desc, text in BENCH_TEXTS_40:
        R.append(("repro40-bench", desc, ("bench-text", text)))
    for desc, edit, word in BENCH_FILES_40:
        R.append(("repro40-bench", desc, ("bench-file", edit, word)))
    for ident in ("../../../README", "/tmp/gpu-advisor-escape", 'x"\ntitle: injected'):
        R.append(("repro40-pages", f"page for id {ident!r}", ("page", ident)))
    return R


def _sub(path: str, pattern: str, repl: str):
    def mutate(root: Path):
        p = root / path
        p.write_text(re.sub(pattern, lambda _: repl, p.read_text(), count=1, flags=re.M))

    return mutate


def _copy(src: str, dst: str):
    def mutate(root: Path):
        shutil.copy(root / src, root / dst)

    return mutate


CATALOG_REPROS = [
    ("bandwidth 3.35 (TB/s slip)", _sub("gpus/h100-sxm.yaml", r"^memory_bandwidth_gb_per_s: .*$", "memory_bandwidth_gb_per_s: 3.35"), "TB/s"),
    ("launch_date 2022-02-31", _sub("gpus/h100-sxm.yaml", r"^launch_date: .*$", "launch_date: 2022-02-31"), "launch_date"),
    ("price_date 2099-12-31", _sub("gpus/h100-sxm.yaml", r"^price_date: .*$", "price_date: 2099-12-31"), "price_date"),
    ("typo key tdp_watts", _sub("gpus/h100-sxm.yaml", r"^tdp_w:", "tdp_watts:"), "tdp_w"),
    ("a *.yml file", _copy("gpus/h100-sxm.yaml", "gpus/h100-copy.yml"), ".yml"),
    ("duplicate id", _copy("gpus/h100-sxm.yaml", "gpus/zz-copy.yaml"), "gpus/h100-sxm.yaml"),
    ("price_usd 1e300", _sub("gpus/h100-sxm.yaml", r"^price_usd: .*$", "price_usd: 1e300"), "price_usd"),
    ("a folder named *.yaml", lambda root: (root / "gpus" / "zz.yaml").mkdir(), "gpus/zz.yaml"),
    ('YAML "\\uZZZZ"', _sub("gpus/h100-sxm.yaml", r"^name: .*$", 'name: "\\uZZZZ"'), "gpus/h100-sxm.yaml"),
    ("latin-1 file", lambda root: (root / "gpus" / "t4.yaml").write_bytes("name: Bakü\n".encode("latin-1")), "UTF-8"),
    ("deep nesting", lambda root: (root / "gpus" / "t4.yaml").write_text("a: " + "[" * 5000 + "]" * 5000), "gpus/t4.yaml"),
]  # fmt: skip


def _model_id(value: str):
    return _sub("models/gpt2-124m.yaml", r"^id: .*$", "id: " + json.dumps(value))


def _dup_offer(root: Path):
    p = root / "clouds" / "aws.yaml"
    text = p.read_text()
    start = text.index("offers:\n") + len("offers:\n")
    first = re.match(r"(  - (?:.*\n)(?:    .*\n|\s*#.*\n)*)", text[start:]).group(1)
    p.write_text(text + first)


CATALOG_REPROS_40 = [
    ("model id ../../../README", _model_id("../../../README"), "models/gpt2-124m.yaml: id"),
    ("absolute model id", _model_id("/tmp/gpu-advisor-escape"), "models/gpt2-124m.yaml: id"),
    ("model id with a quote and a line break", _model_id('x"\ntitle: injected'), "models/gpt2-124m.yaml: id"),
    ("gpu id ending in a line break", _sub("gpus/t4.yaml", r"^id: .*$", 'id: "t4\\n"'), "gpus/t4.yaml: id"),
    ("network 1e-300 GB/s", _sub("networks/eth-100.yaml", r"^gb_per_s_per_gpu: .*$", "gb_per_s_per_gpu: 1e-300"), "gb_per_s_per_gpu"),
    ("network id ../x", _sub("networks/eth-100.yaml", r"^id: .*$", "id: ../x"), "networks/eth-100.yaml: id"),
    ("price 1e-300", _sub("clouds/aws.yaml", r"on_demand_usd_per_(?:gpu|instance)_hour: .*$", "on_demand_usd_per_gpu_hour: 1e-300"), "clouds/aws.yaml"),
    ("provider ../aws", _sub("clouds/aws.yaml", r"^provider: .*$", "provider: ../aws"), "clouds/aws.yaml: provider"),
    ("duplicate offer", _dup_offer, "clouds/aws.yaml"),
    ("second efficiency file", _copy("efficiency/h100-sxm.yaml", "efficiency/zz-h100.yaml"), "efficiency/zz-h100.yaml"),
    ("a *.YAML file", _copy("gpus/t4.yaml", "gpus/t4-copy.YAML"), ".yaml"),
]  # fmt: skip
BENCH_TEXTS_40 = [
    ("formula [x](javascript:...)", ("formula", "[x](javascript:alert(1))")),
    ("note [x](javascript:...)", ("note", "[x](javascript:alert(1))")),
    ("note part [x](JaVaScRiPt:...)", ("note", "CPU ranks share this host's cores: scaling here says little about GPUs; [x](JaVaScRiPt:alert(1))")),
    ("reference-style link", ("note", "[x]: javascript:alert(1)\n\n[x]")),
]  # fmt: skip


def _first_summary(doc):
    return next(iter(doc["summary"].values()))


BENCH_FILES_40 = [
    ("derived value 1e300", lambda d: d["derived"][0].update(value=1e300), "plausible"),
    ('median "fast"', lambda d: _first_summary(d).update(median="fast"), "median"),
    ("summary not an object", lambda d: d["summary"].update(x=[1]), "summary.x"),
]


def _bench_text_problem(kind: str, text: str) -> str | None:
    import markdown

    from hooks import bench_text, safe_links
    from hooks.templating import load_strings, make_t

    strings = load_strings(ROOT / "templates" / "i18n")
    for lang in ("az", "en"):
        shown = str(bench_text.translator(make_t(lang, strings), lang)(kind, text))
        page = markdown.markdown(f"| a |\n|---|\n| {shown} |\n\n{shown}", extensions=["tables"])
        if "<a " in page or safe_links.unsafe_links(page):
            return f"{lang}: a link from data: {page[:160]}"
    return None


def run_one(thunk, tmp: Path) -> str | None:
    kind = thunk[0]
    if kind == "cli":
        _, argv, expect = thunk
        return cli_problem(argv, *cli(argv), expect)
    if kind == "api":
        _, name, params, expect, raw = thunk
        try:
            text = webapi.call(name, params if raw else json.dumps(params))
        except BaseException as exc:  # noqa: BLE001
            return f"raised {exc.__class__.__name__}: {exc}"
        return api_problem(text, expect)
    if kind == "run":
        try:
            out = webapi.run(thunk[1], thunk[2])
        except BaseException as exc:  # noqa: BLE001
            return f"raised {exc.__class__.__name__}: {exc}"
        return api_problem(webapi.dumps(out), _api_error())
    if kind == "catalog":
        _, mutate, word = thunk
        root = tmp / "cat"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(ROOT / "catalog", root)
        mutate(root)
        try:
            load_catalog(root)
        except AdvisorError as exc:
            return None if word in exc.message else f"error does not name {word}: {exc.message}"
        except BaseException as exc:  # noqa: BLE001
            return f"raised {exc.__class__.__name__}: {exc}"
        return "loaded silently"
    if kind == "bench-text":
        return _bench_text_problem(*thunk[1])
    if kind == "bench-file":
        from advisor.data.benchresults import load_result

        _, edit, word = thunk
        src = sorted((ROOT / "bench_results").glob("*_train-step_*.json"))[0]
        doc = json.loads(src.read_text(encoding="utf-8"))
        edit(doc)
        path = tmp / src.name
        path.write_text(json.dumps(doc))
        try:
            load_result(path)
        except AdvisorError as exc:
            ok = exc.message.startswith(src.name) and word in exc.message
            return None if ok else f"error does not name the file and {word}: {exc.message}"
        except BaseException as exc:  # noqa: BLE001
            return f"raised {exc.__class__.__name__}: {exc}"
        return "loaded silently"
    if kind == "page":
        from hooks import generate

        docs = tmp / "pages" / "docs"
        shutil.rmtree(docs.parent, ignore_errors=True)
        docs.mkdir(parents=True)
        (docs.parent / "README.md").write_text("keep")
        try:
            generate.write_stubs(docs, "model", ["gpt2-124m", thunk[1]])
        except generate.UnsafePath:
            pass
        else:
            return "page written for a hostile id"
        if (docs.parent / "README.md").read_text() != "keep" or list(docs.rglob("*.md")):
            return "a file was written"
        return None
    if kind == "bench":
        folder = tmp / "bench"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(ROOT / "bench_results", folder)
        (folder / "20990101T000000Z_train-step_x_000000.json").write_text("{broken")
        for argv in (
            ["recommend", "--model", "llama-3.1-8b", "--bench", str(folder)],
            [
                "cost",
                "tokens",
                "--gpu",
                "h100-sxm",
                "--model",
                "llama-3.1-8b",
                "--bench",
                str(folder),
            ],
        ):
            rc, out, err, exc = cli(argv)
            if exc or rc != 0:
                return f"{argv[0]}: exit {rc} {exc or err.strip()[:200]}"
            if "warning: skipped" not in err or "20990101T000000Z" not in err:
                return f"{argv[0]}: no warning naming the corrupt file"
        return None
    raise ValueError(kind)


# --- random inputs ---------------------------------------------------------------------------

HOSTILE = [
    "0", "-1", "1", "2", "0.5", "1e308", "-1e308", "1e-300", "nan", "inf", "-inf", "", " ",
    "1e9", "2e12", "abc", "١٢", "１２", "1_000", "0x10", "10**3", "9" * 300, "1,5", "x" * 5000,
    "h100-sxm", "llama-3.1-8b", "<script>", "../../etc/passwd", "/dev/zero", "\x00",
]  # fmt: skip
CLI_SHAPES = {
    ("memory",): ["--model", "--config", "--task", "--batch", "--seq", "--precision", "--gpus",
                  "--sharding", "--weights", "--kv-dtype", "--lora-rank", "--tensor-parallel"],
    ("cost", "run"): ["--gpu", "--gpus", "--hours", "--model", "--tokens", "--mfu", "--batch",
                      "--seq", "--sharding", "--currency", "--provider", "--pricing"],
    ("cost", "tokens"): ["--gpu", "--gpus", "--tokens-per-s", "--model", "--batch", "--seq",
                         "--weights", "--kv-dtype"],
    ("cost", "tco"): ["--gpu", "--gpus", "--utilisation", "--electricity", "--gpu-price",
                      "--cloud-price", "--server-usd", "--host-power-w", "--pue", "--hosting",
                      "--maintenance", "--resale", "--loan-rate", "--loan-months",
                      "--down-payment", "--horizon-months"],
    ("recommend",): ["--model", "--task", "--batch", "--seq", "--dataset-tokens", "--budget",
                     "--target-tps", "--deadline-hours", "--max-gpus", "--horizon-months",
                     "--utilisation", "--electricity", "--tier", "--precision", "--acquire"],
    ("models", "show"): ["--config"],
    ("gpus",): ["--tier"],
    ("time", "train"): ["--model", "--gpu", "--tp", "--pp", "--dp", "--cp", "--micro-batch",
                        "--micro-batches", "--seq", "--precision", "--sharding", "--tokens",
                        "--checkpointing", "--task", "--price"],
    ("time", "serve"): ["--model", "--gpu", "--tp", "--gpus", "--input", "--output",
                        "--concurrency", "--weights", "--kv-dtype"],
}  # fmt: skip
GOOD = {
    "--model": ["llama-3.1-8b", "llama-3.2-1b", "bert-base-uncased", "mixtral-8x7b"],
    "--task": ["train", "infer", "inference", "lora", "qlora"],
    "--gpu": ["h100-sxm", "rtx-4090", "a100-80gb-sxm", "t4"],
    "--tier": ["datacenter", "consumer"],
    "--precision": ["amp-bf16", "bf16", "fp32"],
    "--sharding": ["ddp", "zero1", "zero3"],
}


def random_cli(rng: random.Random) -> list[str]:
    shape = rng.choice(list(CLI_SHAPES))
    argv = list(shape)
    for flag in rng.sample(CLI_SHAPES[shape], k=rng.randint(1, len(CLI_SHAPES[shape]))):
        pool = GOOD.get(flag, []) + ["1", "8", "2048", "0.6", "0.1", "1e9"]
        v = rng.choice(pool) if rng.random() < 0.7 else rng.choice(HOSTILE)
        argv += [flag, v]
    if rng.random() < 0.3:
        argv.append("--json")
    return argv


PHYSICS_MODELS = ["llama-3.2-1b", "llama-3.1-8b", "gemma-2-27b", "mixtral-8x7b", "qwen2.5-0.5b",
                  "llama-3.1-70b", "phi-3-mini-4k", "gpt2-124m"]  # fmt: skip
PHYSICS_GPUS = ["h100-sxm", "gaudi2", "rtx-4090", "a100-80gb-sxm", "mi300x", "l4", "b200", "t4"]


def random_train(rng: random.Random) -> list[str]:
    """A plausible `time train` layout (issue 40's surface: 3,968 layouts were swept)."""
    argv = [
        "time",
        "train",
        "--model",
        rng.choice(PHYSICS_MODELS),
        "--gpu",
        rng.choice(PHYSICS_GPUS),
    ]
    for flag, pool in (("--tp", [1, 2, 4, 8]), ("--pp", [1, 2, 4]), ("--dp", [1, 2, 4, 8]),
                       ("--cp", [1, 2]), ("--micro-batch", [1, 2, 4, 16]),
                       ("--micro-batches", [1, 4, 16, 256]), ("--seq", [512, 1024, 2048, 4096]),
                       ("--precision", ["bf16", "fp8", "fp32", "amp-bf16"]),
                       ("--sharding", ["ddp", "zero1", "zero3"]),
                       ("--checkpointing", ["none", "selective", "full"]),
                       ("--task", ["train", "lora", "qlora"]),
                       ("--tokens", ["1e9", "1T", "15T", "1e18", "2.5B"])):  # fmt: skip
        if rng.random() < 0.6:
            argv += [flag, str(rng.choice(pool))]
    return argv + ["--json"]


def train_physics_problem(argv, rc, out, err) -> str | None:
    """An accepted layout: MFU at most 1, its stage fits the card by the planner's memory,
    figures finite, the run within the horizon."""
    if rc != 0:
        return None
    from advisor.perf import cluster

    doc = json.loads(out)
    st = doc["step"]
    if not 0 < st["mfu"] <= 1.0:
        return f"MFU {st['mfu']:.3f}"
    opts = dict(zip(argv[2::2], argv[3::2], strict=False))
    cat = load_catalog()
    spec, gpu = cat.model(opts["--model"]).spec, cat.gpu(opts["--gpu"])
    from advisor.perf.parallel import Layout

    lay = Layout(**{k: v for k, v in st["layout"].items() if k in Layout.__dataclass_fields__})
    args = (spec, lay, int(opts.get("--seq", 4096)), opts.get("--precision", "bf16"),
            opts.get("--checkpointing", "none"))  # fmt: skip
    try:
        try:
            need = cluster.stage_memory_bytes(*args, task=opts.get("--task", "train"))
        except TypeError:  # a version before issue 40 (no `task`): its full-training figure
            need = cluster.stage_memory_bytes(*args)
    except AdvisorError as exc:
        return f"priced although the memory model refuses it: {exc.message[:120]}"
    if need > gpu.memory_bytes:
        return f"priced a layout that needs {need / 2**30:.1f} GiB on a {gpu.id}"
    run = doc.get("run")
    if run and not run["hours"] <= getattr(cluster, "HORIZON_HOURS", HORIZON_HOURS):
        return f"priced a run of {run['days']:.0f} days"
    return None


def random_serve(rng: random.Random) -> list[str]:
    argv = [
        "time",
        "serve",
        "--model",
        rng.choice(PHYSICS_MODELS),
        "--gpu",
        rng.choice(PHYSICS_GPUS),
    ]
    tp = rng.choice([1, 2, 3, 4, 6, 8, 16, 72])
    argv += ["--tp", str(tp), "--gpus", str(tp * rng.choice([1, 2, 9]))]
    if rng.random() < 0.5:
        argv += ["--weights", rng.choice(["bf16", "fp8", "int4"])]
    return argv + ["--json"]


def serve_physics_problem(argv, rc, out, err) -> str | None:
    """Accepted serving: TP divides the heads and stays in one node; figures finite."""
    if rc != 0:
        return None
    from advisor.perf import serving

    opts = dict(zip(argv[2::2], argv[3::2], strict=False))
    spec = load_catalog().model(opts["--model"]).spec
    tp = int(opts["--tp"])
    if spec.num_heads % tp or tp > getattr(serving, "SCALE_UP_GPUS", 8):
        return f"accepted TP {tp} for {spec.num_heads} heads"
    if not json.loads(out)["plan"]["points"]:
        return "exit 0 with no serving point"
    return None


def plan_physics_problem(rng: random.Random) -> tuple[str, str | None]:
    """A random cluster plan: every option shown fits by the memory function, MFU at most 1,
    figures finite; the chosen run within the horizon."""
    from advisor.perf import cluster

    cat = load_catalog()
    model, gpu = rng.choice(PHYSICS_MODELS[:6]), rng.choice(PHYSICS_GPUS)
    precision = rng.choice(["bf16", "fp8", "fp32", "amp-bf16"])
    tokens = rng.choice([10**9, 10**11, 10**12, 15 * 10**12, 10**16])
    seq = rng.choice([1024, 2048, 4096])
    what = f"plan {model} {gpu} {precision} {tokens:.0e} seq {seq}"
    try:
        p = cluster.plan(
            cat.model(model).spec, cat.gpu(gpu), tokens=tokens, seq=seq, precision=precision,
            network=cat.network("ib-ndr-400"), max_gpus=rng.choice([8, 512, 16384]),
        )  # fmt: skip
    except AdvisorError:
        return what, None
    except BaseException as exc:  # noqa: BLE001
        return what, f"raised {exc.__class__.__name__}: {exc}"
    spec, g = cat.model(model).spec, cat.gpu(gpu)
    for o in p.options:
        try:
            need = cluster.stage_memory_bytes(spec, o.layout, seq, precision, o.checkpointing)
        except AdvisorError as exc:
            return what, f"{o.gpus} GPUs shown although the memory model refuses: {exc.message}"
        if need > g.memory_bytes or need != o.memory_per_gpu_bytes:
            return what, f"{o.gpus} GPUs shown at {o.memory_per_gpu_bytes} B, needs {need}"
        if not 0 < o.step.mfu <= 1.0:
            return what, f"MFU {o.step.mfu:.3f} at {o.gpus} GPUs"
        for v in (o.hours, o.gpu_hours, o.energy_kwh, o.cost_usd or 0.0):
            if not math.isfinite(v):
                return what, "a figure not finite"
    if p.chosen is not None and p.chosen.hours > getattr(cluster, "HORIZON_HOURS", HORIZON_HOURS):
        return what, f"chose a run of {p.chosen.hours / 24:.0f} days"
    return what, json_problem(json.dumps(p.to_dict()))


def random_params(rng: random.Random, name: str) -> dict:
    base = dict(webapi.DEFAULTS.get(name, {"profile": "organisation: x\n"}))
    hostile = [None, -1, 0, 1e308, float("nan"), 10**400, "", "١٢", [], {}, ["en"], True, "x" * 3000,
               "1e9", 0.5, 2**63, "<img onerror=x>"]  # fmt: skip
    for key in rng.sample(list(base), k=rng.randint(1, max(1, len(base)))):
        base[key] = rng.choice(hostile)
    if rng.random() < 0.1:
        base["unexpected"] = rng.choice(hostile)
    return base


def random_config(rng: random.Random) -> str:
    cfg = {
        "model_type": rng.choice(["llama", "gpt2", "bert", "mistral", "qwen2", "gemma2", "mixtral", "x"]),
        "hidden_size": 256, "n_embd": 256, "num_attention_heads": 4, "n_head": 4,
        "num_hidden_layers": 2, "n_layer": 2, "intermediate_size": 512, "vocab_size": 1000,
    }  # fmt: skip
    hostile = [None, -1, 0, 1.5, 1e308, [], {}, "x", True, 10**400, [1, 2], {"a": [1]}, "silu"]
    keys = list(cfg) + ["hidden_act", "num_key_value_heads", "head_dim", "sliding_window",
                        "resid_pdrop", "max_window_layers", "use_sliding_window",
                        "num_local_experts", "final_logit_softcapping", "tie_word_embeddings"]  # fmt: skip
    for key in rng.sample(keys, k=rng.randint(1, 4)):
        cfg[key] = rng.choice(hostile)
    return json.dumps(cfg)


def random_catalog_mutation(rng: random.Random, root: Path) -> str:
    files = sorted(p for p in (ROOT / "catalog").rglob("*.yaml"))
    src = rng.choice(files)
    rel = src.relative_to(ROOT / "catalog")
    lines = src.read_text().splitlines()
    keyed = [i for i, x in enumerate(lines) if re.match(r"^\s*-?\s*[a-z_]+:\s*\S", x)]
    i = rng.choice(keyed)
    key = re.match(r"^(\s*-?\s*[a-z_]+:)", lines[i]).group(1)
    value = rng.choice(["-1", "0", "1e300", "3.35", "x", "[]", "{}", "null", "2022-02-31",
                        "2099-12-31", '"' + "y" * 500 + '"', "[[[[[[1]]]]]]", "true", "'javascript:x'"])  # fmt: skip
    lines[i] = f"{key} {value}" if rng.random() < 0.85 else lines[i].replace(":", "_typo:", 1)
    (root / rel).write_text("\n".join(lines) + "\n")
    return f"{rel}:{i + 1}: {lines[i][:80]}"


def main_(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=300, help="random inputs per kind (default 300)")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--safe",
        action="store_true",
        help="leave out /dev/zero (for measuring an old version, which reads it for ever)",
    )
    a = ap.parse_args(argv)
    if a.safe:
        HOSTILE.remove("/dev/zero")
    rng = random.Random(a.seed)
    t = Tally()
    webapi.set_catalog(load_catalog())
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for kind, desc, thunk in reproductions(tmp):
            if a.safe and "/dev/zero" in desc:
                t.check(kind + "-skipped", desc, None)
                continue
            try:
                problem = run_one(thunk, tmp)
            except Exception as exc:  # noqa: BLE001 - e.g. an old version's missing option
                problem = f"{exc.__class__.__name__}: {exc}"
            t.check(kind, desc, problem)
        for _ in range(a.random):
            argv = random_cli(rng)
            t.check("random-cli", " ".join(argv), cli_problem(argv, *cli(argv)))
        for _ in range(a.random):
            argv = random_train(rng)
            rc, out, err, exc = cli(argv)
            problem = cli_problem(argv, rc, out, err, exc) or (
                None if exc else train_physics_problem(argv, rc, out, err)
            )
            t.check("physics-train", " ".join(argv), problem)
        for _ in range(a.random):
            argv = random_serve(rng)
            rc, out, err, exc = cli(argv)
            problem = cli_problem(argv, rc, out, err, exc) or (
                None if exc else serve_physics_problem(argv, rc, out, err)
            )
            t.check("physics-serve", " ".join(argv), problem)
        for _ in range(max(1, a.random // 10)):
            t.check("physics-plan", *plan_physics_problem(rng))
        for _ in range(a.random):
            name = rng.choice(list(webapi.FUNCTIONS))
            params = random_params(rng, name)
            try:
                text = webapi.call(name, json.dumps(params, allow_nan=True))
                problem = api_problem(text)
            except BaseException as exc:  # noqa: BLE001
                problem = f"raised {exc.__class__.__name__}: {exc}"
            t.check("random-api", f"{name} {params!r}", problem)
        for _ in range(a.random):
            text = random_config(rng)
            try:
                from_config_json(text)
                problem = None
            except AdvisorError:
                problem = None
            except BaseException as exc:  # noqa: BLE001
                problem = f"raised {exc.__class__.__name__}: {exc}"
            t.check("random-config", text, problem)
        for _ in range(max(1, a.random // 6)):
            root = tmp / "mut"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(ROOT / "catalog", root)
            what = random_catalog_mutation(rng, root)
            try:
                problem = json_problem(load_catalog(root).to_json())  # a valid load is finite
            except AdvisorError as exc:
                # the mutated file, or the one whose reference it broke (an offer's gpu id)
                problem = (
                    None
                    if CATALOG_FILE.search(exc.message)
                    else (f"error does not name a catalog file: {exc.message[:160]}")
                )
            except BaseException as exc:  # noqa: BLE001
                problem = f"raised {exc.__class__.__name__}: {exc}"
            t.check("random-catalog", what, problem)
    total = sum(t.tried.values())
    for kind in sorted(t.tried):
        bad = sum(1 for k, _, _ in t.failed if k == kind)
        print(f"{kind:16} tried {t.tried[kind]:5}  failed {bad}")
    print(f"{'total':16} tried {total:5}  failed {len(t.failed)}")
    if not a.quiet:
        for kind, what, problem in t.failed:
            print(f"FAIL {kind}: {what}\n     {problem}")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main_())
