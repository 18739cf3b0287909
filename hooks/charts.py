"""Self-generated inline SVG charts (no JavaScript, nothing fetched): horizontal bars and a
log-log scatter. Labels come from the caller (already translated and formatted), so the charts
read in both languages; each SVG has <title> and <desc>, and the pages put the same figures in a
table beside it as the text alternative. Output is a single raw-HTML block (no blank lines) so
Markdown passes it through untouched; coordinates are printed with fixed decimals so that two
builds are byte-identical.
"""

from __future__ import annotations

import math
from html import escape

from markupsafe import Markup

W = 720  # viewBox width


def _f(x: float) -> str:
    return f"{x:.1f}"


def _svg(inner: list[str], height: float, title: str, desc: str, ident: str) -> str:
    head = (
        f'<svg class="advisor-chart" viewBox="0 0 {W} {_f(height)}" role="img" '
        f'aria-labelledby="{ident}-t {ident}-d" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
    )
    return Markup(
        '<figure class="advisor-figure">' + head + "".join(inner) + "</svg>"
        f"<figcaption>{escape(title)}</figcaption></figure>"
    )


def hbar(ident: str, title: str, desc: str, rows: list[tuple[str, float, str]]) -> str:
    """Horizontal bars: rows of (label, value, value text), drawn in the given order. Each
    label stands on its own line above its bar (issue 39: a long accelerator name beside the
    bar was cut off at the left edge, on a desk and on a phone), the value text after the bar;
    site.css sets larger text on a phone (the SVG scales down there)."""
    bar_h, label_h, gap, right, top = 14, 24, 14, 250, 6
    row_h = label_h + bar_h + gap
    height = top * 2 + len(rows) * row_h
    vmax = max((v for _, v, _ in rows), default=0) or 1.0
    span = W - right
    out = []
    for i, (label, value, text) in enumerate(rows):
        y = top + i * row_h
        w = max(span * value / vmax, 1.0)
        out.append(
            f'<text class="lbl" x="0" y="{_f(y + label_h - 4)}">{escape(label)}</text>'
            f'<rect class="bar" x="0" y="{_f(y + label_h)}" width="{_f(w)}" height="{bar_h}" rx="3"/>'
            f'<text class="val" x="{_f(w + 6)}" y="{_f(y + label_h + bar_h - 3)}">'
            f"{escape(text)}</text>"
        )
    return _svg(out, height, title, desc, ident)


def _log_ticks(lo: float, hi: float) -> list[float]:
    ticks = []
    e = math.floor(math.log10(lo))
    while 10**e <= hi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10**e
            if lo <= v <= hi:
                ticks.append(v)
        e += 1
    return ticks


def scatter(
    ident: str,
    title: str,
    desc: str,
    points: list[tuple[str, float, float]],
    x_label: str,
    y_label: str,
    fmt,
    ridge_lines: list[tuple[float, str]] = (),
) -> str:
    """Log-log scatter of (label, x, y); `ridge_lines`: (x/y ratio, label) diagonals, used for
    compute (TFLOPS) vs bandwidth (GB/s): x*1e12 / (y*1e9) = ridge point in FLOP/byte."""
    left, right, top, bottom, height = 70, 30, 20, 50, 460
    if not points:
        return _svg([], 40, title, desc, ident)
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    x0, x1 = min(xs) / 1.6, max(xs) * 1.6
    y0, y1 = min(ys) / 1.6, max(ys) * 1.6
    pw, ph = W - left - right, height - top - bottom

    def px(x):
        return left + pw * (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))

    def py(y):
        return top + ph - ph * (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0))

    out = [
        f'<clipPath id="{ident}-clip"><rect x="{left}" y="{top}" width="{pw}" height="{ph}"/>'
        "</clipPath>",
        f'<rect class="frame" x="{left}" y="{top}" width="{pw}" height="{ph}"/>',
    ]
    for v in _log_ticks(x0, x1):
        x = px(v)
        out.append(
            f'<line class="grid" x1="{_f(x)}" y1="{top}" x2="{_f(x)}" y2="{top + ph}"/>'
            f'<text class="tick" x="{_f(x)}" y="{top + ph + 16}" text-anchor="middle">{fmt(v)}</text>'
        )
    for v in _log_ticks(y0, y1):
        y = py(v)
        out.append(
            f'<line class="grid" x1="{left}" y1="{_f(y)}" x2="{left + pw}" y2="{_f(y)}"/>'
            f'<text class="tick" x="{left - 6}" y="{_f(y + 4)}" text-anchor="end">{fmt(v)}</text>'
        )
    for ratio, label in ridge_lines:  # y = x / ratio (units folded into ratio by the caller)
        pts = []
        for x in (x0, x1):
            y = x / ratio
            pts.append((px(x), py(y)))
        (ax, ay), (bx, by) = pts
        out.append(
            f'<line class="ridge" clip-path="url(#{ident}-clip)" x1="{_f(ax)}" y1="{_f(ay)}" '
            f'x2="{_f(bx)}" y2="{_f(by)}"/>'
        )
        # label where the line leaves the top or right edge of the plot
        lx = min(left + pw - 4, px(min(x1, y1 * ratio)) - 4)
        ly = max(top + 12, py(min(x1, y1 * ratio) / ratio) + 12)
        out.append(
            f'<text class="ridge-lbl" x="{_f(lx)}" y="{_f(ly)}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
    for label, x, y in points:
        cx, cy = px(x), py(y)
        right_half = cx > left + pw * 0.6  # label to the left of points near the right edge
        tx, anchor = (cx - 7, "end") if right_half else (cx + 7, "start")
        out.append(
            f'<circle class="pt" cx="{_f(cx)}" cy="{_f(cy)}" r="5"/>'
            f'<text class="pt-lbl" x="{_f(tx)}" y="{_f(cy - 6)}" text-anchor="{anchor}">'
            f"{escape(label)}</text>"
        )
    out.append(
        f'<text class="axis" x="{left + pw / 2:.1f}" y="{height - 12}" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text class="axis" transform="translate(16 {top + ph / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    return _svg(out, height, title, desc, ident)
