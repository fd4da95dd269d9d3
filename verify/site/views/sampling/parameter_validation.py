"""The evidence of verify/jobs/sampling/parameter_validation.py on a page."""

from __future__ import annotations

from verify.jobs.sampling import parameter_validation as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = [[n, d["cases"][n]["status"], job.error_of(d, n).get("param") or "", job.error_of(d, n).get("message", "")[:140]]
            for n in job.CASES]
    return html.table(["request", "HTTP status", "error.param", "error.message"], rows)


FRAGMENTS = {"table": fragment}
