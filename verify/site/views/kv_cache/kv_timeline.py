"""KV cache usage over time: the requests' table and the usage chart."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_timeline as job
from verify.site import html


def figure(record) -> str:
    d = record["data"]
    samples = d["samples"]
    w, h, left, bottom, top, right = 560, 260, 50, 40, 20, 20
    tmax = max(s["t"] for s in samples)
    peak = max(job._blocks(d, s["kv_cache_usage_perc"]) for s in samples) or 1
    x = lambda t: left + (w - left - right) * t / tmax
    y = lambda b: h - bottom - (h - bottom - top) * b / (peak + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="verify-figure">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<text x="{(w + left) / 2}" y="{h - 8}" text-anchor="middle" font-size="12" fill="currentColor">'
             'seconds</text>',
             f'<text x="12" y="{(h - bottom + top) / 2}" font-size="12" fill="currentColor" transform="rotate(-90 12 '
             f'{(h - bottom + top) / 2})" text-anchor="middle">KV cache blocks in use</text>']
    for b in range(0, peak + 2, max(1, (peak + 1) // 4)):
        parts.append(f'<text x="{left - 6}" y="{y(b) + 4}" text-anchor="end" font-size="11" fill="currentColor">{b}</text>')
    for t in range(0, int(tmax) + 1, max(1, int(tmax) // 6)):
        parts.append(f'<text x="{x(t)}" y="{h - bottom + 15}" text-anchor="middle" font-size="11" '
                     f'fill="currentColor">{t}</text>')
    for i, r in enumerate(d["requests"]):
        yy = top + 8 + 10 * i
        parts.append(f'<line x1="{x(r["started_s"]):.1f}" y1="{yy}" x2="{x(r["ended_s"]):.1f}" y2="{yy}" '
                     f'stroke="#90a4ae" stroke-width="4"/>')
    pts = " ".join(f"{x(s['t']):.1f},{y(job._blocks(d, s['kv_cache_usage_perc'])):.1f}" for s in samples)
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#1565c0" stroke-width="2"/>')
    parts.append(f'<text x="{w - right}" y="{h - bottom - 6}" text-anchor="end" font-size="11" fill="#607d8b">grey bars: '
                 'each request, start to end</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def fragment(record):
    d = record["data"]
    rows = [[i + 1, job.MAX_TOKENS[i], f"{r['started_s']:.1f} s", f"{r['ended_s']:.1f} s",
             (r["usage"] or {}).get("prompt_tokens")] for i, r in enumerate(d["requests"])]
    return html.table(["request", "tokens generated", "started", "ended", "prompt tokens"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"usage.svg": figure}
