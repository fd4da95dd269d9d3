"""What keeps requests from sharing cached blocks: cache_salt, and prompt logprobs.

One prompt of several blocks, sent cold and then repeated: with the same
cache_salt, with a different one, with none against a salted original, and
with prompt_logprobs asked for. The engine's prefix-cache counters are read
around each request, one request at a time.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "kv-cache/prefix_hits.py"
PROMPT_TOKENS = 400
CASES = ("cold, salt A", "again, salt A", "again, salt B", "again, no salt", "again, salt A, prompt_logprobs=1")


def collect(ctx) -> dict:
    import uuid

    import httpx

    from verify.measure import capture, metrics
    from verify.measure.prompts import exact_prompt
    salt_a, salt_b = uuid.uuid4().hex, uuid.uuid4().hex
    extra = {CASES[0]: {"cache_salt": salt_a}, CASES[1]: {"cache_salt": salt_a}, CASES[2]: {"cache_salt": salt_b},
             CASES[3]: {}, CASES[4]: {"cache_salt": salt_a, "prompt_logprobs": 1}}
    out = {}
    with httpx.Client(timeout=120) as client:
        # A nonce word first, so the unsalted request cannot meet blocks from an earlier run.
        prompt = uuid.uuid4().hex[:8] + " " + exact_prompt(ctx.server.url, client, PROMPT_TOKENS)
        counters = ctx.snippet(SNIPPET).prefix_counters  # the page's own snippet reads the counters
        for case in CASES:
            metrics.wait_idle(ctx.server.url)
            queried, hit = counters(ctx.server.url)
            r = client.post(ctx.base_url + "/completions", json={"model": "chat", "prompt": prompt, "max_tokens": 4,
                                                                 "temperature": 0, **extra[case]})
            metrics.wait_idle(ctx.server.url)
            queried_after, hit_after = counters(ctx.server.url)
            body = capture.body(r) or {}
            out[case] = capture.response(r, prompt_tokens=(body.get("usage") or {}).get("prompt_tokens"),
                                         prompt_logprobs_returned=bool((body.get("choices") or [{}])[0]
                                                                       .get("prompt_logprobs")),
                                         queries=queried_after - queried, hits=hit_after - hit)
    return {"cases": out}


def _hits(d, case) -> float:
    return d["cases"][case]["hits"]


def decide_salt(d):
    same, other, none = _hits(d, CASES[1]), _hits(d, CASES[2]), _hits(d, CASES[3])
    return verdict_if(same > 0 and other == 0 and none == 0,
                      f"hit tokens: same salt {same:.0f}, another salt {other:.0f}, no salt {none:.0f} "
                      f"(the original was salted)")


def decide_prompt_logprobs(d):
    case = d["cases"][CASES[4]]
    return verdict_if(case["hits"] == 0 and _hits(d, CASES[1]) > 0,
                      f"with prompt_logprobs (returned: {case['prompt_logprobs_returned']}), the same prompt and salt "
                      f"hit {case['hits']:.0f} tokens (queried {case['queries']:.0f}); without, {_hits(d, CASES[1]):.0f}")


JOB = Job(
    id="cache-isolation",
    title="cache_salt and prompt logprobs against the prefix cache",
    question="Does cache_salt keep requests from sharing cached blocks, and do requests asking for prompt logprobs "
             "use the prefix cache?",
    pages=("kv-cache.md",),
    collect=collect,
    claims=(
        Claim("cache-isolation.salt-separates", "Requests with different cache_salt values (or one salted, one not) "
              "share no cached blocks; the same salt shares them.", decide_salt),
        Claim("cache-isolation.prompt-logprobs-skip-cache", "A request asking for prompt logprobs does not read "
              "the prefix cache, even for a prompt that is cached.", decide_prompt_logprobs),
    ),
)
