"""The evidence of verify/jobs/structured_outputs/legacy_fields.py on a page."""

from __future__ import annotations

import re

from verify.jobs.structured_outputs import legacy_fields as job
from verify.site import html


def _logged_constraint(log: dict) -> str:
    m = re.search(r"structured_outputs=(None|StructuredOutputsParams\([^)]{0,60})", job.logged_params(log))
    return m.group(1) + ("...)" if m and m.group(1) != "None" else "") if m else "(not found)"


def fragment_table(record):
    rows = []
    for name, case in record["data"]["cases"].items():
        for answer, log in zip(case["answers"]["samples"], case["logs"]):
            rows.append([name, answer["text"], _logged_constraint(log)])
    return html.table(["field sent", "answer (temperature 1.0)", "structured_outputs, as the server logged it"], rows)


def fragment_log(record):
    lines = [line for case in record["data"]["cases"].values() for line in case["logs"][0]["lines"]
             if "WARNING" in line or "ignored" in line]
    return html.pre(lines or ["(no warning logged)"], "the server's log: warnings about the fields")


FRAGMENTS = {"table": fragment_table, "log": fragment_log}
