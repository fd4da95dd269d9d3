"""What the server bills: n > 1, the default output length of each endpoint, and a repeated prompt.

Requests on the default server: the page's usage snippet with n=1 and n=3;
chat and completions requests with no max_tokens (the chat one with a prompt
near the end of the context, so that "the rest of the context" is short); and
one long prompt sent twice, with the engine's prompt-token counter and
prefix-cache counters read around each.
"""

from __future__ import annotations

from verify.headline import EXACT, Headline
from verify.job import Claim, Job, verdict_if

SNIPPET = "cost/usage_of.py"
N = 3
MAX_TOKENS = 16
NEAR_CONTEXT_END = 2020  # prompt tokens for the chat request without max_tokens (context: 2,048): ~40 left, not 16
REPEATED_PROMPT_TOKENS = 600


def _counters(server_url: str) -> dict:
    from verify.measure import metrics
    m = metrics.read_all(server_url)
    # Indexed, not .get(): a counter missing from the scrape fails the job instead of reading as 0.
    return {k: m[k] for k in ("vllm:prompt_tokens_total", "vllm:generation_tokens_total",
                              "vllm:prefix_cache_hits_total")}


def _around(ctx, call) -> dict:
    """call() makes one request and returns its capture; the engine's counters are read around it."""
    from verify.measure import metrics
    metrics.wait_idle(ctx.server.url)
    before = _counters(ctx.server.url)
    result = call()
    metrics.wait_idle(ctx.server.url)
    after = _counters(ctx.server.url)
    return {**result, "engine": {k.removeprefix("vllm:"): after[k] - before[k] for k in after}}


def _billed(usage: dict) -> dict:
    """The snippet's answer (its client raises on an error status, so it gives no status): one event per choice."""
    from verify.measure import capture
    return capture.results("request", usage["finish_reasons"], **usage)


def collect(ctx) -> dict:
    import uuid

    import httpx
    from openai import OpenAI

    from verify.measure.prompts import exact_prompt
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    question = [{"role": "user", "content": "Name three colours."}]
    data = {"max_model_len": client.models.list().data[0].model_extra.get("max_model_len")}
    data["n1"] = _around(ctx, lambda: _billed(snippet.billed(client, question, max_tokens=MAX_TOKENS,
                                                              temperature=0.8, extra_body={"ignore_eos": True})))
    data["n3"] = _around(ctx, lambda: _billed(snippet.billed(client, question, max_tokens=MAX_TOKENS,
                                                              temperature=0.8, n=N, extra_body={"ignore_eos": True})))
    with httpx.Client(timeout=300) as http:
        plain = exact_prompt(ctx.server.url, http, 40)
        long_text = exact_prompt(ctx.server.url, http, NEAR_CONTEXT_END - 40)  # the chat template adds its share
        data["completions_default"] = _around(ctx, lambda: _usage(http.post(
            ctx.base_url + "/completions", json={"model": "chat", "prompt": plain, "ignore_eos": True})))
        data["chat_default"] = _around(ctx, lambda: _usage(http.post(
            ctx.base_url + "/chat/completions", json={"model": "chat", "ignore_eos": True,
                                                      "messages": [{"role": "user", "content": long_text}]})))
        repeated = uuid.uuid4().hex[:8] + " " + exact_prompt(ctx.server.url, http, REPEATED_PROMPT_TOKENS)
        messages = [{"role": "user", "content": repeated}]
        data["repeat_first"] = _around(ctx, lambda: _billed(snippet.billed(client, messages, max_tokens=1)))
        data["repeat_second"] = _around(ctx, lambda: _billed(snippet.billed(client, messages, max_tokens=1)))
    client.close()
    return data


def _usage(r) -> dict:
    """One answer of the raw HTTP client: its status and body come from the response."""
    from verify.measure import capture
    body = capture.body(r)
    if r.status_code != 200 or not isinstance(body, dict):
        # An error status, or an answer that is no JSON object: a failed capture, with what it said.
        return capture.response(r, error=str(body if body is not None else r.text)[:200])
    return capture.response(r, prompt_tokens=body["usage"]["prompt_tokens"],
                            completion_tokens=body["usage"]["completion_tokens"],
                            finish_reasons=[c["finish_reason"] for c in body["choices"]])


def decide_n(d):
    one, three = d["n1"], d["n3"]
    return verdict_if(three["prompt_tokens"] == one["prompt_tokens"] and three["completion_tokens"] == N * MAX_TOKENS,
                      f"n=1: prompt_tokens {one['prompt_tokens']}, completion_tokens {one['completion_tokens']}; "
                      f"n={N}: prompt_tokens {three['prompt_tokens']}, completion_tokens {three['completion_tokens']}")


