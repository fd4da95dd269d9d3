"""The evidence of verify/jobs/structured_outputs/constraint_kinds.py on a page."""

from __future__ import annotations

from verify.jobs.structured_outputs._validate import fits
from verify.site import html


def fragment_samples(record):
    d = record["data"]
    rows = []
    for way, w in d["ways"].items():
        for s in w["samples"]:
            rows.append([way, s["text"], s["finish_reason"], "yes" if fits(s["text"], w["constraint"]) else "no"])
    return html.table(["way", "answer (temperature 1.0)", "finish_reason", "fits"], rows)


def fragment_control(record):
    d = record["data"]
    rows = []
    for way, c in d["unconstrained"].items():
        s = c["samples"][0]
        n = sum(fits(x["text"], d["ways"][way]["constraint"]) for x in c["samples"])
        rows.append([way, s["text"], f"{n} of {len(c['samples'])}"])
    return html.table(["same prompt, no constraint", "first answer", "answers that would fit"], rows)


def fragment_cut(record):
    c = record["data"]["cut"]
    s = c["samples"][0]
    return html.table(["request", "answer", "finish_reason"],
                      [[f"response_format json_schema, max_tokens {c['max_tokens']}", s["text"], s["finish_reason"]]])


FRAGMENTS = {"samples": fragment_samples, "control": fragment_control, "cut": fragment_cut}
