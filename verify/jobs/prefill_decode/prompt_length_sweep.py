"""Time to first token and inter-token latency against prompt length, with the server's own view.

The lengths run in up to TRIALS interleaved trials and the rules decide on per-length medians. The
trials stop once the rest could not change a verdict: whatever they measured, every median of TRIALS
trials would stay where each rule's threshold puts it (each rule checked at the least and greatest
value every median could still reach). A record of fewer trials that do not settle it is inconclusive.
"""

from __future__ import annotations

from verify import headline
from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import Claim, Job, verdict_if

SNIPPET = "prefill-decode/ttft_by_length.py"
SENTENCES = (1, 8, 32, 64)  # about 50, 150, 500 and 1000 prompt tokens
TRIALS = 3
MAX_TOKENS = 32
# The repeat is read for its time to first token and its prefix-cache hits only: a few tokens end it
# (the snippet's ITL needs two; the rest is margin for a first token without text).
REPEAT_MAX_TOKENS = 4
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
        stopped = settled({"runs": runs})
        if stopped["settled"]:
            break
    # The longest prompt once more, word for word: what a repeat costs.
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)
    r = snippet.measure(client, snippet.prompt_of(SENTENCES[-1], tag), max_tokens=REPEAT_MAX_TOKENS)
    metrics.wait_idle(ctx.server.url)
    moved = metrics.delta(before, metrics.read_all(ctx.server.url), "vllm:prefix_cache_")
    # What the prefix cache says it served: the claim is about the cache, not only the clock.
    cache = {name: moved.get(f"vllm:prefix_cache_{name}_total", 0.0) for name in ("queries", "hits")}
    repeat = capture.results("timed-request", range(r["chunks"]), **r, prefix_cache=cache)
    return {"runs": runs, "stopped": stopped, "repeat_of_last": repeat}


# --- when the trials can stop

def _server_itl(r) -> float:
    return r["server"]["inter_token_latency_seconds_sum"] / r["server"]["inter_token_latency_seconds_count"]


_FIGURES = {"ttft": lambda r: r["ttft"], "itl": lambda r: r["itl"],
            "prefill": lambda r: r["server"]["request_prefill_time_seconds_sum"], "server_itl": _server_itl}


def _bounds(d) -> list[dict]:
    """Per prompt length: for each figure, the least and greatest median TRIALS trials could still reach."""
    from verify.measure.trials import median_range
    out = []
    for n in SENTENCES:
        rs = [r for r in d["runs"] if r["sentences"] == n]
        out.append({"prompt_tokens": rs[0]["prompt_tokens"] if rs else None,
                    **{k: median_range([f(r) for r in rs], TRIALS) for k, f in _FIGURES.items()}})
    return out


