"""The client report in the browser."""

from __future__ import annotations

from ..core.errors import (
    AdvisorError,
    shown,
    yaml_error,
)
from .common import MAX_CONFIG_CHARS, get_catalog


def report(params: dict) -> dict:
    """Client advisory report (advisor.report.web_report): {profile (YAML text), lang,
    publisher} -> {html, fragment, filename} or {"error": ...}. The request's shape is checked
    here (profile text of at most 1 MB, lang az/en/none, publisher an object)."""
    from ..report import web_report

    if not isinstance(params, dict):
        raise AdvisorError("field.not_object", "params: expected an object", field="params")
    profile = params.get("profile")
    if not isinstance(profile, str):
        raise AdvisorError("field.required", "profile: expected YAML text", field="profile")
    if len(profile) > MAX_CONFIG_CHARS:
        raise AdvisorError(
            "field.too_large",
            f"profile: at most {MAX_CONFIG_CHARS} characters",
            field="profile",
            maximum=MAX_CONFIG_CHARS,
        )
    lang = params.get("lang")
    if lang not in (None, "", "az", "en"):
        raise AdvisorError(
            "name.unknown",
            f"lang: expected az or en, got {shown(lang)}",
            field="lang",
            name=shown(lang),
            suggestions=["az", "en"],
        )
    publisher = params.get("publisher")
    if publisher is not None and not isinstance(publisher, dict):
        raise AdvisorError("field.not_object", "publisher: expected an object", field="publisher")
    try:
        return web_report({**params, "lang": lang or None, "publisher": publisher}, get_catalog())
    except AdvisorError:
        raise
    except RecursionError:
        raise AdvisorError("file.too_deep", "profile: nested too deeply", field="profile") from None
    except ValueError as exc:  # the YAML reader's own failure on malformed text (e.g. "\uZZZZ")
        raise yaml_error("profile", exc) from None