def decide_n_engine(d):
    one, three = d["n1"]["engine"], d["n3"]["engine"]
    return verdict_if(three["prompt_tokens_total"] == one["prompt_tokens_total"],
                      f"the engine's vllm:prompt_tokens_total rose by {one['prompt_tokens_total']:.0f} for n=1 and by "
                      f"{three['prompt_tokens_total']:.0f} for n={N} (prefix-cache hits for n={N}: "
                      f"{three['prefix_cache_hits_total']:.0f})")


def decide_completions_default(d):
    c = d["completions_default"]
    return verdict_if(c["completion_tokens"] == 16 and c["finish_reasons"] == ["length"],
                      f"/v1/completions without max_tokens: {c['completion_tokens']} tokens, finish_reason "
                      f"{c['finish_reasons'][0]}")


def decide_chat_default(d):
    c, limit = d["chat_default"], d["max_model_len"]
    rest = limit - c["prompt_tokens"]
    return verdict_if(c["completion_tokens"] == rest and c["finish_reasons"] == ["length"],
                      f"/v1/chat/completions without max_tokens: a {c['prompt_tokens']}-token prompt in a {limit}-token "
                      f"context got {c['completion_tokens']} tokens (the rest of the context: {rest}), finish_reason "
                      f"{c['finish_reasons'][0]}")


def decide_repeat_billed(d):
    a, b = d["repeat_first"], d["repeat_second"]
    return verdict_if(a["prompt_tokens"] == b["prompt_tokens"] and b["engine"]["prefix_cache_hits_total"] > 0
                      and b["cached_tokens"] is None,
                      f"the same prompt twice: prompt_tokens {a['prompt_tokens']} then {b['prompt_tokens']}, the second "
                      f"with {b['engine']['prefix_cache_hits_total']:.0f} tokens from the prefix cache; "
                      f"prompt_tokens_details {'absent' if b['cached_tokens'] is None else 'present'} in usage")


def decide_counter(d):
    a, b = d["repeat_first"]["engine"], d["repeat_second"]["engine"]
    return verdict_if(a["prompt_tokens_total"] == b["prompt_tokens_total"] and b["prefix_cache_hits_total"] > 0,
                      f"vllm:prompt_tokens_total rose by {a['prompt_tokens_total']:.0f} for the cold request and by "
                      f"{b['prompt_tokens_total']:.0f} for the repeat, which hit {b['prefix_cache_hits_total']:.0f} "
                      "cached tokens")


# --- headline figures

HEADLINE = Headline({
    "completion tokens of /v1/completions without max_tokens": lambda d: d["completions_default"]["completion_tokens"],
    "completion tokens of /v1/chat/completions without max_tokens, prompt near the context's end":
        lambda d: d["chat_default"]["completion_tokens"],
    f"prompt tokens billed for an n={N} request": lambda d: d["n3"]["prompt_tokens"],
    f"prompt tokens the engine counted for the same n={N} request":
        lambda d: d["n3"]["engine"]["prompt_tokens_total"],
    "prefix-cache hits of a long prompt sent again": lambda d: d["repeat_second"]["engine"]["prefix_cache_hits_total"],
}, EXACT, "token counts are exact", "tokens")


JOB = Job(
    id="billing",
    title="What the server bills",
    question="How are n > 1 and repeated prompts billed, what do the engine's counters count, and how long is an "
             "answer when max_tokens is not given?",
    pages=("cost.md",),
    collect=collect,
    claims=(
        Claim("billing.n-bills-prompt-once", f"With n={N}, usage bills the prompt once and the completions of all "
              f"{N} answers.", decide_n),
        Claim("billing.n-computes-prompt-once", f"With n={N}, the engine counts the prompt's tokens once too.",
              decide_n_engine),
        Claim("billing.completions-default-16", "/v1/completions without max_tokens generates 16 tokens.",
              decide_completions_default),
        Claim("billing.chat-default-rest-of-context", "/v1/chat/completions without max_tokens may generate up to "
              "the rest of the context.", decide_chat_default),
        Claim("billing.repeat-billed-in-full", "A repeated prompt is billed in full: usage shows the same "
              "prompt_tokens and, by default, nothing about the cache.", decide_repeat_billed),
        Claim("billing.counter-counts-cached", "vllm:prompt_tokens_total counts a repeated prompt's cached tokens "
              "as if computed.", decide_counter),
    ),
    headline=HEADLINE,
)
