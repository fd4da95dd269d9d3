"""The evidence of verify/jobs/sampling/reproducibility.py on a page."""

from __future__ import annotations

from verify.jobs.sampling import reproducibility as job
from verify.site import html


def fragment(record):
    rows = []
    for name in ("greedy", "seeded", "unseeded"):
        x = record["data"][name]
        first = x["in_a_row"][0]
        rows.append([name, ", ".join(f"{k}={v}" for k, v in x["params"].items()),
                     f"{job.distinct_count(x['in_a_row'])} of {len(x['in_a_row'])}",
                     f"{sum(a == first for a in x['among_others'])} of {len(x['among_others'])}", first])
    return html.table(["sampling", "parameters", "distinct answers in a row", "same answer among others",
                       "first answer"], rows)


FRAGMENTS = {"table": fragment}
