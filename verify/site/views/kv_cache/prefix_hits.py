"""Prefix-cache hits for a repeated prompt: hits per length, and the timed rounds."""

from __future__ import annotations

from verify.jobs.kv_cache import prefix_hits as job
from verify.site import html


def fragment(record):
    d = record["data"]
    rows = []
    for n, x in d["lengths"].items():
        p = x["warm"]["prompt_tokens"]
        rows.append([p, f"{x['cold']['queries']:.0f} / {x['cold']['hits']:.0f}",
                     f"{x['warm']['queries']:.0f} / {x['warm']['hits']:.0f}", job.expected_hits(p, d["block_size"]),
                     "same" if x["cold"]["text"] == x["warm"]["text"] else "different"])
    return html.table([f"prompt tokens (block size {d['block_size']})", "first request: queried / hit tokens",
                       "second request: queried / hit tokens", "(tokens - 1) rounded down to whole blocks",
                       "greedy output, second against first"], rows)


def fragment_timed(record):
    rows = [[i + 1, html.ms(t["cold"]["ttft_s"]), html.ms(t["warm"]["ttft_s"]), f"{t['warm']['hits']:.0f}"]
            for i, t in enumerate(record["data"]["timed"])]
    return html.table([f"round ({job.TIMED_LENGTH}-token prompt)", "TTFT, cold", "TTFT, same prompt again",
                       "tokens hit"], rows)


FRAGMENTS = {"table": fragment, "timed": fragment_timed}
