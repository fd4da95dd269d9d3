"""The evidence of verify/jobs/lora/lora_runtime_off.py on a page."""

from __future__ import annotations

from verify.site import html


def fragment_table(record):
    d = record["data"]
    rows = [[f"POST {d[k]['url_path'] if 'url_path' in d[k] else '/v1/' + k + '_lora_adapter'}", d[k]["status"],
             d[k].get("body_text", "")] for k in ("load", "unload")]
    return html.table(["request", "HTTP status", "body"], rows)


FRAGMENTS = {"table": fragment_table}
