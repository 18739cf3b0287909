"""`python -m advisor report PROFILE.yaml [--lang az|en] [--out DIR] [--publisher FILE]`: a client
advisory report as one self-contained HTML file, DIR/<profile file name>.<lang>.html.

The profile is validated and the whole report rendered in memory first; the file is then
written to a temporary file in DIR and moved into place with os.replace, so a failure never
leaves a half-written report. An invalid profile prints one line per bad field (exit 2)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..core.errors import AdvisorError, yaml_error
from ..core.files import file_slug, read_text
from ..data.catalog import load_catalog
from ._common import error_line


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="client advisory report (HTML) from a profile")
    p.add_argument("profile", help="client profile YAML (see examples/)")
    p.add_argument("--lang", choices=("az", "en"), help="language (default: the profile's)")
    p.add_argument("--out", default=".", help="output folder (default: the current one)")
    p.add_argument(
        "--publisher", help="publisher YAML: name, contact, url, logo (default: ./publisher.yaml)"
    )
    p.set_defaults(func=_run)


# Letters that Unicode decomposition does not reduce to ASCII (Azerbaijani, Turkish, German).
def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same folder and os.replace. The file
    gets the mode an ordinary open() would give it (0666 less the umask): mkstemp's 0600 made
    every report private whatever the umask (issue 40)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _publisher_path(args) -> Path:
    from ..report import default_publisher_path

    if args.publisher:
        return Path(args.publisher)
    here = Path("publisher.yaml")
    return here if here.is_file() else default_publisher_path()


def load_publisher_file(path: Path):
    """The publisher file (at most 1 MB, UTF-8); its logo resolves inside its folder."""
    from ..core import yamlsafe
    from ..report import publisher_from_dict

    text = read_text(path, "publisher")
    return publisher_from_dict(yamlsafe.loads(text, source=path.name), path.parent)


def _run(args) -> int:
    from ..advice.profile import parse_profile
    from ..report import build_report, render_html

    catalog = load_catalog(args.catalog)
    text = read_text(args.profile, "profile")
    try:
        profile = parse_profile(text, catalog, source=f"profile {Path(args.profile).name}")
    except AdvisorError as exc:
        if exc.key == "profile.invalid":
            for item in exc.params.get("errors", [])[:20]:
                print(error_line(item["message"]), file=sys.stderr)
            return 2
        raise
    except RecursionError:
        raise AdvisorError("file.too_deep", "profile: nested too deeply", field="profile") from None
    except ValueError as exc:  # the YAML reader's own failure on malformed text
        raise yaml_error("profile", exc) from None
    publisher = load_publisher_file(_publisher_path(args))
    data = build_report(profile, catalog, lang=args.lang)
    text = render_html(data, publisher)
    if not args.out.strip() or args.out != args.out.strip():
        raise AdvisorError(  # `--out ' '` made a folder named with a space
            "field.not_text",
            f"out: expected a folder name without leading or trailing spaces, got {args.out!r}",
            field="out",
        )
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AdvisorError(
            "file.unwritable", f"out: cannot create {out} ({exc.strerror})", field="out"
        ) from None
    path = out / f"{file_slug(Path(args.profile).stem)}.{data['lang']}.html"
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise AdvisorError(
            "file.unwritable", f"out: cannot write {path} ({exc.strerror})", field="out"
        ) from None
    print(path)
    return 0
