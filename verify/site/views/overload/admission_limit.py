"""The evidence of verify/jobs/overload/admission_limit.py on a page."""

from __future__ import annotations

from verify.jobs.overload import admission_limit as job
from verify.site import html
from verify.site.views.overload._burst import answers_table


def burst(record) -> str:
    d = record["data"]
    if "burst_answers" not in d:
        return html.pre([f"the server did not start with {' '.join(d['flags'])}:", *d["start"].get("unrecognized", [])])
    b = d["burst_answers"]
    moved = [[k, f"{job.counter_delta(b, k):+.0f}"] for k in sorted(b["counters_after"]) if job.counter_delta(b, k)]
    return answers_table(b["answers"]) + html.table(["/metrics, after the burst", "change"], moved)


def sdk(record) -> str:
    d = record["data"]
    if "sdk" not in d:
        return html.pre(["not measured: the server did not start with the flag"])
    rows = []
    for label, c in d["sdk"].items():
        r = c["result"]
        rows.append([label, str(r.get("raised")), str(r.get("status")), f"{r['seconds']:.2f}",
                     f"{job.counter_delta(c, job.COUNTER):+.0f}"])
    return html.table(["client retries", "raised", "status", "seconds until raised", "refusals counted"], rows)


FRAGMENTS = {"burst": burst, "sdk": sdk}
