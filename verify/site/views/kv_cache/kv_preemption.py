"""A KV cache too small for the load: preemptions per run."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_preemption as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = []
    for label, key, at_once in (("all at once", "loaded", job.REQUESTS),
                                ("reference", "reference", job.REFERENCE_AT_ONCE)):
        b = d[key]
        rows.append([label, at_once, f"{b['preemptions']:.0f}",
                     sum(1 for r in b["results"] if r["finish_reason"] == "length"), f"{b['prompt_tokens']:.0f}"])
    return html.table([f"run ({job.REQUESTS} requests, {job.MAX_TOKENS} tokens each; cache {d['num_blocks']} blocks of "
                       f"{d['block_size']})", "at once", "preemptions", "finished (length)",
                       "prompt tokens the engine counted"], rows)


FRAGMENTS = {"table": fragment}
