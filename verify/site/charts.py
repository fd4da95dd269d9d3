"""Charts of recorded data as inline SVG: one frame, drawn here, for every chart on the site.

A views module describes a chart as data (`XY`, `Bars`, `Timeline`, built from a
record) and this module draws it. Drawing rules that hold for every chart:

- inline SVG, so text and axes take the page's own colour (`currentColor`) and the
  series take theme-aware colours from CSS classes (`tone-N`, light and dark in
  docs/stylesheets/extra.css); nothing is fetched from outside the site;
- a `<title>` and a `<desc>` that says in words what the chart shows, numbers
  included, for screen readers and for anyone who cannot see the picture;
- a fixed drawing width with the chart in a scrolling box that never shrinks it
  below MIN_WIDTH_PX, so labels stay readable on a phone (the page scrolls the
  chart sideways instead of shrinking its text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

WIDTH = 640
MIN_WIDTH_PX = 560  # in verify.css too: the narrowest a chart is drawn
FONT = 13
TONES = 5


@dataclass(frozen=True)
class Line:
    """Points joined by a line on an XY chart."""
    label: str
    points: tuple[tuple[float, float], ...]
    tone: int = 0
    dashed: bool = False
    markers: bool = False
    values: str = ""  # a format for labelling every point with its y value, e.g. "{:.0f}"
    step: bool = False  # hold each value until the next point (a gauge read at intervals)
    right_axis: bool = False  # measured against the chart's second y axis


@dataclass(frozen=True)
class Rule:
    """A reference line across the chart at one value, with its label."""
    at: float
    label: str
    tone: int = 3
    vertical: bool = False


@dataclass(frozen=True)
class Band:
    """A stretch of x (for example a request's lifetime) drawn as a thin bar above the plot."""
    start: float
    end: float
    label: str = ""


@dataclass(frozen=True)
class XY:
    title: str
    x_label: str
    y_label: str
    lines: tuple[Line, ...]
    rules: tuple[Rule, ...] = ()
    bands: tuple[Band, ...] = ()
    bands_label: str = ""
    y2_label: str = ""
    x_ticks: tuple[float, ...] = ()  # where to put x ticks; evenly spaced when empty
    x_min: float | None = None
    y_min: float = 0.0


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str = ""  # shown above the bar; the value itself when empty


@dataclass(frozen=True)
class Bars:
    title: str
    x_label: str
    y_label: str
    bars: tuple[Bar, ...]
    tone: int = 0


@dataclass(frozen=True)
class Span:
    """One row of a timeline: a stretch of time with its label."""
    label: str
    start: float
    duration: float
    tone: int = 0
    text: str = ""  # shown after the bar


@dataclass(frozen=True)
class Mark:
    """A moment on a timeline, drawn as a dashed line across every row."""
    at: float
    label: str
    tone: int = 2


@dataclass(frozen=True)
class Timeline:
    title: str
    x_label: str
    rows: tuple[Span, ...]
    marks: tuple[Mark, ...] = ()
    scale: float = 1.0  # multiply times by this for the axis (1000: seconds shown as ms)
    note: str = ""


@dataclass
class _Frame:
    """The plotting area of one chart and its scales."""
    height: int
    left: int = 64
    right: int = 24
    top: int = 16
    bottom: int = 48
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    parts: list[str] = field(default_factory=list)

    def x(self, v: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return self.left + (WIDTH - self.left - self.right) * (v - self.x0) / span

    def y(self, v: float, top: float | None = None) -> float:
        y1 = self.y1 if top is None else top
        span = (y1 - self.y0) or 1.0
        return self.height - self.bottom - (self.height - self.bottom - self.top) * (v - self.y0) / span

    def text(self, x: float, y: float, s: str, anchor: str = "start", css: str = "", size: int = FONT,
             rotate: bool = False) -> None:
        turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
        cls = f' class="{css}"' if css else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{cls}{turn}>'
                          f'{escape(s)}</text>')


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering lo..hi (1, 2 or 5 times a power of ten apart)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    n = int((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(n)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.2g}"


def _open(chart_title: str, desc: str, height: int, kind: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
            f'height="{height}" role="img" class="verify-chart verify-chart-{kind}" font-family="sans-serif" '
            f'fill="currentColor">',
            f"<title>{escape(chart_title)}</title>", f"<desc>{escape(desc)}</desc>"]


def _axes(f: _Frame, x_label: str, y_label: str, xs: list[float], ys: list[float], y2: tuple | None = None) -> None:
    base = f.height - f.bottom
    f.parts.append(f'<line x1="{f.left}" y1="{base}" x2="{WIDTH - f.right}" y2="{base}" class="axis"/>')
    f.parts.append(f'<line x1="{f.left}" y1="{f.top}" x2="{f.left}" y2="{base}" class="axis"/>')
    for v in ys:
        f.parts.append(f'<line x1="{f.left}" y1="{f.y(v):.1f}" x2="{WIDTH - f.right}" y2="{f.y(v):.1f}" class="grid"/>')
        f.text(f.left - 6, f.y(v) + 4, _fmt(v), "end", size=FONT - 1)
    for v in xs:
        f.text(f.x(v), base + 16, _fmt(v), "middle", size=FONT - 1)
    f.text((f.left + WIDTH - f.right) / 2, base + 34, x_label, "middle")
    f.text(16, (f.top + base) / 2, y_label, "middle", rotate=True)
    if y2:
        label, ticks, top = y2
        for v in ticks:
            f.text(WIDTH - f.right + 6, f.y(v, top) + 4, _fmt(v), size=FONT - 1, css="tone-1-text")
        f.text(WIDTH - 12, (f.top + base) / 2, label, "middle", rotate=True, css="tone-1-text")


def _close(parts: list[str]) -> str:
    # One line per element and no blank line: the page's Markdown passes the block through untouched.
    return "\n".join([*parts, "</svg>"])


def _xy(c: XY) -> str:
    left_lines = [ln for ln in c.lines if not ln.right_axis]
    right_lines = [ln for ln in c.lines if ln.right_axis]
    xs_all = [p[0] for ln in c.lines for p in ln.points] + [b.end for b in c.bands] + \
             [r.at for r in c.rules if r.vertical]
    ys_all = [p[1] for ln in left_lines for p in ln.points] + [r.at for r in c.rules if not r.vertical]
    legend_rows = len(c.lines) + bool(c.bands)
    bands_h = 10 * len(c.bands) + (8 if c.bands else 0)
    legend_h = 18 * ((legend_rows + 1) // 2)
    f = _Frame(height=300 + bands_h + legend_h, top=16 + bands_h, right=64 if right_lines else 24,
               bottom=60 + legend_h)
    f.x0 = c.x_min if c.x_min is not None else min(0.0, min(xs_all, default=0.0))
    f.x1 = max(xs_all, default=1.0)
    f.y0 = c.y_min
    y_ticks = nice_ticks(c.y_min, max(ys_all, default=1.0) * 1.05 or 1.0)
    f.y1 = max(y_ticks[-1], max(ys_all, default=1.0) * 1.05) or 1.0
    x_ticks = list(c.x_ticks) or nice_ticks(f.x0, f.x1, 6)
    y2 = None
    if right_lines:
        y2_max = max(p[1] for ln in right_lines for p in ln.points) * 1.05 or 1.0
        y2_ticks = nice_ticks(0.0, y2_max)
        y2 = (c.y2_label, y2_ticks, max(y2_ticks[-1], y2_max))
    desc = _describe_xy(c)
    f.parts = _open(c.title, desc, f.height, "xy")
    _axes(f, c.x_label, c.y_label, x_ticks, y_ticks, y2)
    for i, b in enumerate(c.bands):
        yy = 10 + 10 * i
        f.parts.append(f'<line x1="{f.x(b.start):.1f}" y1="{yy}" x2="{max(f.x(b.end), f.x(b.start) + 2):.1f}" '
                       f'y2="{yy}" class="band"/>')
    for r in c.rules:
        if r.vertical:
            f.parts.append(f'<line x1="{f.x(r.at):.1f}" y1="{f.top}" x2="{f.x(r.at):.1f}" y2="{f.y(f.y0):.1f}" '
                           f'class="rule tone-{r.tone % TONES}"/>')
            f.text(f.x(r.at) + 4, f.top + 12, r.label, css=f"tone-{r.tone % TONES}-text", size=FONT - 1)
        else:
            f.parts.append(f'<line x1="{f.left}" y1="{f.y(r.at):.1f}" x2="{WIDTH - f.right}" y2="{f.y(r.at):.1f}" '
                           f'class="rule tone-{r.tone % TONES}"/>')
            f.text(WIDTH - f.right, f.y(r.at) - 5, r.label, "end", css=f"tone-{r.tone % TONES}-text", size=FONT - 1)
    for ln in c.lines:
        top = y2[2] if ln.right_axis else None
        pts = list(ln.points)
        if ln.step and pts:
            stepped = [pts[0]]
            for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
                stepped += [(xb, ya), (xb, yb)]
            pts = stepped
        coords = " ".join(f"{f.x(x):.1f},{f.y(y, top):.1f}" for x, y in pts)
        dash = " dashed" if ln.dashed else ""
        f.parts.append(f'<polyline points="{coords}" class="series tone-{ln.tone % TONES}{dash}"/>')
        for x, y in ln.points:
            if ln.markers:
                f.parts.append(f'<circle cx="{f.x(x):.1f}" cy="{f.y(y, top):.1f}" r="3.5" '
                               f'class="marker tone-{ln.tone % TONES}"/>')
            if ln.values:
                f.text(f.x(x), f.y(y, top) - 8, ln.values.format(y), "middle", css=f"tone-{ln.tone % TONES}-text",
                       size=FONT - 1)
    _legend(f, [(ln.label, ln.tone, ln.dashed) for ln in c.lines] +
            ([(c.bands_label, None, False)] if c.bands else []))
    return _close(f.parts)


def _legend(f: _Frame, entries: list[tuple[str, int | None, bool]]) -> None:
    y = f.height - f.bottom + 56
    for i, (label, tone, dashed) in enumerate(entries):
        x = f.left + (WIDTH - f.left - f.right) / 2 * (i % 2)
        yy = y + 18 * (i // 2)
        if tone is None:
            f.parts.append(f'<line x1="{x:.1f}" y1="{yy - 4}" x2="{x + 22:.1f}" y2="{yy - 4}" class="band"/>')
        else:
            dash = " dashed" if dashed else ""
            f.parts.append(f'<line x1="{x:.1f}" y1="{yy - 4}" x2="{x + 22:.1f}" y2="{yy - 4}" '
                           f'class="series tone-{tone % TONES}{dash}"/>')
        f.text(x + 28, yy, label, size=FONT - 1)


def _describe_xy(c: XY) -> str:
    parts = [f"{c.title}. {c.y_label} against {c.x_label}."]
    for ln in c.lines:
        if not ln.points:
            parts.append(f"{ln.label}: no points.")
            continue
        ys = [p[1] for p in ln.points]
        parts.append(f"{ln.label}: {len(ln.points)} points from {_fmt(ln.points[0][0])} to {_fmt(ln.points[-1][0])}, "
                     f"lowest {_fmt(min(ys))}, highest {_fmt(max(ys))}.")
    parts += [f"Line at {_fmt(r.at)}: {r.label}." for r in c.rules]
    if c.bands:
        parts.append(f"{c.bands_label}: " + "; ".join(f"{_fmt(b.start)} to {_fmt(b.end)}" for b in c.bands) + ".")
    return " ".join(parts)


def _bars(c: Bars) -> str:
    f = _Frame(height=290, bottom=58)
    top = max((b.value for b in c.bars), default=1.0) * 1.15 or 1.0
    ticks = nice_ticks(0.0, top)
    f.y1 = max(ticks[-1], top)
    desc = f"{c.title}. {c.y_label} for each {c.x_label}: " + "; ".join(
        f"{b.label}: {b.text or _fmt(b.value)}" for b in c.bars) + "."
    f.parts = _open(c.title, desc, f.height, "bars")
    _axes(f, c.x_label, c.y_label, [], ticks)
    slot = (WIDTH - f.left - f.right) / max(len(c.bars), 1)
    for i, b in enumerate(c.bars):
        x0 = f.left + slot * (i + 0.25)
        f.parts.append(f'<rect x="{x0:.1f}" y="{f.y(b.value):.1f}" width="{slot / 2:.1f}" '
                       f'height="{f.y(0) - f.y(b.value):.1f}" class="bar tone-{c.tone % TONES}"/>')
        f.text(x0 + slot / 4, f.height - f.bottom + 16, b.label, "middle", size=FONT - 1)
        f.text(x0 + slot / 4, f.y(b.value) - 6, b.text or _fmt(b.value), "middle", size=FONT - 1)
    return _close(f.parts)


def _timeline(c: Timeline) -> str:
    # Each row's label sits above its bar, so the bars get the full width on a narrow screen.
    row_h = 40
    f = _Frame(height=36 + row_h * len(c.rows) + 44 + (18 if c.note else 0), left=12, right=84, top=8)
    end = max((r.start + r.duration for r in c.rows), default=1.0)
    f.x0, f.x1 = 0.0, end * c.scale * 1.02
    desc = f"{c.title}. " + " ".join(
        f"{r.label}: from {_fmt(r.start * c.scale)} to {_fmt((r.start + r.duration) * c.scale)} {c.x_label}"
        f"{' (' + r.text + ')' if r.text else ''}." for r in c.rows) + \
        "".join(f" {m.label} at {_fmt(m.at * c.scale)} {c.x_label}." for m in c.marks)
    f.parts = _open(c.title, desc, f.height, "timeline")
    for i, r in enumerate(c.rows):
        y = f.top + row_h * i
        f.text(f.x(r.start * c.scale), y + 13, r.label, size=FONT - 1)
        x0, x1 = f.x(r.start * c.scale), f.x((r.start + r.duration) * c.scale)
        f.parts.append(f'<rect x="{x0:.1f}" y="{y + 18}" width="{max(x1 - x0, 1.5):.1f}" height="16" '
                       f'class="bar tone-{r.tone % TONES}"/>')
        if r.text:
            f.text(max(x1, x0 + 1.5) + 4, y + 31, r.text, size=FONT - 1)
    base = f.top + row_h * len(c.rows) + 4
    f.parts.append(f'<line x1="{f.left}" y1="{base}" x2="{WIDTH - f.right}" y2="{base}" class="axis"/>')
    for v in nice_ticks(0.0, f.x1, 6):
        f.text(f.x(v), base + 16, _fmt(v), "middle", size=FONT - 1)
    f.text((f.left + WIDTH - f.right) / 2, base + 34, c.x_label, "middle")
    for m in c.marks:
        x = f.x(m.at * c.scale)
        f.parts.append(f'<line x1="{x:.1f}" y1="{f.top}" x2="{x:.1f}" y2="{base}" class="rule tone-{m.tone % TONES}"/>')
        f.text(x + 4, base - 4, m.label, css=f"tone-{m.tone % TONES}-text", size=FONT - 1)
    if c.note:
        f.text(f.left, f.height - 6, c.note, size=FONT - 2)
    return _close(f.parts)


def svg(chart) -> str:
    """The chart drawn as one inline SVG element."""
    if isinstance(chart, XY):
        return _xy(chart)
    if isinstance(chart, Bars):
        return _bars(chart)
    if isinstance(chart, Timeline):
        return _timeline(chart)
    raise TypeError(f"not a chart: {type(chart).__name__}")
