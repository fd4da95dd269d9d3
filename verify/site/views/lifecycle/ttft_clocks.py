"""Server TTFT against client TTFT, per request, as a table."""

from __future__ import annotations

from verify.jobs.lifecycle import ttft_clocks as job
from verify.site import html


def fragment(record):
    rows = []
    for i, t in enumerate(record["data"]["trials"]):
        rows.append([i + 1, html.ms(job.client_ttft(t)), html.ms(job.server_clock(t, "time_to_first_token_seconds")),
                     html.ms(job.server_clock(t, "request_queue_time_seconds")),
                     html.ms(job.server_clock(t, "request_prefill_time_seconds"))])
    return html.table(["request", "client TTFT (first text chunk)", "server TTFT histogram", "queue", "prefill"], rows)


FRAGMENTS = {"table": fragment}
