"""The evidence of verify/jobs/cost/throughput.py on a page."""

from __future__ import annotations

from verify.jobs.cost import throughput as job
from verify.site import html


def figure(record) -> str:
    d = record["data"]
    t = job.throughput(d)
    w, h, left, bottom, top, right = 560, 260, 60, 40, 20, 20
    ymax = max(v["max"] for v in t.values()) * 1.1
    x = lambda i: left + (w - left - right) * i / (len(job.LEVELS) - 1)
    y = lambda v: h - bottom - (h - bottom - top) * v / ymax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="verify-figure">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<text x="{(w + left) / 2}" y="{h - 8}" text-anchor="middle" font-size="12" fill="currentColor">'
             'requests at once</text>',
             f'<text x="14" y="{(h - bottom + top) / 2}" font-size="12" fill="currentColor" transform="rotate(-90 14 '
             f'{(h - bottom + top) / 2})" text-anchor="middle">generated tokens per second</text>']
    for v in range(0, int(ymax) + 1, max(1, int(ymax / 4) // 10 * 10 or 1)):
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end" font-size="11" fill="currentColor">{v}</text>')
    pts = []
    for i, c in enumerate(job.LEVELS):
        parts.append(f'<text x="{x(i)}" y="{h - bottom + 15}" text-anchor="middle" font-size="11" fill="currentColor">{c}</text>')
        parts.append(f'<line x1="{x(i)}" y1="{y(t[c]["min"]):.1f}" x2="{x(i)}" y2="{y(t[c]["max"]):.1f}" '
                     'stroke="#1565c0" stroke-width="1"/>')
        pts.append(f"{x(i):.1f},{y(t[c]['median']):.1f}")
        cost = d["cost_per_million"][str(c)]
        parts.append(f'<text x="{x(i) + 6}" y="{y(t[c]["median"]) - 6:.1f}" font-size="11" fill="#2e7d32">'
                     f'${cost:.2f}/M</text>')
    parts.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="#1565c0" stroke-width="2"/>')
    parts.append(f'<text x="{w - right}" y="{top + 10}" text-anchor="end" font-size="11" fill="#2e7d32">green: cost per '
                 f'million tokens at ${d["price_per_hour"]:.2f}/hour (assumed)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def fragment(record):
    d = record["data"]
    t = job.throughput(d)
    rows = [[c, f"{t[c]['median']:.1f}", f"{t[c]['min']:.1f} to {t[c]['max']:.1f}",
             f"${d['cost_per_million'][str(c)]:.2f}"] for c in job.LEVELS]
    return html.table(["requests at once", f"tokens per second (median of {len(d['rounds'])})", "range",
                       f"cost per million tokens at ${d['price_per_hour']:.2f}/hour (assumed price)"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"throughput.svg": figure}
