"""Charts of recorded data as inline SVG: one frame, drawn here, for every chart on the site.

A views module describes a chart as data (`XY`, `Bars`, `Timeline`, built from a
record) and this module draws it. Drawing rules that hold for every chart:

- inline SVG, so text and axes take the page's own colour (`currentColor`) and the
  series take theme-aware colours from CSS classes (`tone-N`, light and dark in
  docs/stylesheets/verify.css); nothing is fetched from outside the site;
- a `<title>` and a `<desc>` that says in words what the chart shows, numbers
  included, for screen readers and for anyone who cannot see the picture;
- a fixed drawing width with the chart in a scrolling box that never shrinks it
  below MIN_WIDTH_PX, so labels stay readable on a phone (the page scrolls the
  chart sideways instead of shrinking its text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass

from verify.site.html import text as _untrusted

WIDTH = 640


def escape(value) -> str:
    """Text for the SVG: escaped like every untrusted string on the site (labels can carry model
    output), on one line (a blank line would end the page's HTML block)."""
    return " ".join(_untrusted(value).split())


MIN_WIDTH_PX = 640  # in verify.css too: the narrowest a chart is drawn
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
    spread: tuple[tuple[float, float], ...] = ()  # per point, a low and a high (a range) drawn as a whisker
    labels: tuple[str, ...] = ()  # per point, a text shown next to it (instead of its value)


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
    label: str = ""  # short (it goes in the left margin, like a tick label)


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
    x_categories: tuple[str, ...] = ()  # names of x = 0, 1, 2, ...: the points' x are places in this list
    note: str = ""  # a line or two of small text under the chart


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
    note: str = ""


@dataclass(frozen=True)
class Span:
    """One row of a timeline: a stretch of time with its label."""
    label: str
    start: float
    duration: float
    tone: int = 0
    text: str = ""  # shown after the bar
    events: tuple[float, ...] = ()  # moments in the row (arrivals): dots on a thin line instead of a bar


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


CHAR_EM = 0.6  # an average glyph's width in the sans-serif face, in ems: to fit a label before drawing it


def _width(s: str, size: int = FONT - 1) -> float:
    return len(s) * size * CHAR_EM


def _wrap(s: str, size: int, room: float) -> list[str]:
    """s broken at spaces into lines no wider than room."""
    lines, line = [], ""
    for word in s.split():
        longer = f"{line} {word}".strip()
        if line and _width(longer, size) > room:
            lines.append(line)
            line = word
        else:
            line = longer
    return lines + ([line] if line else [])


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _tone_text(tone: int | None) -> str:
    return "" if tone is None else f"tone-{tone % TONES}-text"


def _open(chart_title: str, desc: str, height: int, kind: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
            f'height="{height}" role="img" class="verify-chart verify-chart-{kind}" font-family="sans-serif" '
            f'fill="currentColor">',
            f"<title>{escape(chart_title)}</title>", f"<desc>{escape(desc)}</desc>"]


def _axes(f: _Frame, x_label: str, y_label: str, xs: list[float], ys: list[float], y2: tuple | None = None,
          x_names: tuple[str, ...] = (), y_tone: int | None = None) -> None:
    base = f.height - f.bottom
    f.parts.append(f'<line x1="{f.left}" y1="{base}" x2="{WIDTH - f.right}" y2="{base}" class="axis"/>')
    f.parts.append(f'<line x1="{f.left}" y1="{f.top}" x2="{f.left}" y2="{base}" class="axis"/>')
    for v in ys:
        f.parts.append(f'<line x1="{f.left}" y1="{f.y(v):.1f}" x2="{WIDTH - f.right}" y2="{f.y(v):.1f}" class="grid"/>')
        f.text(f.left - 6, f.y(v) + 4, _fmt(v), "end", size=FONT - 1, css=_tone_text(y_tone))
    for i, v in enumerate(xs):
        f.text(f.x(v), base + 16, x_names[i] if i < len(x_names) else _fmt(v), "middle", size=FONT - 1)
    f.text((f.left + WIDTH - f.right) / 2, base + 34, x_label, "middle")
    middle = (f.top + base) / 2
    room = 2 * min(middle - 4, base + 24 - middle)  # an axis's label may run a little past the plot's ends
    f.text(16, middle, y_label, "middle", rotate=True, css=_tone_text(y_tone), size=_fit(y_label, room))
    if y2:
        label, ticks, top, tone = y2
        f.parts.append(f'<line x1="{WIDTH - f.right}" y1="{f.top}" x2="{WIDTH - f.right}" y2="{base}" class="axis"/>')
        for v in ticks:
            f.text(WIDTH - f.right + 6, f.y(v, top) + 4, _fmt(v), size=FONT - 1, css=_tone_text(tone))
        f.text(WIDTH - 12, middle, label, "middle", rotate=True, css=_tone_text(tone), size=_fit(label, room))


def _fit(s: str, room: float) -> int:
    """The font size (FONT, or a little smaller) at which s fits in room."""
    size = FONT
    while size > FONT - 2 and _width(s, size) > room:
        size -= 1
    return size


def _note(f: _Frame, lines: list[str], y: float) -> None:
    for i, line in enumerate(lines):
        f.text(f.left, y + 15 * i, line, size=FONT - 2)


def _close(parts: list[str]) -> str:
    # One line per element and no blank line: the page's Markdown passes the block through untouched.
    return "\n".join([*parts, "</svg>"])


def _one_tone(lines: list[Line]) -> int | None:
    tones = {ln.tone % TONES for ln in lines}
    return tones.pop() if len(tones) == 1 else None


def _xy(c: XY) -> str:
    left_lines = [ln for ln in c.lines if not ln.right_axis]
    right_lines = [ln for ln in c.lines if ln.right_axis]
    cats = c.x_categories
    xs_all = [p[0] for ln in c.lines for p in ln.points] + [b.end for b in c.bands] + \
             [r.at for r in c.rules if r.vertical]

    def highs(lines: list[Line]) -> list[float]:
        return [p[1] for ln in lines for p in ln.points] + [hi for ln in lines for _, hi in ln.spread]

    ys_all = highs(left_lines) + [r.at for r in c.rules if not r.vertical]
    texts = any(ln.values or ln.labels for ln in c.lines)
    headroom = 1.12 if texts else 1.05  # room above the highest point for its label
    band_gap = 12 if any(b.label for b in c.bands) else 10
    bands_h = band_gap * len(c.bands) + (8 if c.bands else 0)
    right = 64 if right_lines else 24
    entries = [(ln.label, ln.tone, ln.dashed, ln.markers) for ln in c.lines] + \
              ([(c.bands_label, None, False, False)] if c.bands else [])
    column = (WIDTH - 64 - right) / 2
    columns = 2 if all(_width(e[0]) + 36 <= column for e in entries) else 1
    legend_h = 18 * math.ceil(len(entries) / columns)
    note = _wrap(c.note, FONT - 2, WIDTH - 64 - right) if c.note else []
    note_h = 15 * len(note) + (4 if note else 0)
    f = _Frame(height=300 + bands_h + legend_h + note_h, top=16 + bands_h, right=right,
               bottom=60 + legend_h + note_h)
    if cats:
        f.x0, f.x1 = -0.4, len(cats) - 0.6
        x_ticks: list[float] = list(range(len(cats)))
    else:
        f.x0 = c.x_min if c.x_min is not None else min(0.0, min(xs_all, default=0.0))
        f.x1 = max(xs_all, default=1.0)
        x_ticks = [t for t in c.x_ticks if f.x0 <= t <= f.x1] or nice_ticks(f.x0, f.x1, 6)
    f.y0 = min(c.y_min, min(ys_all, default=c.y_min))  # a negative reading stays inside the frame
    y_ticks = nice_ticks(f.y0, max(ys_all, default=1.0) * headroom or 1.0)
    f.y1 = max(y_ticks[-1], max(ys_all, default=1.0) * headroom) or 1.0
    y2 = None
    if right_lines:
        y2_max = max(highs(right_lines), default=1.0) * headroom or 1.0
        y2_ticks = nice_ticks(f.y0, y2_max)
        y2 = (c.y2_label, y2_ticks, max(y2_ticks[-1], y2_max), _one_tone(right_lines))
    f.parts = _open(c.title, _describe_xy(c), f.height, "xy")
    _axes(f, c.x_label, c.y_label, x_ticks, y_ticks, y2, cats, _one_tone(left_lines) if right_lines else None)
    for i, b in enumerate(c.bands):
        yy = 10 + band_gap * i
        f.parts.append(f'<line x1="{f.x(b.start):.1f}" y1="{yy}" x2="{max(f.x(b.end), f.x(b.start) + 2):.1f}" '
                       f'y2="{yy}" class="band"/>')
        if b.label:
            f.text(f.left - 6, yy + 4, b.label, "end", size=FONT - 2)
    taken: list[tuple] = []  # boxes already drawn on, which a point's label must not cover
    for r in c.rules:
        tone = r.tone % TONES
        w = _width(r.label)
        if r.vertical:
            x = f.x(r.at)
            f.parts.append(f'<line x1="{x:.1f}" y1="{f.top}" x2="{x:.1f}" y2="{f.y(f.y0):.1f}" '
                           f'class="rule tone-{tone}"/>')
            tx, anchor = (x + 4, "start") if x + 4 + w <= WIDTH - f.right else (x - 4, "end")
            f.text(tx, f.top + 12, r.label, anchor, css=f"tone-{tone}-text", size=FONT - 1)
            x0 = tx if anchor == "start" else tx - w
            taken.append((x0, f.top, x0 + w, f.top + 14))
        else:
            y = f.y(r.at)
            f.parts.append(f'<line x1="{f.left}" y1="{y:.1f}" x2="{WIDTH - f.right}" y2="{y:.1f}" '
                           f'class="rule tone-{tone}"/>')
            f.text(WIDTH - f.right, y - 5, r.label, "end", css=f"tone-{tone}-text", size=FONT - 1)
            taken.append((WIDTH - f.right - w, y - 16, WIDTH - f.right, y - 2))
    pending = []
    for ln in c.lines:
        top = y2[2] if ln.right_axis else None
        tone = ln.tone % TONES
        pts = list(ln.points)
        if ln.step and pts:
            stepped = [pts[0]]
            for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
                stepped += [(xb, ya), (xb, yb)]
            pts = stepped
        screen = [(f.x(x), f.y(y, top)) for x, y in pts]
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in screen)
        dash = " dashed" if ln.dashed else ""
        f.parts.append(f'<polyline points="{coords}" class="series tone-{tone}{dash}"/>')
        if texts:
            for (xa, ya), (xb, yb) in zip(screen, screen[1:]):
                n = max(1, int(math.hypot(xb - xa, yb - ya) / 4))
                taken += [(xa + (xb - xa) * k / n - 1, ya + (yb - ya) * k / n - 1,
                           xa + (xb - xa) * k / n + 1, ya + (yb - ya) * k / n + 1) for k in range(n + 1)]
        for (x, _), (lo, hi) in zip(ln.points, ln.spread):
            sx, ylo, yhi = f.x(x), f.y(lo, top), f.y(hi, top)
            f.parts.append(f'<path d="M{sx - 4:.1f} {ylo:.1f}H{sx + 4:.1f}M{sx:.1f} {ylo:.1f}V{yhi:.1f}'
                           f'M{sx - 4:.1f} {yhi:.1f}H{sx + 4:.1f}" class="whisker tone-{tone}"/>')
            taken.append((sx - 5, yhi - 1, sx + 5, ylo + 1))
        for i, (x, y) in enumerate(ln.points):
            sx, sy = f.x(x), f.y(y, top)
            if ln.markers:
                f.parts.append(f'<circle cx="{sx:.1f}" cy="{sy:.1f}" r="3.5" class="marker tone-{tone}"/>')
                taken.append((sx - 4, sy - 4, sx + 4, sy + 4))
            label = ln.labels[i] if i < len(ln.labels) else ln.values.format(y) if ln.values else ""
            if label:
                pending.append((sx, sy, label, tone))
    edge = WIDTH - (f.right if right_lines else 4)
    for sx, sy, label, tone in pending:
        tx, ty, anchor = _place(f, taken, sx, sy, label, FONT - 1, edge)
        f.text(tx, ty, label, anchor, css=f"tone-{tone}-text", size=FONT - 1)
    _legend(f, entries, columns)
    _note(f, note, f.height - f.bottom + 56 + legend_h)
    return _close(f.parts)


