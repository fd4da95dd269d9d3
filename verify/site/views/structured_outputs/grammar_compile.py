"""The evidence of verify/jobs/structured_outputs/grammar_compile.py on a page."""

from __future__ import annotations

from verify.jobs.structured_outputs import grammar_compile as job
from verify.site import html


def fragment_table(record):
    d = record["data"]
    rows = []
    for n, p in enumerate(d["pairs"]):
        first, second = job.first_token_s(p["first"]), job.first_token_s(p["second"])
        rows.append(["the server's first constrained request" if n == 0 else f"new schema {n}",
                     html.ms(first), html.ms(second), f"{(first - second) * 1000:+.0f} ms"])
    return html.table(["schema", "first request: time to first token", "next request, same schema",
                       "extra wait"], rows)


FRAGMENTS = {"table": fragment_table}
