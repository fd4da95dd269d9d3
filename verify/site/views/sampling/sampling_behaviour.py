"""The evidence of verify/jobs/sampling/sampling_behaviour.py on a page."""

from __future__ import annotations

from verify.jobs.sampling import sampling_behaviour as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = [["stop ', 4'", d["stop"]["False"]["text"], d["stop"]["False"]["finish_reason"], d["stop"]["False"]["stop_reason"]],
            ["stop ', 4', include_stop_str_in_output", d["stop"]["True"]["text"], d["stop"]["True"]["finish_reason"],
             d["stop"]["True"]["stop_reason"]]]
    return html.table(["request", "text", "finish_reason", "stop_reason"], rows)


def fragment_logprobs(record):
    d = record["data"]
    tops = {t: job.top_logprobs(d, t) for t in job.TEMPERATURES}
    tokens = sorted(set().union(*tops.values()), key=lambda tok: -max(x.get(tok, -99) for x in tops.values()))
    rows = [[repr(tok)] + [f"{tops[t][tok]:.4f}" if tok in tops[t] else "" for t in job.TEMPERATURES] for tok in tokens]
    return html.table(["first token"] + [f"logprob at temperature {t}" for t in job.TEMPERATURES], rows)


FRAGMENTS = {"stop": fragment, "logprobs": fragment_logprobs}