def _place(f: _Frame, taken: list[tuple], x: float, y: float, s: str, size: int, edge: float) -> tuple:
    """Where a point's label goes: above it if that is free, else below, beside or diagonally."""
    w = _width(s, size)
    spots = [(0, -9, "middle"), (0, 9 + size * 0.75, "middle"), (8, size * 0.35, "start"), (-8, size * 0.35, "end"),
             (6, -8, "start"), (-6, -8, "end"), (6, 8 + size * 0.75, "start"), (-6, 8 + size * 0.75, "end")]
    boxes = []
    for dx, dy, anchor in spots:
        tx, ty = x + dx, y + dy
        x0 = tx - w / 2 if anchor == "middle" else tx if anchor == "start" else tx - w
        box = (x0, ty - size * 0.75, x0 + w, ty + size * 0.2)
        boxes.append((box, (tx, ty, anchor)))
        inside = box[0] >= f.left + 2 and box[2] <= edge and box[1] >= f.top - 6 and box[3] <= f.height - f.bottom - 2
        if inside and not any(_overlap(box, b) for b in taken):
            taken.append(box)
            return tx, ty, anchor
    box, spot = next(((b, s) for b, s in boxes if b[0] >= f.left + 2 and b[2] <= edge), boxes[0])
    taken.append(box)
    return spot


