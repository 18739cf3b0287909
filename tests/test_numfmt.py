"""One number formatter (advisor.core.numfmt): the site's filters, the reports, the bench pages and the
calculators' render.mjs give the same text, halfway values included, in both languages.

The golden table is generated here from the Python formatter and replayed under Node through
calcruntime/browser/render.mjs (`formatNumber`, `formatMoney`, `formatPercent`)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest
from conftest import ROOT

from advisor import report
from advisor.core import numfmt
from advisor.data import benchresults

HALFWAY = [0.5, 1.5, 2.5, 3.5, -0.5, -2.5, 1234.5, -1234.5, 999.5, 9999.5, 0.125, 0.375]
HALFWAY += [1.005, 2.675, 0.045, 1.255, 1500.5, 1500.505, 123456789.125, 0.0005, 9.995]
OTHERS = [0, 0.0, -0.0, -0.004, 1, 7, 12.0, 1234567, 0.1, 0.2 + 0.1, 1 / 3, 2 / 3, 42.42]
OTHERS += [1e15, 1e21, 1.5e21, 1e-7, 1.5e-7, 5e-324, 1.7976931348623157e308, 99.99999]
OTHERS += [2**53, 2**53 + 2, 123.456789, 0.999, 0.9995, 19.999, 1e16 + 2]
VALUES = HALFWAY + OTHERS
MONEY = [0, 0.004, -0.004, 2.49, 2.5, 1500.5, 1500.505, -12, -1500.5, 1234567.891, 0.125]
CURRENCIES = ["USD", "EUR", "AZN", "GBP"]
LANGS = ["az", "en"]


def golden() -> list[dict]:
    rows = []
    for lang in LANGS:
        for v in VALUES:
            for digits in (0, 1, 2, 3):
                for trim in (False, True):
                    rows.append(
                        {"fn": "number", "args": [v, lang, digits, trim],
                         "want": numfmt.number(v, digits, lang, trim=trim)}
                    )  # fmt: skip
        for v in MONEY:
            for cur in CURRENCIES:
                for digits in (0, 2):
                    rows.append(
                        {"fn": "money", "args": [v, cur, lang, digits],
                         "want": numfmt.money(v, cur, lang, digits)}
                    )  # fmt: skip
        for v in (0.125, 0.5, 0.005, 1.0, -0.025, 0.0):
            for digits in (0, 1):
                rows.append(
                    {"fn": "percent", "args": [v, lang, digits],
                     "want": numfmt.percent(v, digits, lang)}
                )  # fmt: skip
        for v in (None, "nan", "inf"):
            rows.append({"fn": "number", "args": [v, lang, 1, False], "want": numfmt.MISSING})
    return rows


def test_halfway_values_round_half_up_in_both_languages():
    table = {
        (0.5, 0): ("1", "1"),
        (2.5, 0): ("3", "3"),
        (-2.5, 0): ("-3", "-3"),
        (1234.5, 0): ("1,235", "1.235"),
        (0.125, 2): ("0.13", "0,13"),
        (1.005, 2): ("1.01", "1,01"),  # shortest text "1.005", as the reader sees it
        (2.675, 2): ("2.68", "2,68"),
        (1234.5, 1): ("1,234.5", "1.234,5"),
        (-0.004, 2): ("0.00", "0,00"),  # no "-0"
        (1234567, 0): ("1,234,567", "1.234.567"),
    }
    for (v, d), (en, az) in table.items():
        assert numfmt.number(v, d, "en") == en, (v, d)
        assert numfmt.number(v, d, "az") == az, (v, d)
    assert numfmt.number(2.50, 2, "en", trim=True) == "2.5"
    assert numfmt.number(float("nan"), 1, "en") == numfmt.MISSING
    assert numfmt.number(None, 1, "az") == numfmt.MISSING


def test_money_decided_once():
    assert numfmt.money(1500.5, "USD", "en") == "$1,500.50"
    assert numfmt.money(1500.5, "USD", "en", 0) == "$1,501"
    assert numfmt.money(1500.5, "USD", "az", 0) == "1.501\u00a0$"
    assert numfmt.money(1500.5, "AZN", "en") == "AZN\u00a01,500.50"
    assert numfmt.money(1500.5, "AZN", "az") == "1.500,50\u00a0₼"
    assert numfmt.money(-12, "EUR", "en") == "-€12.00"
    assert numfmt.money(-0.004, "USD", "en") == "$0.00"


def _site_filters(lang: str) -> dict:
    from hooks import templating

    return templating.make_filters(lang, None)


@pytest.mark.parametrize("lang", LANGS)
def test_site_report_and_bench_agree(lang):
    """The disagreements of issue 15: 2.5 was "3" on the site and "2" in a report; 1234.5 was
    "1.235" on the site, "1.234" in a report and on the bench page; money took three shapes."""
    site = _site_filters(lang)
    for v in VALUES:
        for d in (0, 1, 2):
            want = numfmt.number(v, d, lang)
            assert site["num"](v, d) == want, (v, d)
            assert report.fmt_num(v, d, lang) == want, (v, d)
        assert site["pct"](v / 1000, 1) == report.fmt_pct(v / 1000, lang, 1)
        if math.isfinite(v * 2**30):
            assert site["gib"](v * 2**30, 2) == report.fmt_gib(v * 2**30, lang, 2)
    for v in MONEY:
        assert site["money"](v, "USD", 0) == report.fmt_money(v, "USD", lang, 0)
        assert site["money"](v) == report.fmt_money(v, "USD", lang, 2)
    assert report.fmt_num(2.5, 0, lang) == "3"
    assert benchresults._fmt(1234.5, lang) == ("1,235" if lang == "en" else "1.235")
    assert benchresults._fmt(2.5, lang) == ("2.50" if lang == "en" else "2,50")
    assert benchresults._fmt(0.0125, lang) == ("0.0125" if lang == "en" else "0,0125")


@pytest.mark.node
@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_render_mjs_matches_the_golden_table():
    rows = golden()
    script = """
