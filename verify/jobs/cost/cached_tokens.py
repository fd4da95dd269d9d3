"""With --enable-prompt-tokens-details, does usage report a repeated prompt's cached tokens?

The page's usage snippet, on a server started with the flag: one long prompt
sent twice; the second response's prompt_tokens_details.cached_tokens is set
against the engine's prefix-cache hits for it.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "cost/usage_of.py"
PROMPT_TOKENS = 600


def collect(ctx) -> dict:
    import uuid

    import httpx
    from openai import OpenAI

    from verify.measure import capture, metrics
    from verify.measure.prompts import exact_prompt
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    with httpx.Client(timeout=120) as http:
        prompt = uuid.uuid4().hex[:8] + " " + exact_prompt(ctx.server.url, http, PROMPT_TOKENS)
    messages = [{"role": "user", "content": prompt}]
    out = {}
    for name in ("first", "second"):
        metrics.wait_idle(ctx.server.url)
        before = metrics.read_all(ctx.server.url)["vllm:prefix_cache_hits_total"]
        usage = snippet.billed(client, messages, max_tokens=1)
        metrics.wait_idle(ctx.server.url)
        hits = metrics.read_all(ctx.server.url)["vllm:prefix_cache_hits_total"] - before
        # One event per choice that came back (the snippet's client raises on an error status, and
        # gives no status to record).
        out[name] = capture.results("request", usage["finish_reasons"], **usage, engine_hits=hits)
    client.close()
    return out


def decide_reported(d):
    a, b = d["first"], d["second"]
    return verdict_if(a["cached_tokens"] == 0 and b["cached_tokens"] == b["engine_hits"] > 0
                      and a["prompt_tokens"] == b["prompt_tokens"],
                      f"cached_tokens {a['cached_tokens']} on the first request, {b['cached_tokens']} on the repeat "
                      f"(the engine counted {b['engine_hits']:.0f} hits); prompt_tokens {a['prompt_tokens']} both times")


JOB = Job(
    id="cached-tokens",
    title="Cached prompt tokens in usage",
    question="With --enable-prompt-tokens-details, does usage report how many prompt tokens came from the cache?",
    pages=("cost.md",),
    variant="prompt-tokens-details",
    collect=collect,
    claims=(
        Claim("cached-tokens.reported", "With --enable-prompt-tokens-details, usage.prompt_tokens_details.cached_tokens "
              "reports the prefix-cache hits of the request, while prompt_tokens stays the whole prompt.",
              decide_reported),
    ),
)
