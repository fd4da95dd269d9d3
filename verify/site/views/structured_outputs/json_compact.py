"""The evidence of verify/jobs/structured_outputs/json_compact.py on a page."""

from __future__ import annotations

from verify.site.views.structured_outputs.json_whitespace import answers_table


def fragment_table(record):
    return answers_table({"structured_outputs json, compact server": record["data"]["answers"]})


FRAGMENTS = {"table": fragment_table}
