"""The evidence of verify/jobs/sampling/structured_output.py on a page."""

from __future__ import annotations

from verify.jobs.sampling import structured_output as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = [["constrained", s["text"], "yes" if job.valid_answer(s["text"]) else "no", s["tokens"], f"{s['seconds']:.2f} s"]
            for s in d["constrained"]["samples"][:4]]
    rows += [["unconstrained", s["text"], "yes" if job.valid_answer(s["text"]) else "no", s["tokens"], f"{s['seconds']:.2f} s"]
             for s in d["unconstrained"]["samples"][:4]]
    return html.table(["request", "answer", "matches the schema", "tokens", "time"], rows)


FRAGMENTS = {"samples": fragment}
