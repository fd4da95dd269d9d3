"""The evidence of verify/jobs/cost/billing.py on a page."""

from __future__ import annotations

from verify.jobs.cost import billing as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = []
    labels = {"n1": "chat, n=1", "n3": f"chat, n={job.N}", "completions_default": "completions, no max_tokens",
              "chat_default": "chat, no max_tokens, prompt near the context's end", "repeat_first": "long prompt, first",
              "repeat_second": "same long prompt again"}
    for key, label in labels.items():
        x = d[key]
        rows.append([label, x["prompt_tokens"], x["completion_tokens"],
                     "n/a" if x.get("cached_tokens", None) is None else x["cached_tokens"],
                     f"{x['engine']['prompt_tokens_total']:.0f}", f"{x['engine']['generation_tokens_total']:.0f}",
                     f"{x['engine']['prefix_cache_hits_total']:.0f}"])
    return html.table(["request", "usage: prompt_tokens", "usage: completion_tokens", "usage: cached_tokens",
                       "engine: prompt tokens counted", "engine: tokens generated", "engine: prefix-cache hits"],
                      rows)


FRAGMENTS = {"table": fragment}