def _legend(f: _Frame, entries: list[tuple[str, int | None, bool, bool]], columns: int = 2) -> None:
    y = f.height - f.bottom + 56
    for i, (label, tone, dashed, marker) in enumerate(entries):
        x = f.left + (WIDTH - f.left - f.right) / 2 * (i % columns)
        yy = y + 18 * (i // columns)
        if tone is None:
            f.parts.append(f'<line x1="{x:.1f}" y1="{yy - 4}" x2="{x + 22:.1f}" y2="{yy - 4}" class="band"/>')
        else:
            dash = " dashed" if dashed else ""
            f.parts.append(f'<line x1="{x:.1f}" y1="{yy - 4}" x2="{x + 22:.1f}" y2="{yy - 4}" '
                           f'class="series tone-{tone % TONES}{dash}"/>')
            if marker:
                f.parts.append(f'<circle cx="{x + 11:.1f}" cy="{yy - 4}" r="3.5" class="marker tone-{tone % TONES}"/>')
        f.text(x + 28, yy, label, size=FONT - 1)


def _describe_xy(c: XY) -> str:
    cats = c.x_categories

    def at(x: float) -> str:
        i = round(x)
        return cats[i] if cats and abs(x - i) < 1e-9 and 0 <= i < len(cats) else _fmt(x)

    parts = [f"{c.title}. {c.y_label} against {c.x_label}."]
    for ln in c.lines:
        said_right = ln.right_axis and c.y2_label and "right axis" not in ln.label
        axis = f" ({c.y2_label}, right axis)" if said_right else ""
        if not ln.points:
            parts.append(f"{ln.label}{axis}: no points.")
        elif len(ln.points) <= 12:
            said = []
            for i, (x, y) in enumerate(ln.points):
                one = f"at {at(x)}, {_fmt(y)}"
                if i < len(ln.spread):
                    one += f" (from {_fmt(ln.spread[i][0])} to {_fmt(ln.spread[i][1])})"
                if i < len(ln.labels) and ln.labels[i]:
                    one += f", {ln.labels[i]}"
                said.append(one)
            parts.append(f"{ln.label}{axis}: " + "; ".join(said) + ".")
        else:
            ys = [p[1] for p in ln.points]
            parts.append(f"{ln.label}{axis}: {len(ln.points)} points from {at(ln.points[0][0])} to "
                         f"{at(ln.points[-1][0])}, lowest {_fmt(min(ys))}, highest {_fmt(max(ys))}.")
    parts += [f"Line at {_fmt(r.at)}: {r.label}." for r in c.rules]
    if c.bands:
        parts.append(f"{c.bands_label}: " + "; ".join(f"{b.label + ' ' if b.label else ''}{_fmt(b.start)} to "
                                                      f"{_fmt(b.end)}" for b in c.bands) + ".")
    if c.note:
        parts.append(c.note)
    return " ".join(parts)


def _bars(c: Bars) -> str:
    note = _wrap(c.note, FONT - 2, WIDTH - 64 - 24) if c.note else []
    note_h = 15 * len(note) + (4 if note else 0)
    f = _Frame(height=290 + note_h, bottom=58 + note_h)
    top = max((b.value for b in c.bars), default=1.0) * 1.15 or 1.0
    ticks = nice_ticks(0.0, top)
    f.y1 = max(ticks[-1], top)
    desc = f"{c.title}. {c.y_label}, by {c.x_label}: " + "; ".join(
        f"{b.label}: {b.text or _fmt(b.value)}" for b in c.bars) + "." + (f" {c.note}" if c.note else "")
    f.parts = _open(c.title, desc, f.height, "bars")
    _axes(f, c.x_label, c.y_label, [], ticks)
    slot = (WIDTH - f.left - f.right) / max(len(c.bars), 1)
    for i, b in enumerate(c.bars):
        x0 = f.left + slot * (i + 0.25)
        top, bottom = sorted((f.y(0), f.y(b.value)))  # a negative value hangs below the axis
        f.parts.append(f'<rect x="{x0:.1f}" y="{top:.1f}" width="{slot / 2:.1f}" '
                       f'height="{bottom - top:.1f}" class="bar tone-{c.tone % TONES}"/>')
        f.text(x0 + slot / 4, f.height - f.bottom + 16, b.label, "middle", size=FONT - 1)
        f.text(x0 + slot / 4, f.y(b.value) - 6, b.text or _fmt(b.value), "middle", size=FONT - 1)
    _note(f, note, f.height - f.bottom + 56)
    return _close(f.parts)


def _timeline(c: Timeline) -> str:
    # Each row's label sits above its bar, so the bars get the full width on a narrow screen.
    row_h = 40
    note = _wrap(c.note, FONT - 2, WIDTH - 24) if c.note else []
    marks_h = 16 if c.marks else 0  # a line under the rows for the marks' labels
    f = _Frame(height=0, left=12, right=84, top=8)
    base = f.top + row_h * len(c.rows) + marks_h + 4
    f.height = base + 44 + (15 * len(note) + 10 if note else 0)
    end = max((max([r.start + r.duration, *r.events]) for r in c.rows), default=1.0)
    f.x0, f.x1 = 0.0, end * c.scale * 1.02 or 1.0
    def moments(r: Span) -> str:
        return f", {len(r.events)} moment{'s' if len(r.events) != 1 else ''} marked" if r.events else ""

    desc = f"{c.title}. " + " ".join(
        f"{r.label}: from {_fmt(r.start * c.scale)} to {_fmt((r.start + r.duration) * c.scale)} {c.x_label}"
        f"{moments(r)}{' (' + r.text + ')' if r.text else ''}." for r in c.rows) + \
        "".join(f" {m.label} at {_fmt(m.at * c.scale)} {c.x_label}." for m in c.marks) + \
        (f" {c.note}" if c.note else "")
    f.parts = _open(c.title, desc, f.height, "timeline")
    ticks = nice_ticks(0.0, f.x1, 6)
    for v in ticks:
        f.parts.append(f'<line x1="{f.x(v):.1f}" y1="{f.top}" x2="{f.x(v):.1f}" y2="{base}" class="grid"/>')
    marks_x = [f.x(m.at * c.scale) for m in c.marks]

    def clear(x: float, w: float) -> float:
        """Where a text meant to start at x starts so that no mark's line runs through it."""
        for mx in sorted(marks_x):
            if x - 2 < mx < x + w + 2:
                x = mx + 4
        return x

    for i, r in enumerate(c.rows):
        y = f.top + row_h * i
        tone = r.tone % TONES
        x0, x1 = f.x(r.start * c.scale), f.x((r.start + r.duration) * c.scale)
        x1 = max(x1, x0 + 1.5)
        lw = _width(r.label)
        lx = min(x0, WIDTH - 4 - lw)  # the label starts where the bar does, unless it would run off the chart
        f.text(lx, y + 13, r.label, size=FONT - 1)
        if r.events:
            f.parts.append(f'<line x1="{x0:.1f}" y1="{y + 26}" x2="{x1:.1f}" y2="{y + 26}" class="track"/>')
            radius = 5 if len(r.events) <= 3 else 2.5
            at = [f.x(t * c.scale) for t in r.events]
            f.parts += [f'<circle cx="{x:.1f}" cy="{y + 26}" r="{radius}" class="marker tone-{tone}"/>' for x in at]
            x1 = max(x1, max(at) + radius)
        else:
            f.parts.append(f'<rect x="{x0:.1f}" y="{y + 18}" width="{x1 - x0:.1f}" height="16" '
                           f'class="bar tone-{tone}"/>')
        if r.text:
            tw = _width(r.text)
            after = clear(x1 + 4, tw)
            if after + tw <= WIDTH - 4:  # after the bar
                f.text(after, y + 31, r.text, size=FONT - 1)
            elif lx + lw + 12 <= min(x1, WIDTH - 4) - tw:  # on the label's line, ending where the bar ends
                f.text(min(x1, WIDTH - 4), y + 13, r.text, "end", size=FONT - 1)
            else:  # on the label's line, after the label
                f.text(lx + lw + 12, y + 13, r.text, size=FONT - 1)
    f.parts.append(f'<line x1="{f.left}" y1="{base}" x2="{WIDTH - f.right}" y2="{base}" class="axis"/>')
    for v in ticks:
        f.text(f.x(v), base + 16, _fmt(v), "middle", size=FONT - 1)
    f.text((f.left + WIDTH - f.right) / 2, base + 34, c.x_label, "middle")
    for m, x in zip(c.marks, marks_x):
        tone = m.tone % TONES
        # through each row's bar and the marks' own line, not through the rows' labels
        path = "".join(f"M{x:.1f} {f.top + row_h * i + 16}V{f.top + row_h * i + 38}" for i in range(len(c.rows)))
        path += f"M{x:.1f} {f.top + row_h * len(c.rows)}V{base}"
        f.parts.append(f'<path d="{path}" class="rule tone-{tone}"/>')
        tx, anchor = (x + 4, "start") if x + 4 + _width(m.label) <= WIDTH - 4 else (x - 4, "end")
        f.text(tx, base - 5, m.label, anchor, css=f"tone-{tone}-text", size=FONT - 1)
    for i, line in enumerate(note):
        f.text(f.left, base + 58 + 15 * i, line, size=FONT - 2)
    return _close(f.parts)


def _numbers(spec) -> list[float]:
    """Every number in a chart spec, however deep."""
    out = []
    if isinstance(spec, bool):
        return out
    if isinstance(spec, (int, float)):
        return [float(spec)]
    if isinstance(spec, (list, tuple)):
        for item in spec:
            out += _numbers(item)
    elif is_dataclass(spec):
        for f in fields(spec):
            out += _numbers(getattr(spec, f.name))
    return out


def svg(chart) -> str:
    """The chart drawn as one inline SVG element; ValueError naming the chart if it holds a number that
    cannot be drawn (NaN or infinity: a reading that failed)."""
    bad = [v for v in _numbers(chart) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"chart {getattr(chart, 'title', '?')!r} holds {bad[0]}: a reading that cannot be drawn")
    if isinstance(chart, XY):
        return _xy(chart)
    if isinstance(chart, Bars):
        return _bars(chart)
    if isinstance(chart, Timeline):
        return _timeline(chart)
    raise TypeError(f"not a chart: {type(chart).__name__}")
