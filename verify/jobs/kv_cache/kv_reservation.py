"""Does max_tokens reserve KV cache up front, or does a request's cache grow as it generates?

The same prompt, generating the same number of tokens, twice: once with a
max_tokens just large enough, once with a max_tokens near the context length
(and abandoned after the same number of tokens). After every token the client
reads the engine's KV cache usage and, in the same scrape, the engine's own count
of generated tokens: the client reads its stream a few tokens behind the engine
(more so on a fast machine), so the blocks held are compared with what the
engine's count needs, and against what an up-front reservation would have shown.
The block size and the number of blocks are read from the server's
cache_config_info.
"""

from __future__ import annotations

import math

from verify.headline import EXACT, Headline
from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

PROMPT = "Tell a long story about the sea."
TOKENS = 260  # enough to cross two block boundaries at the embedded profile's block size
SMALL_MAX_TOKENS = TOKENS
LARGE_MAX_TOKENS = 1800  # close to the embedded model's 2,048-token context
# At a scrape, the engine holds the KV of prompt + its tokens - 1 and may have allocated the
# slot of the token it is computing: one token of slack either way of its own count.
ENGINE_SLACK = 1


def _follow(ctx, max_tokens: int) -> dict:
    """Stream TOKENS tokens, reading KV cache usage after each; leave when TOKENS have arrived."""
    import json

    import httpx

    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    body = {"model": "chat", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "ignore_eos": True, "stream_options": {"include_usage": True}}
    readings, status, error, prompt_tokens = [], None, None, None
    tokens = 0
    generated_before = metrics.read(ctx.server.url)["vllm:generation_tokens_total"]
    try:
        with httpx.Client(timeout=120) as client, client.stream("POST", ctx.base_url + "/chat/completions",
                                                                json=body) as r:
            status = r.status_code
            for line in r.iter_lines():
                if not line.startswith("data: {"):
                    continue
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    prompt_tokens = chunk["usage"]["prompt_tokens"]
                if not chunk.get("choices") or "role" in chunk["choices"][0]["delta"]:
                    continue
                tokens += 1  # one generated token per chunk after the first (chunk-shapes)
                m = metrics.read(ctx.server.url, client)
                # [tokens the client has, KV cache usage, tokens the engine had generated]
                readings.append([tokens, m["vllm:kv_cache_usage_perc"],
                                 round(m["vllm:generation_tokens_total"] - generated_before)])
                if tokens >= TOKENS and max_tokens > TOKENS:
                    break  # leave: the engine aborts the rest
    except httpx.HTTPError as e:
        error = f"{type(e).__name__}: {e}"
    # One event per reading taken; the status is the stream's (None when it never opened).
    return capture.results("usage-readings", readings, statuses=[status], error=error, max_tokens=max_tokens,
                           prompt_tokens=prompt_tokens, readings=readings)


def collect(ctx) -> dict:
    from verify.measure import metrics
    info = next(k for k in metrics.read_all(ctx.server.url) if k.startswith("vllm:cache_config_info"))
    labels = dict(part.split("=", 1) for part in info[info.index("{") + 1:-1].split(","))
    small = _follow(ctx, SMALL_MAX_TOKENS)
    large = _follow(ctx, LARGE_MAX_TOKENS)
    if large["prompt_tokens"] is None:  # the abandoned stream never got its usage chunk; same prompt
        large["prompt_tokens"] = small["prompt_tokens"]
    metrics.wait_idle(ctx.server.url)
    return {"block_size": int(labels["block_size"].strip('"')), "num_blocks": int(labels["num_gpu_blocks"].strip('"')),
            "small": small, "large": large}


def blocks_at(d, usage: float) -> int:
    return round(usage * d["num_blocks"])


def blocks_needed(d, prompt_tokens: int, tokens: int) -> int:
    return math.ceil((prompt_tokens + tokens) / d["block_size"])


