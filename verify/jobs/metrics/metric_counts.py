"""What the token, prefix-cache and latency counters add for requests of known size.

Each request runs alone; /metrics is read before and after it (the server idle
both times), and the change is set against the request's own usage. The same
300-token prompt goes twice with one cache_salt, so the second is a prefix hit;
a third request is a streamed chat.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

PROMPT_TOKENS = 300
MAX_TOKENS = (12, 12, 20)
WATCH = ("vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_queries_total",
         "vllm:prefix_cache_hits_total", "vllm:inter_token_latency_seconds_count",
         "vllm:request_prompt_tokens_sum", "vllm:request_prompt_tokens_count",
         "vllm:request_generation_tokens_sum", "vllm:request_generation_tokens_count")


def _measured(ctx, client, path: str, body: dict) -> dict:
    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    r = client.post(ctx.base_url + path, json=body)
    metrics.wait_idle(ctx.server.url)
    after = metrics.read_all(ctx.server.url)
    change = {k: round(after.get(k, 0.0) - before.get(k, 0.0), 6) for k in WATCH}
    return capture.response(r, usage=(capture.body(r) or {}).get("usage"), change=change)


def collect(ctx) -> dict:
    import uuid

    import httpx

    from verify.measure.prompts import exact_prompt
    with httpx.Client(timeout=120) as client:
        prompt, salt = exact_prompt(ctx.server.url, client, PROMPT_TOKENS), uuid.uuid4().hex
        body = {"model": "chat", "prompt": prompt, "temperature": 0, "ignore_eos": True, "cache_salt": salt}
        cold = _measured(ctx, client, "/completions", {**body, "max_tokens": MAX_TOKENS[0]})
        warm = _measured(ctx, client, "/completions", {**body, "max_tokens": MAX_TOKENS[1]})
        chat = _measured(ctx, client, "/chat/completions",
                         {"model": "chat", "messages": [{"role": "user", "content": "Describe a harbour at dawn."}],
                          "max_tokens": MAX_TOKENS[2], "temperature": 0, "ignore_eos": True, "stream": False})
    return {"requests": {"cold": cold, "warm": warm, "chat": chat}}


def _rows(d):
    return d["requests"].items()


def decide_tokens_match_usage(d):
    bad = [n for n, r in _rows(d) if r["change"]["vllm:prompt_tokens_total"] != r["usage"]["prompt_tokens"]
           or r["change"]["vllm:generation_tokens_total"] != r["usage"]["completion_tokens"]]
    return verdict_if(not bad, "; ".join(
        f"{n}: prompt_tokens_total +{r['change']['vllm:prompt_tokens_total']:.0f} (usage {r['usage']['prompt_tokens']}), "
        f"generation_tokens_total +{r['change']['vllm:generation_tokens_total']:.0f} "
        f"(usage {r['usage']['completion_tokens']})" for n, r in _rows(d)))


def decide_cached_still_counted(d):
    w = d["requests"]["warm"]
    hits, prompt = w["change"]["vllm:prefix_cache_hits_total"], w["change"]["vllm:prompt_tokens_total"]
    return verdict_if(hits > 0 and prompt == w["usage"]["prompt_tokens"],
                      f"the repeated prompt hit {hits:.0f} cached tokens and still added {prompt:.0f} to "
                      f"vllm:prompt_tokens_total (usage.prompt_tokens {w['usage']['prompt_tokens']})")


def decide_queries_are_prompt_tokens(d):
    rows = [(n, r["change"]["vllm:prefix_cache_queries_total"], r["usage"]["prompt_tokens"]) for n, r in _rows(d)]
    return verdict_if(all(q == p for _, q, p in rows),
                      "; ".join(f"{n}: prefix_cache_queries_total +{q:.0f}, prompt tokens {p}" for n, q, p in rows))


def decide_itl_per_gap(d):
    rows = [(n, r["change"]["vllm:inter_token_latency_seconds_count"], r["usage"]["completion_tokens"]) for n, r in _rows(d)]
    return verdict_if(all(c == t - 1 for _, c, t in rows),
                      "; ".join(f"{n}: {t} tokens, inter_token_latency_seconds_count +{c:.0f}" for n, c, t in rows))


def decide_length_histograms(d):
    rows = [(n, r["change"], r["usage"]) for n, r in _rows(d)]
    ok = all(c["vllm:request_prompt_tokens_sum"] == u["prompt_tokens"] and c["vllm:request_prompt_tokens_count"] == 1
             and c["vllm:request_generation_tokens_sum"] == u["completion_tokens"]
             and c["vllm:request_generation_tokens_count"] == 1 for _, c, u in rows)
    return verdict_if(ok, "; ".join(
        f"{n}: request_prompt_tokens +{c['vllm:request_prompt_tokens_count']:.0f} observation of "
        f"{c['vllm:request_prompt_tokens_sum']:.0f}, request_generation_tokens "
        f"+{c['vllm:request_generation_tokens_count']:.0f} of {c['vllm:request_generation_tokens_sum']:.0f}"
        for n, c, _ in rows))


JOB = Job(
    id="metric-counts",
    title="What the counters add per request",
    question="For one request of known size, what do the token, prefix-cache and inter-token counters add?",
    pages=("metrics.md",),
    collect=collect,
    claims=(
        Claim("metric-counts.tokens-match-usage", "vllm:prompt_tokens_total and vllm:generation_tokens_total grow "
              "by exactly the request's usage.prompt_tokens and usage.completion_tokens.", decide_tokens_match_usage),
        Claim("metric-counts.cached-still-counted", "Prompt tokens served from the prefix cache still count in "
              "vllm:prompt_tokens_total: it counts tokens received, not tokens computed.", decide_cached_still_counted),
        Claim("metric-counts.queries-are-prompt-tokens", "vllm:prefix_cache_queries_total grows by the prompt's "
              "token count, once per request: its unit is tokens, not requests.", decide_queries_are_prompt_tokens),
        Claim("metric-counts.itl-per-gap", "vllm:inter_token_latency_seconds gets one observation per gap between "
              "tokens: a request of n tokens adds n - 1.", decide_itl_per_gap),
        Claim("metric-counts.length-histograms", "vllm:request_prompt_tokens and vllm:request_generation_tokens "
              "get one observation per request, of its prompt and answer length.", decide_length_histograms),
    ),
)
