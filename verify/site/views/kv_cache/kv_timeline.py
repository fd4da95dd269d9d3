"""KV cache usage over time: the requests' table and the usage chart."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_timeline as job
from verify.site import charts, html


def figure(record) -> charts.XY:
    """KV cache blocks in use as the staggered requests start, grow and end; each request's lifetime above."""
    d = record["data"]
    usage = tuple((s["t"], job.blocks_at(d, s["kv_cache_usage_perc"])) for s in d["samples"])
    n = len(d["requests"])
    return charts.XY(
        title=f"KV cache blocks in use while {n} staggered requests run",
        x_label="seconds", y_label="KV cache blocks in use",
        lines=(charts.Line("blocks in use (/metrics, read at intervals)", usage, tone=0, step=True),),
        bands=tuple(charts.Band(r["started_s"], r["ended_s"], str(i + 1)) for i, r in enumerate(d["requests"])),
        bands_label=f"requests 1 to {n} (the table's rows), start to end")


def fragment(record):
    d = record["data"]
    rows = [[i + 1, job.MAX_TOKENS[i], f"{r['started_s']:.1f} s", f"{r['ended_s']:.1f} s",
             (r["usage"] or {}).get("prompt_tokens")] for i, r in enumerate(d["requests"])]
    return html.table(["request", "tokens generated", "started", "ended", "prompt tokens"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"usage": figure}
