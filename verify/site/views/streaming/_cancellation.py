"""Views of the cancellation jobs built by verify/jobs/streaming/_cancellation.py."""

from __future__ import annotations

from verify.jobs.streaming import _cancellation as job
from verify.site import html


def _fragment(record):
    rows = []
    for c in job.CLIENTS:
        t = record["data"]["trials"][c]
        rows.append([t["path"], c, f"{t['client_gone_at_s']:.2f} s",
                     "still running" if t["stop_after_disconnect_s"] is None else f"{t['stop_after_disconnect_s']:.2f} s",
                     f"{t['generated_tokens']:.0f} / {t['max_tokens']}",
                     f"{(t['kv_cache_usage_at_disconnect'] or 0) * 100:.2f} % → {t['kv_cache_usage_after'] * 100:.2f} %",
                     "; ".join(t["proxy_access_log"]) or "-"])
    return html.table(["path", "client", "client left at", "engine stopped after", "tokens generated",
                       "KV cache usage", "nginx access log ($msec $status $request_time ...)"], rows)


def _fragment_log(record):
    lines = [line for c in job.CLIENTS for line in record["data"]["trials"][c]["request_log_lines"]]
    return html.pre(lines or ["(no request log lines)"], "server log lines for the abandoned requests")


FRAGMENTS = {"table": _fragment, "log": _fragment_log}
