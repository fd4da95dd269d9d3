"""The evidence of verify/jobs/overload/queue_grows.py on a page."""

from __future__ import annotations

from verify.jobs.overload import queue_grows as job
from verify.site import html


def table(record) -> str:
    d = record["data"]
    t = job.request_timings(d)
    one = t[0]["e2e"]
    rows = [[str(k), f"{x['ttft']:.2f}", f"{k * one:.2f}", f"{x['e2e']:.2f}", str(x["status"]), str(x["finish"])]
            for k, x in enumerate(t)]
    imp = d["impatient"]
    aborted = d["moved"].get('vllm:request_success_total{finished_reason="abort"}', 0.0)
    return html.table(["position", "first token (s)", "k answers (s)", "last event (s)", "status", "finish reason"],
                      rows) + html.table(["the impatient request", ""], [
        ["client", f"gave up after {job.IMPATIENT_TIMEOUT_S:.0f} s ({imp.get('error')})"],
        ["engine", f"abort counter +{aborted:.0f}; generation tokens +{d['moved'].get('vllm:generation_tokens_total', 0):.0f}"]])


FRAGMENTS = {"table": table}
