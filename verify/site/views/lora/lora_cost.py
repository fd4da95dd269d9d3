"""The evidence of verify/jobs/lora/lora_cost.py on a page."""

from __future__ import annotations

import statistics

from verify.jobs.lora import lora_cost as job
from verify.site import charts, html


def fragment_table(record):
    medians = job.itl(record["data"])
    base = statistics.median(medians[job.BASE]) if medians[job.BASE] else None
    rows = []
    for model, values in medians.items():
        m = statistics.median(values) if values else None
        rows.append([model, ", ".join(html.ms(v) for v in values), html.ms(m) if m else "",
                     f"{m / base:.2f}x" if m and base else ""])
    return html.table(["model", "inter-token latency, each round", "median of rounds", "against the base model"],
                      rows)


def bars(record) -> charts.Bars:
    medians = {m: statistics.median(v) for m, v in job.itl(record["data"]).items() if v}
    return charts.Bars(title="Inter-token latency through each model on one server (median of rounds)",
                       x_label="model the request named", y_label="milliseconds per token",
                       bars=tuple(charts.Bar(m, v * 1000, f"{v * 1000:.0f}") for m, v in medians.items()), tone=0,
                       note=f"{job.TOKENS} tokens per request, {job.REPS} rounds; chat is the base model.")


FRAGMENTS = {"table": fragment_table}
CHARTS = {"bars": bars}
