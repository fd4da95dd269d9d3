"""The evidence of verify/jobs/offline/offline_generation_defaults.py on a page."""

from __future__ import annotations

from verify.jobs.offline import offline_generation_defaults as job
from verify.site import html


def fragment(record) -> str:
    d = record["data"]
    fields = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens")
    model = {**d["model_defaults"], "max_tokens": d["model_defaults"]["max_new_tokens"]}
    ways = list(d["ways"])
    rows = [[k, str(model[k]), *(str(d["ways"][w]["settings"][k]) for w in ways)] for k in fields]
    rows.append(["answer lengths, tokens (finish reason)", "", *(job.lengths_text(d["ways"][w]["outputs"]) for w in ways)])
    return html.table(["field", "the copy's generation_config.json", *ways], rows)


def server_fragment(record) -> str:
    rows = [[label, job.lengths_text(x["answers"])] for label, x in record["data"]["server"].items()]
    return html.table(["chat request sets", "completion tokens (finish reason), per prompt"], rows)


FRAGMENTS = {"settings": fragment, "server": server_fragment}