const m = await import(process.argv[1]);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const val = (v) => (v === "nan" ? NaN : v === "inf" ? Infinity : v);
const fns = { number: (v, l, d, t) => m.formatNumber(val(v), l, d, t),
              money: (v, c, l, d) => m.formatMoney(val(v), c, l, d),
              percent: (v, l, d) => m.formatPercent(val(v), l, d) };
process.stdout.write(JSON.stringify(JSON.parse(input).map((r) => fns[r.fn](...r.args))));
"""
    url = (ROOT / "calcruntime/browser/render.mjs").as_uri()
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", script, url],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = json.loads(proc.stdout)
    bad = [(r["fn"], r["args"], r["want"], g) for r, g in zip(rows, got, strict=True)]
    bad = [b for b in bad if b[2] != b[3]]
    assert not bad, bad[:20]
    assert len(rows) > 500
    assert any(isinstance(r["args"][0], float) and math.isfinite(r["args"][0]) for r in rows)


@pytest.mark.parametrize(
    ("lang", "predicted", "measured", "error_pct"),
    [("az", "27.270", "31.874", "-14"), ("en", "27,270", "31,874", "-14")],
)
def test_validation_reason_figures_in_the_pages_language(lang, predicted, measured, error_pct):
    """The validation reasons' figures (bench/throughput_validation.py stores plain numbers in
    `reason_params`) are formatted when the methodology page renders `tv.reason.<key>`, in the
    page's language (az: "27.270", decimal comma); names stay as they are."""
    from hooks import templating

    params = {"model": "deepseek-v3", "predicted": 27270, "measured": 31873.5, "error_pct": "-14"}
    got = _site_filters(lang)["figures"](params)
    assert got == {"model": "deepseek-v3", "predicted": predicted, "measured": measured,
                   "error_pct": error_pct}  # fmt: skip
    more = templating.format_params({"error_pct": "+1234", "x": 12.34, "ok": True}, lang)
    assert more == {"error_pct": "+1.234" if lang == "az" else "+1,234",
                    "x": "12,34" if lang == "az" else "12.34", "ok": True}  # fmt: skip
    # the page's own call: t("tv.reason." ~ r.key, **(r.params | figures))
    strings = templating.load_strings(ROOT / "templates" / "i18n")
    env = templating.make_env(ROOT / "templates", lang, None)
    env.globals["t"] = templating.make_t(lang, strings)
    page = (ROOT / "docs" / lang / "methodology.md").read_text(encoding="utf-8")
    assert '{{ t("tv.reason." ~ r.key, **(r.params | figures)) }}' in page
    text = env.from_string('{{ t("tv.reason." ~ key, **(params | figures)) }}').render(
        key="moe_dispatcher", params=params
    )
    assert f"{predicted}" in text and f"{measured}" in text and "27270" not in text