def _ratio_range(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The least and greatest a / b for a and b in their ranges (b positive)."""
    return a[0] / b[1] if a[0] >= 0 else a[0] / b[0], a[1] / b[0] if a[1] >= 0 else a[1] / b[1]


def _abs_range(r: tuple[float, float]) -> tuple[float, float]:
    lo, hi = r
    return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))


def _and(*sides: bool | None) -> bool | None:
    return False if False in sides else None if None in sides else True


def _grows_side(b: list[dict], k: str, factor: float | None) -> bool | None:
    rising = [True if x[k][1] < y[k][0] else False if x[k][0] >= y[k][1] else None for x, y in zip(b, b[1:])]
    if factor is None:
        return _and(*rising)
    lo, hi = _ratio_range(b[-1][k], b[0][k])
    return _and(*rising, True if lo >= factor else False if hi < factor else None)


def _linear_side(b: list[dict]) -> bool | None:
    per = [(x["prefill"][0] / x["prompt_tokens"], x["prefill"][1] / x["prompt_tokens"]) for x in b[1:]]
    if max(p[1] for p in per) / min(p[0] for p in per) - 1 <= LINEAR_SPREAD:
        return True
    if max(p[0] for p in per) / min(p[1] for p in per) - 1 > LINEAR_SPREAD:
        return False
    return None


def _flat_side(b: list[dict]) -> bool | None:
    change = _abs_range(tuple(x - 1 for x in _ratio_range(b[-1]["itl"], b[0]["itl"])))
    growth = tuple(x - 1 for x in _ratio_range(b[-1]["ttft"], b[0]["ttft"]))
    if change[1] <= ITL_FLAT and growth[0] >= TTFT_OVER_ITL * change[1]:
        return True
    if change[0] > ITL_FLAT or growth[1] < TTFT_OVER_ITL * change[0]:
        return False
    return None


def _cheaper_side(b: list[dict]) -> bool | None:
    tokens = b[-1]["prompt_tokens"] - b[0]["prompt_tokens"]
    per_prompt = ((b[-1]["ttft"][0] - b[0]["ttft"][1]) / tokens, (b[-1]["ttft"][1] - b[0]["ttft"][0]) / tokens)
    # token_costs() takes the upper middle of the sorted per-length ITL medians: an order statistic,
    # which rises with each median, so its range is that of the lows and of the highs.
    mid = len(b) // 2
    generated = (sorted(x["itl"][0] for x in b)[mid], sorted(x["itl"][1] for x in b)[mid])
    lo, hi = _ratio_range(per_prompt, generated)
    return True if hi < PROMPT_TOKEN_SHARE else False if lo >= PROMPT_TOKEN_SHARE else None


def _agrees_side(b: list[dict]) -> bool | None:
    diffs = [_abs_range(tuple(v - 1 for v in _ratio_range(x["itl"], x["server_itl"]))) for x in b]
    return True if all(hi <= ITL_AGREEMENT for _, hi in diffs) else \
        False if any(lo > ITL_AGREEMENT for lo, _ in diffs) else None


def settled(d) -> dict:
    """Whether the trials still to run (up to TRIALS) could change a verdict of the sweep's rules (the
    repeat is measured once, after the trials, and does not depend on their number)."""
    from verify.measure.settling import report
    trials = min(sum(1 for r in d["runs"] if r["sentences"] == n) for n in SENTENCES)

    def sides() -> dict:
        b = _bounds(d)
        return {"ttft grows": _grows_side(b, "ttft", TTFT_GROWTH), "prefill grows": _grows_side(b, "prefill", None),
                "prefill linear": _linear_side(b), "itl flat": _flat_side(b),
                "prompt token cheaper": _cheaper_side(b), "itl matches server": _agrees_side(b)}
    return report(trials, TRIALS, sides, unit="trials")


def _unsettled(d):
    from verify.measure.settling import open_because
    why = open_because(settled(d), unit="trials")
    return verdict_if(None, why) if why else None


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
    if (open_ := _unsettled(d)) is not None:
        return open_
    rows = by_length(d)
    rising = all(a["ttft"] < b["ttft"] for a, b in zip(rows, rows[1:]))
    ratio = rows[-1]["ttft"] / rows[0]["ttft"]
    return verdict_if(rising and ratio >= TTFT_GROWTH, "median TTFT " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['ttft'] * 1000:.0f} ms" for r in rows) +
        f"; the longest is {ratio:.1f}x the shortest (at least {TTFT_GROWTH:.0f}x required)")


def decide_prefill_grows(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
    rows = by_length(d)
    rising = all(a["prefill"] < b["prefill"] for a, b in zip(rows, rows[1:]))
    return verdict_if(rising, "median server prefill time " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['prefill'] * 1000:.0f} ms" for r in rows))


def decide_itl_flat(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
    rows = by_length(d)
    change = rows[-1]["itl"] / rows[0]["itl"] - 1
    ttft_growth = rows[-1]["ttft"] / rows[0]["ttft"] - 1
    ok = abs(change) <= ITL_FLAT and ttft_growth >= TTFT_OVER_ITL * abs(change)
    return verdict_if(ok, "median ITL " + ", ".join(
        f"{r['prompt_tokens']} tokens: {r['itl'] * 1000:.1f} ms" for r in rows) +
        f"; longest vs shortest {change:+.0%} against TTFT {ttft_growth:+.0%} (flat means within {ITL_FLAT:.0%}, "
        f"and TTFT growing at least {TTFT_OVER_ITL} times as much)")


def decide_linear(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
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
    if (open_ := _unsettled(d)) is not None:
        return open_
    c = token_costs(d)
    share = c["prompt_token_s"] / c["generated_token_s"]
    return verdict_if(share < PROMPT_TOKEN_SHARE, f"one more prompt token adds {c['prompt_token_s'] * 1000:.2f} ms to "
                      f"TTFT; one generated token takes {c['generated_token_s'] * 1000:.1f} ms: a prompt token costs "
                      f"{share:.1%} of a generated one (under {PROMPT_TOKEN_SHARE:.0%} required)")


def decide_itl_agrees(d):
    if (open_ := _unsettled(d)) is not None:
        return open_
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
        Claim("prompt-length-sweep.ttft-grows", "Time to first token grows with prompt length.", decide_ttft_grows,
              timing=True),
        Claim("prompt-length-sweep.prefill-grows", "The server's prefill time grows with prompt length: the growth is "
              "in the engine, not in the client or the network.", decide_prefill_grows, timing=True),
        Claim("prompt-length-sweep.prefill-linear", "From about 150 prompt tokens on (the three longer prompts of "
              "the sweep), prefill time is proportional to prompt length: each prompt token costs about the same. "
              "The shortest prompt is left out: fixed costs weigh more in it.", decide_linear, timing=True),
        Claim("prompt-length-sweep.itl-flat", "Inter-token latency changes far less with prompt length than TTFT: "
              "within 30 % from the shortest to the longest prompt here.", decide_itl_flat, timing=True),
        Claim("prompt-length-sweep.prompt-token-cheaper", "One prompt token costs a small fraction of one generated "
              "token: prefill works on all prompt tokens at once, decode on one token per step.", decide_cheaper,
              timing=True),
        Claim("prompt-length-sweep.repeat-served-from-cache", "The same long prompt sent again starts much sooner: "
              "the prefix cache skips most of its prefill (prefix caching is on by default).", decide_repeat,
              timing=True),
        Claim("prompt-length-sweep.itl-matches-server", "On a direct connection, the gaps a client sees between tokens "
              "are the engine's steps: its inter-token latency agrees with vllm:inter_token_latency_seconds.",
              decide_itl_agrees, timing=True),
    ),
    headline=HEADLINE,
)
