"""Each request's usage beside what the counters added for it."""

from __future__ import annotations

from verify.site import html

NAMES = {"cold": "300-token prompt, first time", "warm": "the same prompt again (prefix hit)",
         "chat": "chat request"}


def table(record):
    rows = []
    for key, r in record["data"]["requests"].items():
        c, u = r["change"], r["usage"] or {}
        rows.append([NAMES.get(key, key), u.get("prompt_tokens"), f"+{c['vllm:prompt_tokens_total']:.0f}",
                     f"+{c['vllm:prefix_cache_queries_total']:.0f}", f"+{c['vllm:prefix_cache_hits_total']:.0f}",
                     u.get("completion_tokens"), f"+{c['vllm:generation_tokens_total']:.0f}",
                     f"+{c['vllm:inter_token_latency_seconds_count']:.0f}"])
    return html.table(["request", "usage prompt", "prompt_tokens_total", "prefix_cache_queries_total",
                       "prefix_cache_hits_total", "usage completion", "generation_tokens_total",
                       "inter_token_latency count"], rows)


FRAGMENTS = {"table": table}
