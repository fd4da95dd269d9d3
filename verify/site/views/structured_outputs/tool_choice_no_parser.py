"""The evidence of verify/jobs/structured_outputs/tool_choice_no_parser.py on a page."""

from __future__ import annotations

import json

from verify.jobs.structured_outputs import tool_choice_no_parser as job
from verify.site import html


def fragment_table(record):
    d = record["data"]
    rows = []
    for name, a in d["cases"].items():
        choice = json.dumps(d["tool_choice"][name]) if name in d["tool_choice"] else "(left out)"
        content = (((a.get("body") or {}).get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        rows.append([choice, a["status"], job.error_message(a) or content[:160]])
    return html.table(["tool_choice", "HTTP status", "error.message, or the answer's content"], rows)


FRAGMENTS = {"table": fragment_table}
