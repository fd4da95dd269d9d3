"""The evidence of verify/jobs/lora/lora_cost.py on a page."""

from __future__ import annotations

import statistics

from verify.jobs.lora import lora_cost as job
from verify.site import html


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


FRAGMENTS = {"table": fragment_table}
TIMING_CLAIMS = ("lora-cost.slower",)
