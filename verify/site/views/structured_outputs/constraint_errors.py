"""The evidence of verify/jobs/structured_outputs/constraint_errors.py on a page."""

from __future__ import annotations

import json

from verify.jobs.structured_outputs import constraint_errors as job
from verify.site import html


def fragment_table(record):
    rows = []
    for name, case in record["data"]["cases"].items():
        a = case["answer"]
        rows.append([name, json.dumps(case["sent"]) if case["sent"] else "(no constraint)", a["status"],
                     job.error_message(a)[:200] or "(an answer)"])
    return html.table(["request", "fields sent", "HTTP status", "error.message"], rows)


FRAGMENTS = {"table": fragment_table}
