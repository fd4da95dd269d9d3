"""The evidence of verify/jobs/cost/throughput.py on a page."""

from __future__ import annotations

from verify.jobs.cost import throughput as job
from verify.site import charts, html


def figure(record) -> charts.XY:
    """Generated tokens per second at each concurrency, with its range and its cost per million tokens."""
    d = record["data"]
    t = job.throughput(d)
    return charts.XY(
        title="Generated tokens per second by requests at once, with the cost per million tokens at each",
        x_label="requests at once", y_label="generated tokens per second",
        lines=(charts.Line(f"tokens per second, median of {job.rounds(d)} rounds (whiskers: lowest to highest)",
                           tuple((i, t[c]["median"]) for i, c in enumerate(job.LEVELS)), tone=0, markers=True,
                           spread=tuple((t[c]["min"], t[c]["max"]) for c in job.LEVELS),
                           labels=tuple(f"${d['cost_per_million'][str(c)]:.2f}/M" for c in job.LEVELS)),),
        x_categories=tuple(str(c) for c in job.LEVELS),
        note=f"Next to each point: the cost per million generated tokens at ${d['price_per_hour']:.2f} an hour "
             "(an assumed price).")


def fragment(record):
    d = record["data"]
    t = job.throughput(d)
    rows = [[c, f"{t[c]['median']:.1f}", f"{t[c]['min']:.1f} to {t[c]['max']:.1f}",
             f"${d['cost_per_million'][str(c)]:.2f}"] for c in job.LEVELS]
    return html.table(["requests at once", f"tokens per second (median of {job.rounds(d)})", "range",
                       f"cost per million tokens at ${d['price_per_hour']:.2f}/hour (assumed price)"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"throughput": figure}
