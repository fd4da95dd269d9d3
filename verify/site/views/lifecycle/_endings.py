"""How a request ends: the shared views of the request-endings jobs (verify/jobs/lifecycle/_endings.py)."""

from __future__ import annotations

from verify.jobs.lifecycle import _endings as job
from verify.site import html


def fragment_metrics(record):
    d = record["data"]
    rows = []
    for e in job.ENDINGS:
        x = d["endings"][e]
        moved = x["metrics_delta"]
        success = ", ".join(f"{k.split('=')[1].rstrip('}')} +{v:.0f}" for k, v in moved.items()
                            if k.startswith("vllm:request_success_total")) or "unchanged"
        rows.append([e, x["status"], success, f"+{moved.get(job.E2E_COUNT, 0):.0f}",
                     f"+{moved.get('vllm:generation_tokens_total', 0):.0f}", len(x["log"])])
    return html.table(["ending", "HTTP status", "request_success_total by finished_reason",
                       "e2e latency observations", "tokens generated", "request log lines"], rows)


def fragment_log(record):
    lines = [line for e in job.ENDINGS for line in record["data"]["endings"][e]["log"]]
    return html.pre(lines or ["(no request-level log lines)"], "request-level log lines for the four endings")


FRAGMENTS = {"metrics": fragment_metrics, "log": fragment_log}
