"""`python -m advisor`: the command-line interface. Each sub-command lives in its own module under
`advisor.commands` and exposes `register(subparsers)`; errors print one line and exit 2."""

from __future__ import annotations

import importlib
import json
import sys

from .commands._common import Parser, error_line
from .core.errors import AdvisorError

# One module per sub-command, in help order.
COMMANDS: list[str] = ["models", "cost", "recommend", "memory", "time", "report", "gpus"]


def build_parser() -> Parser:
    parser = Parser(
        prog="python -m advisor",
        description="GPU Advisor: accelerator memory, time and cost for AI training and inference.",
    )
    parser.add_argument(
        "--catalog", help="catalog folder (default: the repository's catalog/ or $ADVISOR_CATALOG)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"advisor.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a one-line usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except AdvisorError as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False), file=sys.stderr)
        else:
            print(error_line(exc.message), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except RecursionError:
        print(error_line("input: nested too deeply"), file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: still one line and exit 2, never a traceback
        print(
            error_line(f"internal: {exc.__class__.__name__}: {exc} (please report this input)"),
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
