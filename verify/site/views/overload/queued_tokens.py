"""The evidence of verify/jobs/overload/queued_tokens.py on a page."""

from __future__ import annotations

from verify.jobs.overload import _admission, queued_tokens as job
from verify.site import html
from verify.site.views.overload._burst import answers_table


def burst(record) -> str:
    d = record["data"]
    if "burst_answers" not in d:
        return html.pre([f"the server did not start with {' '.join(d['flags'])}:", *d["start"].get("unrecognized", [])])
    b = d["burst_answers"]
    h = job.holder_of(d)
    holder = html.table(["the long stream", ""], [
        ["prompt tokens", str(h.get("prompt_tokens"))],
        ["status", str(h.get("status"))],
        ["generating after (s)", str(b.get("generating_after_s"))],
        ["burst sent at (s)", str(b.get("burst_sent_s"))],
        ["last token at (s)", str(h.get("last_text_s"))],
        ["tokens, finish reason", f"{h.get('tokens')}, {h.get('finish_reason')}"]])
    moved = [[k, f"{_admission.counter_delta(b, k):+.0f}"] for k in sorted(b["counters_after"])
             if _admission.counter_delta(b, k)]
    return holder + answers_table(b["answers"]) + html.table(["/metrics, after the burst", "change"], moved)


FRAGMENTS = {"burst": burst}
