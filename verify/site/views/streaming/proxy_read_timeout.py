"""Views of proxy-read-timeout."""

from __future__ import annotations

from verify.jobs.streaming import proxy_read_timeout as job
from verify.site import html


def fragment(record):
    d = record["data"]
    n = d["tokens"]
    labels = {"calibration": f"stream, {job.CALIBRATION_TOKENS} tokens, directly (measures the gap between tokens)",
              "long_stream": f"stream, {n['long_stream']} tokens, through nginx",
              "slow_first_token_direct": "stream, long prompt, directly (no proxy)",
              "slow_first_token": "stream, long prompt, through nginx",
              "non_streaming_direct": f"non-streaming, {n['non_streaming']} tokens, directly (no proxy)",
              "non_streaming": f"non-streaming, {n['non_streaming']} tokens, through nginx"}
    rows = []
    for key, label in labels.items():
        t = job.timing_of(d[key])
        rows.append([label, t["status"], html.ms(t["first_text"]), html.ms(t["max_gap"]),
                     html.ms(t["end"]), "yes" if t["done"] else "no"])
    return html.table([f"request (read timeout {d['timeout_s']:.0f} s)", "HTTP status", "first text",
                       "longest gap between events", "response ended", "[DONE]"], rows)


FRAGMENTS = {"table": fragment}
