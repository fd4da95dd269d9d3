"""Time to first token and inter-token latency against prompt length, with the server's own view."""

from __future__ import annotations

from verify import headline
from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import Claim, Job, verdict_if

SNIPPET = "prefill-decode/ttft_by_length.py"
SENTENCES = (1, 8, 32, 64)  # about 50, 150, 500 and 1000 prompt tokens
TRIALS = 3
MAX_TOKENS = 32
# "Grows": the longest prompt's median TTFT is at least this many times the shortest's.
TTFT_GROWTH = 3.0
# "Flat": the longest prompt's median ITL within this share of the shortest's.
ITL_FLAT = 0.30
# "Far less than TTFT": TTFT's relative growth over the sweep is at least this many times ITL's.
TTFT_OVER_ITL = 5
# "Cheaper": one prompt token costs under this share of one generated token.
PROMPT_TOKEN_SHARE = 0.2
# "Linear": prefill time per prompt token varies by at most this share across lengths.
LINEAR_SPREAD = 0.25
# A repeated prompt "served from the prefix cache": its TTFT at most this share of the first time's.
REPEAT_SHARE = 0.5
# ... and at least this share of its prompt tokens counted as prefix-cache hits.
CACHED_SHARE = 0.5
# The client's ITL and the server's inter-token histogram agree within this share.
ITL_AGREEMENT = 0.15


def collect(ctx) -> dict:
    import time

    from openai import OpenAI

    from verify.measure import capture, metrics
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    snippet.measure(client, snippet.prompt_of(1, "warm-up"), max_tokens=4)  # not recorded
    runs = []
    for trial in range(TRIALS):  # interleaved: drift in machine speed hits every length alike
        for n in SENTENCES:
            metrics.wait_idle(ctx.server.url)
            before = metrics.read_all(ctx.server.url)
            # A tag never used before: a repeated prompt would be served from the prefix cache.
            tag = f"{time.time_ns()} trial {trial}, {n} sentences"
            r = snippet.measure(client, snippet.prompt_of(n, tag), max_tokens=MAX_TOKENS)
            metrics.wait_idle(ctx.server.url)
            moved = metrics.delta(before, metrics.read_all(ctx.server.url), "vllm:")
            server = {k.removeprefix("vllm:"): v for k, v in moved.items() if k.endswith(("_sum", "_count")) and (
                "prefill_time" in k or "time_to_first_token" in k or "inter_token_latency" in k)}
            # measure() returns the number of text chunks that arrived, not the chunks themselves.
            runs.append(capture.results("timed-request", range(r["chunks"]), sentences=n, **r, server=server))
    # The longest prompt once more, word for word: what a repeat costs.
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    r = snippet.measure(client, snippet.prompt_of(SENTENCES[-1], tag), max_tokens=MAX_TOKENS)
    metrics.wait_idle(ctx.server.url)
    moved = metrics.delta(before, metrics.read_all(ctx.server.url), "vllm:prefix_cache_")
    # What the prefix cache says it served: the claim is about the cache, not only the clock.
    cache = {name: moved.get(f"vllm:prefix_cache_{name}_total", 0.0) for name in ("queries", "hits")}
    repeat = capture.results("timed-request", range(r["chunks"]), **r, prefix_cache=cache)
    return {"runs": runs, "repeat_of_last": repeat}


def by_length(d) -> list[dict]:
    """Per prompt length: median client TTFT and ITL, median server prefill and ITL."""
    from statistics import median
    out = []
    for n in SENTENCES:
        rs = [r for r in d["runs"] if r["sentences"] == n]
        srv_itl = [r["server"]["inter_token_latency_seconds_sum"] / r["server"]["inter_token_latency_seconds_count"]
                   for r in rs]
        out.append({"sentences": n, "prompt_tokens": rs[0]["prompt_tokens"], "n": len(rs),
                    "ttft": median(r["ttft"] for r in rs), "ttft_min": min(r["ttft"] for r in rs),
                    "ttft_max": max(r["ttft"] for r in rs), "itl": median(r["itl"] for r in rs),
                    "prefill": median(r["server"]["request_prefill_time_seconds_sum"] for r in rs),
                    "server_itl": median(srv_itl)})
    return out


def decide_ttft_grows(d):
    rows = by_length(d)
    rising = all(a["ttft"] < b["ttft"] for a, b in zip(rows, rows[1:]))
    ratio = rows[-1]["ttft"] / rows[0]["ttft"]
    return verdict_if(rising and ratio >= TTFT_GROWTH, "median TTFT " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['ttft'] * 1000:.0f} ms" for r in rows) +
        f"; the longest is {ratio:.1f}x the shortest (at least {TTFT_GROWTH:.0f}x required)")


def decide_prefill_grows(d):
    rows = by_length(d)
    rising = all(a["prefill"] < b["prefill"] for a, b in zip(rows, rows[1:]))
    return verdict_if(rising, "median server prefill time " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['prefill'] * 1000:.0f} ms" for r in rows))


def decide_itl_flat(d):
    rows = by_length(d)
    change = rows[-1]["itl"] / rows[0]["itl"] - 1
    ttft_growth = rows[-1]["ttft"] / rows[0]["ttft"] - 1
    ok = abs(change) <= ITL_FLAT and ttft_growth >= TTFT_OVER_ITL * abs(change)
    return verdict_if(ok, "median ITL " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['itl'] * 1000:.1f} ms" for r in rows) +
        f"; longest vs shortest {change:+.0%} against TTFT {ttft_growth:+.0%} (flat means within {ITL_FLAT:.0%}, "
        f"and TTFT growing at least {TTFT_OVER_ITL} times as much)")


