"""The evidence of verify/jobs/structured_outputs/tool_calls.py on a page."""

from __future__ import annotations

import json

from verify.jobs.structured_outputs import tool_calls as job
from verify.site import html


def fragment_answers(record):
    d = record["data"]
    rows = []
    for name in ("named", "required", "auto"):
        for m in d[name]["samples"]:
            calls = "; ".join(f"{c['name']}({c['arguments']})" for c in m["tool_calls"]) or "none"
            rows.append([name if name != "named" else "named (get_weather)", calls, m["content"] or "",
                         m["finish_reason"]])
    m = d["cut"]["samples"][0]
    rows.append([f"required, max_tokens {d['cut']['max_tokens']}", "; ".join(c["name"] for c in m["tool_calls"]) or "none",
                 m["content"] or "", m["finish_reason"]])
    return html.table(["tool_choice", "tool_calls (name and arguments)", "content", "finish_reason"], rows)


def fragment_stream(record):
    return html.timed_transcript(record["data"]["stream"]["lines"],
                                 "a streamed named call (temperature 0): each line with its arrival time", limit=40)


def fragment_deltas(record):
    rows = [[i, json.dumps(tc)] for i, tc in enumerate(job.tool_deltas(record["data"]))]
    return html.table(["delta", "choices[0].delta.tool_calls[0]"], rows)


FRAGMENTS = {"answers": fragment_answers, "stream": fragment_stream, "deltas": fragment_deltas}
