"""Views of cancel-nginx-ignore-abort."""

from __future__ import annotations

from verify.jobs.streaming import cancel_nginx_ignore_abort as job
from verify.site import html


def fragment(record):
    rows = []
    for name, (client, setup) in job.TRIALS.items():
        t = record["data"]["trials"][name]
        rows.append([name, setup, client, f"{t['client_gone_at_s']:.2f} s",
                     "still running" if t["stop_after_disconnect_s"] is None else f"{t['stop_after_disconnect_s']:.2f} s",
                     f"{t['generated_tokens']:.0f} / {t['max_tokens']}",
                     "; ".join(t["proxy_access_log"]) or "-"])
    return html.table(["request", "nginx set-up", "client", "client left at", "engine stopped after",
                       "tokens generated", "nginx access log ($msec $status $request_time ...)"], rows)


FRAGMENTS = {"table": fragment}
