"""The publisher shown on client reports (name, logo, contact): from configuration
(publisher.yaml or `--publisher FILE`), never from code."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from ..core import yamlsafe
from ..core.errors import AdvisorError


@dataclass(frozen=True)
class Publisher:
    name: str
    contact: str = ""
    url: str = ""
    logo_data_uri: str = ""  # data:image/svg+xml;base64,... (inlined; no request)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "contact": self.contact,
            "url": self.url,
            "logo_data_uri": self.logo_data_uri,
        }


MAX_LOGO_BYTES = 512_000  # inlined into every report as base64
_LOGO_TYPES = {
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
}


def publisher_from_dict(doc, base_dir=None) -> Publisher:
    """`{name, contact?, url?, logo?}`; `logo` is a file inside `base_dir` (a relative path; at
    most MAX_LOGO_BYTES) inlined as a data URI, or a ready `data:image/` URI."""
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not doc["name"].strip():
        raise AdvisorError("publisher.invalid", "publisher: needs a 'name'", field="publisher.name")
    for k in ("contact", "url", "logo", "logo_data_uri"):
        if doc.get(k) is not None and not isinstance(doc[k], str):
            raise AdvisorError(
                "publisher.invalid", f"publisher: {k}: expected text", field=f"publisher.{k}"
            )
    url = doc.get("url") or ""
    if url and not url.startswith(("https://", "http://", "mailto:")):
        raise AdvisorError(
            "publisher.invalid", "publisher: url: expected an http(s) URL", field="publisher.url"
        )
    logo = doc.get("logo_data_uri") or ""
    path = doc.get("logo")
    if path and path.startswith("data:image/"):
        logo = path
    elif path:
        kind = _LOGO_TYPES.get(Path(path).suffix.lower())
        if kind is None:
            raise AdvisorError(
                "publisher.invalid",
                "publisher: logo: an .svg, .png or .jpg file",
                field="publisher.logo",
            )
        base = Path(base_dir).resolve() if base_dir is not None else None
        p = (base / path).resolve() if base is not None else None
        if p is None or Path(path).is_absolute() or not p.is_relative_to(base):
            raise AdvisorError(
                "publisher.invalid",
                "publisher: logo: a file inside the folder of the publisher file (relative path)",
                field="publisher.logo",
            )
        data = yamlsafe.read_bytes(p, "publisher.logo", MAX_LOGO_BYTES)
        logo = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
    if logo and not logo.startswith("data:image/"):
        raise AdvisorError(
            "publisher.invalid",
            "publisher: logo: expected a data:image/ URI",
            field="publisher.logo",
        )
    return Publisher(doc["name"], doc.get("contact") or "", url, logo)


def load_publisher(path) -> Publisher:

    p = Path(path)
    return publisher_from_dict(yamlsafe.load_file(p, "publisher"), p.parent)


def default_publisher_path() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "publisher.yaml"
