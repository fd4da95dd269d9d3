"""The evidence of verify/jobs/offline/offline_batching.py on a page."""

from __future__ import annotations

from verify.jobs.offline import offline_batching as job
from verify.site import html


def figure(record) -> str:
    d = record["data"]
    w, h, left, bottom, top, right = 520, 240, 50, 40, 20, 20
    s = {k: job.speedup(d["sizes"][str(k)]) for k in job.SIZES}
    ymax = max(s.values()) * 1.2
    bar = (w - left - right) / (len(job.SIZES) * 2)
    y = lambda v: h - bottom - (h - bottom - top) * v / ymax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="verify-figure">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<text x="{(w + left) / 2}" y="{h - 8}" text-anchor="middle" font-size="12" fill="currentColor">'
             'prompts</text>',
             f'<text x="14" y="{(h - bottom + top) / 2}" font-size="12" fill="currentColor" transform="rotate(-90 14 '
             f'{(h - bottom + top) / 2})" text-anchor="middle">speed-up of one call over a loop</text>']
    for i, k in enumerate(job.SIZES):
        x0 = left + bar * (2 * i + 0.5)
        parts.append(f'<rect x="{x0:.1f}" y="{y(s[k]):.1f}" width="{bar:.1f}" height="{h - bottom - y(s[k]):.1f}" '
                     'fill="#1565c0"/>')
        parts.append(f'<text x="{x0 + bar / 2:.1f}" y="{h - bottom + 15}" text-anchor="middle" font-size="11" '
                     f'fill="currentColor">{k}</text>')
        parts.append(f'<text x="{x0 + bar / 2:.1f}" y="{y(s[k]) - 5:.1f}" text-anchor="middle" font-size="11" '
                     f'fill="currentColor">{s[k]:.1f}x</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def fragment(record):
    rows = [[k, f"{x['batch_seconds']:.2f} s", f"{x['loop_seconds']:.2f} s", f"{job.speedup(x):.1f}x",
             "identical" if x["same_outputs"] else "different"] for k, x in record["data"]["sizes"].items()]
    return html.table([f"prompts ({job.MAX_TOKENS} tokens each)", "one generate() call", "one call per prompt",
                       "speed-up", "greedy outputs"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"speedup.svg": figure}
