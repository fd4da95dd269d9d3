"""The evidence of verify/jobs/structured_outputs/json_whitespace.py on a page."""

from __future__ import annotations

from verify.jobs.structured_outputs._validate import whitespace_between_tokens
from verify.site import html


def answers_table(ways: dict) -> str:
    rows = []
    for way, w in ways.items():
        for s in w["samples"]:
            rows.append([way, s["text"], s["finish_reason"], whitespace_between_tokens(s["text"])])
    return html.table(["request", "answer", "finish_reason", "whitespace between JSON tokens (characters)"], rows)


def fragment_table(record):
    return answers_table(record["data"]["ways"])


FRAGMENTS = {"table": fragment_table}
