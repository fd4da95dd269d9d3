"""The evidence of verify/jobs/cost/cached_tokens.py on a page."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    rows = [[name, x["prompt_tokens"], x["cached_tokens"], f"{x['engine_hits']:.0f}"]
            for name, x in record["data"].items()]
    return html.table(["request (same prompt, --enable-prompt-tokens-details)", "usage: prompt_tokens",
                       "usage: prompt_tokens_details.cached_tokens", "engine: prefix-cache hits"], rows)


FRAGMENTS = {"table": fragment}
