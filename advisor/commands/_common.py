"""What the sub-commands share: a parser whose errors are one line (exit 2), number and count
argument types with plausible ranges (advisor.core.limits), the model / accelerator / measured-results
arguments, options that apply to one task only, and the plain-text table."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..core import limits
from ..core.errors import AdvisorError, check_int, echo, parse_number, unknown_name
from ..core.files import read_text, require_folder

ERROR_LINE_CHARS = 300  # an error is one line on stderr, never a 100 kB echo


def error_line(message: str) -> str:
    """`message` as the CLI prints it: "error: ...", on one line, cut to ERROR_LINE_CHARS."""
    text = " ".join(str(message).split())
    if len(text) > ERROR_LINE_CHARS:
        text = text[: ERROR_LINE_CHARS - 3] + "..."
    return f"error: {text}"


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of the usage block; sub-parsers inherit it."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        # argparse quotes the offending value ("invalid choice: '...'"): cut it like ours
        message = re.sub(r"'([^']*)'", lambda m: repr(echo(m.group(1))), message)
        print(error_line(f"{self.prog.split()[-1]}: {message}"), file=sys.stderr)
        raise SystemExit(2)


def _bare(exc: AdvisorError, field: str) -> str:
    msg = exc.message
    return msg[len(field) + 2 :] if msg.startswith(f"{field}: ") else msg


def number(field: str, bounds: tuple, *, exclusive_low: bool = False):
    """An argparse type: an ASCII decimal number within `bounds` (advisor.core.limits)."""

    def parse(text: str) -> float:
        try:
            return limits.check_range(
                field, parse_number(field, text), bounds, exclusive_low=exclusive_low
            )
        except AdvisorError as exc:
            raise argparse.ArgumentTypeError(_bare(exc, field)) from None

    parse.__name__ = field
    return parse


def count(field: str, minimum: int = 1, maximum: int = 1_000_000):
    """An argparse type: a whole number in [minimum, maximum] in ASCII digits ("2e9" allowed)."""

    def parse(text: str) -> int:
        try:
            v = parse_number(field, text)
            if isinstance(v, float) and v.is_integer() and abs(v) < 2**63:
                v = int(v)
            return check_int(field, v, minimum=minimum, maximum=maximum)
        except AdvisorError as exc:
            raise argparse.ArgumentTypeError(_bare(exc, field)) from None

    parse.__name__ = field
    return parse


# --- model, accelerator, measured results --------------------------------------------------


MODEL_DEFAULTS = {"batch": 1, "seq": 2048}


def add_model_args(p, *, required: bool = False) -> None:
    """--model / --config (one of them), --batch, --seq. With `required`, all three must be
    given; otherwise --batch and --seq stay None on the parser (so that a command can tell a
    given option from a default) and `fill_defaults(args, MODEL_DEFAULTS)` sets them."""
    src = p.add_mutually_exclusive_group(required=required)
    src.add_argument("--model", help="catalog model id (python -m advisor models)")
    src.add_argument("--config", metavar="FILE", help="a Hugging Face config.json")
    for name, maximum in (("batch", 1_000_000), ("seq", 16_777_216)):
        what = "sequences per GPU" if name == "batch" else "context length in tokens"
        p.add_argument(
            f"--{name}",
            type=count(name, maximum=maximum),
            required=required,
            help=what + ("" if required else f" (default {MODEL_DEFAULTS[name]})"),
        )


def fill_defaults(args, defaults: dict) -> None:
    """Set each option that was not given (None) to its default, after `reject_inapplicable`."""
    for key, value in defaults.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)


def read_config(path) -> object:
    """A `ModelSpec` from a config.json file: at most 1 MB, UTF-8, nested at most 64 deep."""
    from ..arch.models import from_config_json

    text = read_text(path, "config")
    try:
        return from_config_json(text, name=Path(path).stem)
    except AdvisorError as exc:  # name the file as well as the field
        name = echo(str(path), 120)
        rest = exc.message.removeprefix("config.json: ")
        exc.message = f"{name}: {rest}"
        exc.args = (exc.message,)
        raise


def model_from_args(args, catalog):
    """The model of `--model NAME` (catalog preset) or `--config FILE` (a config.json)."""
    if getattr(args, "config", None):
        return read_config(args.config)
    if getattr(args, "model", None):
        return catalog.model(args.model).spec
    raise AdvisorError("field.required", "model: give --model NAME or --config FILE", field="model")


def gpu_from_catalog(catalog, gpu_id: str):
    """The catalog accelerator `gpu_id`; an unknown id names close matches."""
    finder = getattr(catalog, "gpu", None)
    if finder is not None:
        return finder(gpu_id)
    for g in catalog.gpus:
        if g.id == gpu_id:
            return g
    raise unknown_name("gpu", gpu_id, [g.id for g in catalog.gpus])


def add_bench_args(p) -> None:
    p.add_argument("--bench", help="measured results folder (default: bench_results/)")
    p.add_argument(
        "--no-bench", action="store_true", help="ignore measured results; use the assumptions"
    )


def measured_from_args(args):
    """Measured efficiencies from bench_results/ (or --bench DIR) unless --no-bench; None when
    the folder is absent. A result file that does not validate is skipped with a one-line
    warning naming it (one bad file must not stop a recommendation)."""
    if getattr(args, "no_bench", False):
        return None
    folder = getattr(args, "bench", None)
    if folder:
        folder = require_folder(folder, "bench")
    else:
        folder = Path(__file__).resolve().parents[2] / "bench_results"
        if not folder.is_dir():
            return None
    from ..data.benchresults import load_results, measured_efficiencies

    def warn(exc: AdvisorError) -> None:
        print("warning: skipped: " + error_line(exc.message)[7:], file=sys.stderr)

    return measured_efficiencies(load_results(folder, on_error=warn)) or None


# --- options that apply to one task only ---------------------------------------------------


def reject_inapplicable(args, options: tuple[str, ...], context: str) -> None:
    """Refuse options that were given (not None / not False) but do not apply in `context`:
    a silently ignored option gives a wrong answer that looks right."""
    given = [o for o in options if getattr(args, o.replace("-", "_"), None) not in (None, False)]
    if given:
        flags = ", ".join(f"--{o}" for o in given)
        raise AdvisorError(
            "cli.option_not_applicable",
            f"{given[0]}: {flags} does not apply to {context}",
            field=given[0].replace("-", "_"),
            options=given,
            context=context,
        )


# --- output --------------------------------------------------------------------------------


def print_json(obj, *, indent: int | None = None, sort_keys: bool = False) -> int:
    """`obj` as JSON on stdout; a NaN or infinity is refused (JSON has none; it would be a bug)."""
    try:
        text = json.dumps(
            obj, ensure_ascii=False, indent=indent, sort_keys=sort_keys, allow_nan=False
        )
    except ValueError:
        raise AdvisorError(
            "output.not_finite", "output: a figure came out as NaN or infinity (please report)"
        ) from None
    print(text)
    return 0


def print_table(head: tuple, rows: list[tuple], *, left: int = 3) -> None:
    """Columns padded to their widest cell: the first `left` left-aligned, the rest right."""
    cells = [tuple(str(c) for c in r) for r in (head, *rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    for r in cells:
        print(
            "  ".join(
                c.ljust(w) if i < left else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
