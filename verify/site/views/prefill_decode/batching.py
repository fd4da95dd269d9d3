"""Batching: throughput and one request's latency by concurrency."""

from __future__ import annotations

from verify.jobs.prefill_decode import batching as job
from verify.site import charts, html


def fragment(record):
    rows = [[r["concurrency"], f"{r['throughput']:.0f}", f"{r['itl'] * 1000:.1f} ms",
             f"{r['itl_min'] * 1000:.1f} to {r['itl_max'] * 1000:.1f} ms", r["rounds"]]
            for r in job.by_concurrency(record["data"])]
    return html.table(["requests at once", "output tokens/s (all requests)", "ITL per request (median)",
                       "ITL (min to max)", "rounds"], rows)


def batching(record) -> charts.XY:
    """Throughput of all requests (left axis) and one request's inter-token latency (right axis) by concurrency."""
    rows = job.by_concurrency(record["data"])
    return charts.XY(
        title="Throughput of all requests and each request's inter-token latency, by requests at once",
        x_label="requests at once", y_label="output tokens/s, all requests", y2_label="ITL per request, ms",
        lines=(charts.Line("output tokens per second (median round; left axis)",
                           tuple((i, r["throughput"]) for i, r in enumerate(rows)), tone=1, markers=True,
                           values="{:.0f}"),
               charts.Line("ITL per request, ms (median, whiskers: min to max; right axis)",
                           tuple((i, r["itl"] * 1000) for i, r in enumerate(rows)), tone=0, markers=True,
                           values="{:.0f}", right_axis=True,
                           spread=tuple((r["itl_min"] * 1000, r["itl_max"] * 1000) for r in rows))),
        x_categories=tuple(str(r["concurrency"]) for r in rows))


FRAGMENTS = {"table": fragment}
CHARTS = {"batching": batching}