def decide_linear(d):
    every = by_length(d)
    rows = every[1:]  # from about 150 tokens on: below that, fixed costs dominate (the claim leaves it out)
    per_token = [r["prefill"] / r["prompt_tokens"] for r in rows]
    spread = max(per_token) / min(per_token) - 1
    return verdict_if(spread <= LINEAR_SPREAD, "server prefill time per prompt token: " + ", ".join(
        f"{r['prompt_tokens']} tokens: {p * 1000:.2f} ms" for r, p in zip(rows, per_token)) +
        f"; spread {spread:.0%} (linear means within {LINEAR_SPREAD:.0%}; the {every[0]['prompt_tokens']}-token "
        f"prompt, {every[0]['prefill'] / every[0]['prompt_tokens'] * 1000:.2f} ms a token, is not part of the claim)")


def token_costs(d) -> dict:
    rows = by_length(d)
    per_prompt_token = (rows[-1]["ttft"] - rows[0]["ttft"]) / (rows[-1]["prompt_tokens"] - rows[0]["prompt_tokens"])
    per_generated = sorted(r["itl"] for r in rows)[len(rows) // 2]
    return {"prompt_token_s": per_prompt_token, "generated_token_s": per_generated}


def decide_cheaper(d):
    c = token_costs(d)
    share = c["prompt_token_s"] / c["generated_token_s"]
    return verdict_if(share < PROMPT_TOKEN_SHARE, f"one more prompt token adds {c['prompt_token_s'] * 1000:.2f} ms to "
                      f"TTFT; one generated token takes {c['generated_token_s'] * 1000:.1f} ms: a prompt token costs "
                      f"{share:.1%} of a generated one (under {PROMPT_TOKEN_SHARE:.0%} required)")


def decide_itl_agrees(d):
    rows = by_length(d)
    diffs = [abs(r["itl"] - r["server_itl"]) / r["server_itl"] for r in rows]
    return verdict_if(max(diffs) <= ITL_AGREEMENT, "client vs server inter-token latency: " + ", ".join(
        f"{r['itl'] * 1000:.1f} / {r['server_itl'] * 1000:.1f} ms" for r in rows) +
        f" (agreement within {ITL_AGREEMENT:.0%} required)")


def decide_repeat(d):
    first = d["runs"][-1]
    again = d["repeat_of_last"]
    share = again["ttft"] / first["ttft"]
    cache = again["prefix_cache"]
    if not cache["queries"]:
        raise ValueError("vllm:prefix_cache_queries_total did not move for the repeat: the cache was not read")
    cached = cache["hits"] / again["prompt_tokens"]
    return verdict_if(share <= REPEAT_SHARE and cached >= CACHED_SHARE,
                      f"the {first['prompt_tokens']}-token prompt: TTFT {first['ttft'] * 1000:.0f} ms the first time, "
                      f"{again['ttft'] * 1000:.0f} ms repeated word for word ({share:.0%}), with "
                      f"{cache['hits']:.0f} of its tokens prefix-cache hits ({cached:.0%}; served from cache means "
                      f"at most {REPEAT_SHARE:.0%} of the time and at least {CACHED_SHARE:.0%} of the tokens hits)")


# --- headline figures

def _sweep_row(d, which: int) -> dict:
    return by_length(d)[which]


HEADLINE = Headline({
    f"time to first token, shortest prompt ({SENTENCES[0]} sentence), median": lambda d: headline.ms(_sweep_row(d, 0)["ttft"]),
    f"time to first token, longest prompt ({SENTENCES[-1]} sentences), median": lambda d: headline.ms(_sweep_row(d, -1)["ttft"]),
    f"server prefill time per prompt token, longest prompt ({SENTENCES[-1]} sentences), median":
        lambda d: headline.ms(_sweep_row(d, -1)["prefill"] / _sweep_row(d, -1)["prompt_tokens"]),
    "inter-token latency, median over every prompt length": lambda d: headline.ms(headline.median(r["itl"] for r in d["runs"])),
    "time to first token of the longest prompt sent again (prefix cache)": lambda d: headline.ms(d["repeat_of_last"]["ttft"]),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")

JOB = Job(
    id="prompt-length-sweep",
    title="TTFT and ITL against prompt length",
    question="How do time to first token and inter-token latency change with prompt length, and what does one prompt "
             "token cost against one generated token?",
    pages=("prefill-decode.md",),
    collect=collect,
    claims=(
        Claim("prompt-length-sweep.ttft-grows", "Time to first token grows with prompt length.", decide_ttft_grows),
        Claim("prompt-length-sweep.prefill-grows", "The server's prefill time grows with prompt length: the growth is "
              "in the engine, not in the client or the network.", decide_prefill_grows),
        Claim("prompt-length-sweep.prefill-linear", "From about 150 prompt tokens on (the three longer prompts of "
              "the sweep), prefill time is proportional to prompt length: each prompt token costs about the same. "
              "The shortest prompt is left out: fixed costs weigh more in it.", decide_linear),
        Claim("prompt-length-sweep.itl-flat", "Inter-token latency changes far less with prompt length than TTFT: "
              "within 30 % from the shortest to the longest prompt here.", decide_itl_flat),
        Claim("prompt-length-sweep.prompt-token-cheaper", "One prompt token costs a small fraction of one generated "
              "token: prefill works on all prompt tokens at once, decode on one token per step.", decide_cheaper),
        Claim("prompt-length-sweep.repeat-served-from-cache", "The same long prompt sent again starts much sooner: "
              "the prefix cache skips most of its prefill (prefix caching is on by default).", decide_repeat),
        Claim("prompt-length-sweep.itl-matches-server", "On a direct connection, the gaps a client sees between tokens "
              "are the engine's steps: its inter-token latency agrees with vllm:inter_token_latency_seconds.",
              decide_itl_agrees),
    ),
    headline=HEADLINE,
)