def _off_growth(d, request: dict) -> list[tuple[int, int]]:
    """Readings whose blocks are not what prompt + the engine's generated tokens need: (engine tokens, blocks)."""
    prompt = request["prompt_tokens"]
    return [(n, blocks_at(d, u)) for _, u, n in request["readings"]
            if not (blocks_needed(d, prompt, max(n - ENGINE_SLACK, 0)) <= blocks_at(d, u)
                    <= blocks_needed(d, prompt, n + ENGINE_SLACK))]


def _running(request: dict) -> dict:
    """The request with only the readings taken while the engine was still generating it."""
    return {**request, "readings": [r for r in request["readings"] if r[2] < request["max_tokens"]]}


def decide_reserved(d):
    large = d["large"]
    reserved = blocks_needed(d, large["prompt_tokens"], large["max_tokens"])
    first = blocks_at(d, large["readings"][0][1])
    # Readings taken once the engine had generated all max_tokens come after the request finished
    # there (its blocks freed, while the client may still be reading the stream): leave them out.
    small, large = _running(d["small"]), _running(large)
    same = not _off_growth(d, small) and not _off_growth(d, large)
    # Refuted needs both: less than the reservation, and both requests holding, token by token,
    # just what their tokens need (a larger max_tokens changed nothing). Either alone decides nothing.
    if first < reserved and not same:
        return verdict_if(None, f"with max_tokens {large['max_tokens']} the request held {first} block(s), less than "
                                f"a reservation ({reserved}), but not, at every reading, the blocks its tokens need "
                                f"(off: max_tokens {large['max_tokens']} {_off_growth(d, large)[:3]}, max_tokens "
                                f"{d['small']['max_tokens']} {_off_growth(d, small)[:3]})")
    return verdict_if(first >= reserved,
                      f"with max_tokens {large['max_tokens']} the request held {first} block(s) after its first token "
                      f"(a reservation would be {reserved} of {d['num_blocks']} blocks of {d['block_size']} tokens); "
                      f"with max_tokens {d['small']['max_tokens']} it held "
                      f"{'at every reading the blocks its tokens need, as with the larger one' if same else 'other blocks'}")


def decide_grows(d):
    readings = d["large"]["readings"]
    levels = sorted({blocks_at(d, u) for _, u, _ in readings})
    if len(levels) < 2:
        return Verdict(INCONCLUSIVE, f"usage stayed at {levels} block(s) over {len(readings)} tokens: no boundary crossed")
    off = _off_growth(d, d["large"])
    engine = max((n for _, _, n in readings), default=0)
    return verdict_if(not off, f"over {len(readings)} streamed tokens (the engine's own count at the last reading: "
                               f"{engine}) the request held "
                               f"{' → '.join(map(str, levels))} blocks, "
                               f"each step when prompt + the engine's generated tokens crossed a multiple of "
                               f"{d['block_size']}" + (f"; off by more than {ENGINE_SLACK} token at (engine tokens, "
                                                       f"blocks) {off[:5]}" if off else ""))


# --- headline figures

HEADLINE = Headline({
    "blocks held after the first token, max_tokens near the context length":
        lambda d: blocks_at(d, d["large"]["readings"][0][1]),
    "blocks held after the last token read, max_tokens near the context length":
        lambda d: blocks_at(d, d["large"]["readings"][-1][1]),
    # The small request's last reading comes after it finished, its blocks already freed.
    "most blocks held, max_tokens just large enough":
        lambda d: max(blocks_at(d, r[1]) for r in d["small"]["readings"][:-1]),
}, EXACT, "block counts are exact", "blocks")

JOB = Job(
    id="kv-reservation",
    title="KV cache: reserved for max_tokens, or grown block by block?",
    question="Does a request hold KV cache for its whole max_tokens from the start, or do its blocks grow as it "
             "generates?",
    pages=("kv-cache.md", "streaming.md"),
    collect=collect,
    claims=(
        Claim("kv-reservation.reserved-up-front", "A request reserves KV cache for its whole max_tokens when it "
              "starts.", decide_reserved),
        Claim("kv-reservation.grows-by-block", "A request's KV cache grows one block at a time, as prompt plus "
              "generated tokens fill each block.", decide_grows),
    ),
    headline=HEADLINE,
)
