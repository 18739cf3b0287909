"""hooks/csp.py without a browser: the policy's meta tag comes before the first script, holds the
hash of every inline script the site runs, and no 'unsafe-inline' for scripts (the browser
checks: tests/test_browser_csp.py)."""

from __future__ import annotations

from hooks import csp

PAGE = (
    '<!doctype html><html><head><meta charset="utf-8"><script data-base="../">boot()</script>'
    '<script id="__config" type="application/json">{"a": 1}</script>'
    '<script src="x.js"></script></head><body><script>__md_scope=1</script></body></html>'
)


def test_inline_scripts_are_the_ones_a_browser_runs():
    assert csp.inline_scripts(PAGE) == ["boot()", "__md_scope=1"]


def test_meta_first_and_hashes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "b.html").write_text(PAGE.replace("__md_scope=1", "other()"), encoding="utf-8")
    assert csp.apply(tmp_path) == 2
    assert csp.apply(tmp_path) == 0  # once
    text = (tmp_path / "a" / "index.html").read_text(encoding="utf-8")
    assert text.index("Content-Security-Policy") < text.index("<script")
    # site-wide: instant navigation keeps the first page's policy for the next ones
    for body in ("boot()", "__md_scope=1", "other()"):
        assert csp.sha256(body) in text
    script_src = next(d for d in csp.policy(set()).split("; ") if d.startswith("script-src"))
    assert "'unsafe-inline'" not in script_src and "'wasm-unsafe-eval'" in script_src
    assert csp.sha256("return false") in script_src
