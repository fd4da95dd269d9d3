"""How prefix-cache hits are counted when the same prompt comes twice, over several prompt lengths.

Each prompt is built to an exact token count (checked with the server's
/tokenize), sent once cold and then again after an unrelated request, each
request alone, and the engine's prefix-cache counters are read around each
one. A fresh cache_salt per prompt keeps earlier runs' cache out of it. The
longest prompt is also timed cold and warm, up to three times each, to see what a
hit saves: the rounds stop once the rest could not move the medians across the
rule's threshold (whatever they measured), and the record keeps why they stopped.
"""

from __future__ import annotations

import statistics

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median, ms
from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if
from verify.measure import units

# Prompt lengths in tokens, around the CPU build's 128-token block: under one block, exactly one,
# one more than one, exactly two, and long.
LENGTHS = (100, 128, 129, 256, 300, 1400)
TIMED_LENGTH = 1400
TIMED_ROUNDS = 3  # at most; fewer once the rest could not change the verdict (timed_settled)
MAX_TOKENS = 24
# "A hit saves the prefill": the warm median TTFT below this share of the cold median.
FASTER_BELOW = 0.5
SNIPPET = "kv-cache/prefix_hits.py"


def _one(ctx, client, prompt: str, salt: str, max_tokens: int = MAX_TOKENS) -> dict:
    import json
    import time

    from verify.measure import capture, metrics
    counters = ctx.snippet(SNIPPET).prefix_counters  # the page's own snippet reads the counters
    metrics.wait_idle(ctx.server.url)
    queried, hit = counters(ctx.server.url)
    body = {"model": "chat", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "cache_salt": salt,
            "stream": True, "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    first, text, status, prompt_tokens = None, [], None, None
    with client.stream("POST", ctx.base_url + "/completions", json=body) as r:
        status = r.status_code
        for line in r.iter_lines():
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                prompt_tokens = chunk["usage"]["prompt_tokens"]
            if chunk.get("choices") and chunk["choices"][0].get("text"):
                first = first if first is not None else time.perf_counter() - t0
                text.append(chunk["choices"][0]["text"])
    metrics.wait_idle(ctx.server.url)
    queried_after, hit_after = counters(ctx.server.url)
    # One event per text chunk received; the status is the stream's.
    return capture.results("request", text, statuses=[status], prompt_tokens=prompt_tokens,
                           queries=queried_after - queried, hits=hit_after - hit,
                           ttft_s=round(first, 4) if first is not None else None, text="".join(text))


def collect(ctx) -> dict:
    import uuid

    import httpx

    from verify.measure import metrics
    from verify.measure.prompts import exact_prompt
    with httpx.Client(timeout=120) as client:
        info = next(k for k in metrics.read_all(ctx.server.url) if k.startswith("vllm:cache_config_info"))
        block = int(info.split('block_size="')[1].split('"')[0])
        lengths = {}
        for n in LENGTHS:
            prompt, salt = exact_prompt(ctx.server.url, client, n), uuid.uuid4().hex
            cold = _one(ctx, client, prompt, salt)
            # Something else runs in between: the first request has finished and another has come and gone
            # (one token is enough for that; nothing reads its answer).
            between = _one(ctx, client, "An unrelated request.", uuid.uuid4().hex, max_tokens=1)
            warm = _one(ctx, client, prompt, salt)
            lengths[str(n)] = {"cold": cold, "between": between, "warm": warm}
        d = {"block_size": block, "lengths": lengths, "timed": []}
        prompt = exact_prompt(ctx.server.url, client, TIMED_LENGTH)
        for _ in range(TIMED_ROUNDS):
            salt = uuid.uuid4().hex
            d["timed"].append({"cold": _one(ctx, client, prompt, salt), "warm": _one(ctx, client, prompt, salt)})
            d["stopped"] = timed_settled(d)
            if d["stopped"]["settled"]:
                break
    return d


def timed_settled(d) -> dict:
    """Whether the timed rounds still to run could change the verdict of decide_faster: whatever they measure,
    the median of TIMED_ROUNDS warm TTFTs stays on one side of FASTER_BELOW x the median of TIMED_ROUNDS cold
    ones (median_range: the least and greatest median the full rounds could still reach)."""
    from verify.measure.trials import median_range
    cold = [t["cold"]["ttft_s"] for t in d["timed"]]
    warm = [t["warm"]["ttft_s"] for t in d["timed"]]
    rounds = len(d["timed"])
    if None in cold or None in warm:
        side = "a timed request produced no text"  # inconclusive whatever follows
    else:
        c_lo, c_hi = median_range(cold, TIMED_ROUNDS)
        w_lo, w_hi = median_range(warm, TIMED_ROUNDS)
        side = ("below" if w_hi < FASTER_BELOW * c_lo else "not below" if w_lo >= FASTER_BELOW * c_hi else None)
        side = side and (f"warm median {side} {FASTER_BELOW:.0%} of cold whatever the rest measure (warm "
                         f"{units.ms(w_lo)} to {units.ms(w_hi)}, cold {units.ms(c_lo)} to {units.ms(c_hi)})")
    return {"rounds": rounds, "max_rounds": TIMED_ROUNDS, "settled": bool(side) or rounds >= TIMED_ROUNDS,
            "why": side or "open"}


def expected_hits(n: int, block: int) -> int:
    """Whole blocks only, and never the whole prompt: at least its last token is computed again."""
    return (n - 1) // block * block


def decide_cold(d):
    cold = {n: x["cold"]["hits"] for n, x in d["lengths"].items()}
    return verdict_if(all(h == 0 for h in cold.values()),
                      "hits on the first request of each prompt: " + ", ".join(f"{n} tokens: {h:.0f}" for n, h in cold.items()))


def decide_whole_blocks(d):
    b = d["block_size"]
    rows = {n: (x["warm"]["prompt_tokens"], x["warm"]["hits"], expected_hits(x["warm"]["prompt_tokens"], b))
            for n, x in d["lengths"].items()}
    ok = all(hit == exp for _, hit, exp in rows.values())
    return verdict_if(ok, f"block size {b}; second request, hits against (tokens - 1) // {b} x {b}: " +
                      ", ".join(f"{p} tokens: {h:.0f} (expected {e})" for p, h, e in rows.values()))


def decide_finished_still_hits(d):
    long = [x for x in d["lengths"].values() if x["warm"]["prompt_tokens"] > d["block_size"]]
    return verdict_if(bool(long) and all(x["warm"]["hits"] > 0 for x in long),
                      f"{sum(1 for x in long if x['warm']['hits'] > 0)} of {len(long)} prompts longer than a block hit "
                      "the cache after their first request had finished and another request had run")


def decide_greedy_unchanged(d):
    same = {n: x["cold"]["text"] == x["warm"]["text"] for n, x in d["lengths"].items()}
    same_timed = [t["cold"]["text"] == t["warm"]["text"] for t in d["timed"]]
    return verdict_if(all(same.values()) and all(same_timed),
                      f"greedy output with a cache hit equal to the cold run's in {sum(same.values())} of {len(same)} "
                      f"prompts and {sum(same_timed)} of {len(same_timed)} timed pairs")


def decide_faster(d):
    cold = [t["cold"]["ttft_s"] for t in d["timed"]]
    warm = [t["warm"]["ttft_s"] for t in d["timed"]]
    if None in cold or None in warm:
        return Verdict(INCONCLUSIVE, "a timed request produced no text")
    stop = timed_settled(d)
    if not stop["settled"]:
        return Verdict(INCONCLUSIVE, f"{len(cold)} of up to {TIMED_ROUNDS} timed rounds, which do not settle the "
                                     f"medians ({stop['why']})")
    c, w = statistics.median(cold), statistics.median(warm)
    rounds = f"{len(cold)} rounds" if len(cold) >= TIMED_ROUNDS else \
        f"{len(cold)} rounds of up to {TIMED_ROUNDS} (the rest could not change the verdict)"
    return verdict_if(w < FASTER_BELOW * c,
                      f"{TIMED_LENGTH}-token prompt, {rounds}: TTFT cold median {units.ms(c)} "
                      f"(range {units.ms(min(cold))} to {units.ms(max(cold))}), with a hit median {units.ms(w)} "
                      f"(range {units.ms(min(warm))} to {units.ms(max(warm))}); threshold {FASTER_BELOW:.0%} of cold")


# --- headline figures

def _timed_ttft_ms(d, which: str) -> float:
    return ms(median(t[which]["ttft_s"] for t in d["timed"]))


HEADLINE = Headline({
    "time to first token, long prompt, cold, median": lambda d: _timed_ttft_ms(d, "cold"),
    "time to first token, the same long prompt again (cache hit), median": lambda d: _timed_ttft_ms(d, "warm"),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")

JOB = Job(
    id="prefix-hits",
    title="Prefix-cache hits for a repeated prompt",
    question="When the same prompt comes twice, how many of its tokens hit the prefix cache, and what does a hit "
             "change in the output and in time to first token?",
    pages=("kv-cache.md",),
    collect=collect,
    claims=(
        Claim("prefix-hits.first-is-cold", "The first request of a prompt hits nothing.", decide_cold),
        Claim("prefix-hits.whole-blocks-only", "A repeated prompt hits the cache in whole blocks only, and never for "
              "its last token: (prompt tokens - 1) rounded down to a multiple of the block size. A prompt of one "
              "block or less hits nothing.", decide_whole_blocks),
        Claim("prefix-hits.finished-still-hits", "A finished request's blocks stay in the cache: the same prompt "
              "still hits after the first request ended and another ran.", decide_finished_still_hits),
        Claim("prefix-hits.greedy-unchanged", "A cache hit does not change a greedy answer.", decide_greedy_unchanged),
        Claim("prefix-hits.hit-skips-prefill", "A hit skips the prefill of the cached blocks: time to first token of "
              "a long repeated prompt falls to a fraction of the cold one.", decide_faster, timing=True),
    ),
    headline=HEADLINE,
)
