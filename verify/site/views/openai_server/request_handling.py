"""What the server accepts, adjusts and refuses, as a table."""

from __future__ import annotations

from verify.jobs.openai_server import request_handling as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = []
    for n in job.CASES:
        c = job.case_of(d, n)
        e = job.error_of(d, n)
        rows.append([n, c["status"], e.get("type", ""), e.get("param") or "", (e.get("message") or "")[:110]])
    return html.table(["request", "HTTP status", "error.type", "error.param", "error.message"], rows)


FRAGMENTS = {"table": fragment}
