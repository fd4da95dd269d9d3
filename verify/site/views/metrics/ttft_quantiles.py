"""Exact percentiles of the clients' first tokens beside Prometheus' estimates, and the buckets between."""

from __future__ import annotations

from verify.jobs.metrics import ttft_quantiles as job
from verify.site import html


def table(record):
    d = record["data"]
    values = [r["ttft_s"] for r in d["requests"]]
    rows = []
    for q in job.QUANTILES:
        x, e = job.exact(values, q), job.estimate_of(d, q)
        lo, up = job.bucket_of(d, x)
        rows.append([f"p{q * 100:g}", html.ms(x), html.ms(e), f"{(e - x) / x:+.0%}", f"{lo:g} s to {up:g} s"])
    return html.table(["percentile", "exact (clients)", "histogram_quantile", "difference", "bucket of the exact value"],
                      rows)


def buckets(record):
    d = record["data"]
    counted = sorted(((float(le), n) for le, n in d["prometheus"]["buckets"].items()))
    rows, below = [], 0.0
    for le, n in counted:
        if n > below:
            rows.append([f"le={le:g}", f"{n:.0f}", f"{n - below:.0f}"])
        below = n
    return html.table(["bucket (upper bound)", "requests at or below", "requests in this bucket"], rows)


FRAGMENTS = {"table": table, "buckets": buckets}
