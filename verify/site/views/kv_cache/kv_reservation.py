"""KV cache blocks held as tokens arrive, for both max_tokens: the table and the chart."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_reservation as job
from verify.site import html


def figure(record) -> str:
    """KV cache blocks held against tokens generated, for both max_tokens, with the reservation line."""
    d = record["data"]
    w, h, left, bottom, top, right = 560, 260, 50, 40, 20, 20
    reserved = job._needed(d, d["large"]["prompt_tokens"], d["large"]["max_tokens"])
    ymax = reserved + 1
    x = lambda n: left + (w - left - right) * n / job.TOKENS
    y = lambda b: h - bottom - (h - bottom - top) * b / ymax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" class="verify-figure">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="currentColor"/>',
             f'<text x="{(w + left) / 2}" y="{h - 8}" text-anchor="middle" font-size="12" fill="currentColor">'
             'tokens generated</text>',
             f'<text x="12" y="{(h - bottom + top) / 2}" font-size="12" fill="currentColor" transform="rotate(-90 12 '
             f'{(h - bottom + top) / 2})" text-anchor="middle">KV cache blocks held</text>',
             f'<line x1="{left}" y1="{y(reserved)}" x2="{w - right}" y2="{y(reserved)}" stroke="#c62828" '
             'stroke-dasharray="5,4"/>',
             f'<text x="{w - right}" y="{y(reserved) - 5}" text-anchor="end" font-size="11" fill="#c62828">'
             f'an up-front reservation for max_tokens {d["large"]["max_tokens"]}: {reserved} blocks</text>']
    for b in range(0, ymax + 1, max(1, ymax // 4)):
        parts.append(f'<text x="{left - 6}" y="{y(b) + 4}" text-anchor="end" font-size="11" fill="currentColor">{b}</text>')
    for n in range(0, job.TOKENS + 1, 50):
        parts.append(f'<text x="{x(n)}" y="{h - bottom + 15}" text-anchor="middle" font-size="11" '
                     f'fill="currentColor">{n}</text>')
    for key, colour, dash in (("small", "#1565c0", ""), ("large", "#2e7d32", ' stroke-dasharray="2,3"')):
        readings = d[key]["readings"][:-1] if key == "small" else d[key]["readings"]  # last: already finished
        pts = " ".join(f"{x(n):.1f},{y(job._blocks(d, u)):.1f}" for n, u, *_ in readings)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
    parts.append(f'<text x="{left + 8}" y="{top + 60}" font-size="11" fill="#1565c0">max_tokens '
                 f'{d["small"]["max_tokens"]}</text>')
    parts.append(f'<text x="{left + 8}" y="{top + 74}" font-size="11" fill="#2e7d32">max_tokens '
                 f'{d["large"]["max_tokens"]} (dotted; the same steps)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def fragment(record):
    d = record["data"]
    rows = []
    for key in ("small", "large"):
        r = d[key]
        levels = sorted({job._blocks(d, u) for _, u, *_ in r["readings"]})
        rows.append([r["max_tokens"], r["prompt_tokens"], len(r["readings"]),
                     " → ".join(map(str, levels)), job._needed(d, r["prompt_tokens"], r["max_tokens"])])
    return html.table([f"max_tokens (block size {d['block_size']}, {d['num_blocks']} blocks)", "prompt tokens",
                       "tokens generated", "blocks held as tokens arrived", "blocks a reservation would hold"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"blocks.svg": figure}
