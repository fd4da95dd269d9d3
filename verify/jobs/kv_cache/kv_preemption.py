"""A KV cache too small for the load: preemption, and what it does to the requests.

On the tiny-kv-cache variant (the cache cut to as many blocks as one request
of full context length needs), six requests that together need more blocks
than exist generate at once. The same six then run three at a time, which
fits, as the reference. The engine's preemption counter is read around both.
"""

from __future__ import annotations

from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

REQUESTS = 6
MAX_TOKENS = 400
REFERENCE_AT_ONCE = 3


def _batch(ctx, prompts, at_once: int) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    before = metrics.read_all(ctx.server.url)

    def one(prompt):
        r = httpx.post(ctx.base_url + "/completions", json={"model": "chat", "prompt": prompt, "max_tokens": MAX_TOKENS,
                                                             "temperature": 0, "ignore_eos": True}, timeout=600)
        body = (capture.body(r) or {}) if r.status_code == 200 else {}
        choice = (body.get("choices") or [{}])[0]
        return {"status": r.status_code, "text": choice.get("text"), "finish_reason": choice.get("finish_reason"),
                "completion_tokens": (body.get("usage") or {}).get("completion_tokens")}

    with ThreadPoolExecutor(at_once) as pool:
        results = list(pool.map(one, prompts))
    metrics.wait_idle(ctx.server.url)
    after = metrics.read_all(ctx.server.url)
    # One event per answer that came back with text; the status is the first of the batch that is not 2xx.
    return capture.results(
        "requests", [r for r in results if r["text"]], statuses=[r["status"] for r in results], results=results,
        preemptions=after.get("vllm:num_preemptions_total", 0) - before.get("vllm:num_preemptions_total", 0),
        prompt_tokens=after.get("vllm:prompt_tokens_total", 0) - before.get("vllm:prompt_tokens_total", 0))


def collect(ctx) -> dict:
    from verify.measure import metrics
    info = next(k for k in metrics.read_all(ctx.server.url) if k.startswith("vllm:cache_config_info"))
    field = lambda name: info.split(f'{name}="')[1].split('"')[0]
    prompts = [f"Story number {i}: once upon a time" for i in range(REQUESTS)]
    return {"num_blocks": int(field("num_gpu_blocks")), "block_size": int(field("block_size")),
            "loaded": _batch(ctx, prompts, REQUESTS), "reference": _batch(ctx, prompts, REFERENCE_AT_ONCE)}


def decide_preempted(d):
    need = REQUESTS * -(-(MAX_TOKENS + 16) // d["block_size"])
    n = d["loaded"]["preemptions"]
    return verdict_if(n > 0, f"{REQUESTS} requests of about {MAX_TOKENS} tokens each need about {need} blocks; the cache "
                             f"has {d['num_blocks']}: {n:.0f} preemptions counted")


def decide_all_finish(d):
    results = d["loaded"]["results"]
    done = [r for r in results if r["finish_reason"] == "length" and r["completion_tokens"] == MAX_TOKENS]
    return verdict_if(len(done) == len(results), f"{len(done)} of {len(results)} requests finished with all "
                                                 f"{MAX_TOKENS} tokens (finish_reason length), none refused")


def decide_same_output(d):
    if d["reference"]["preemptions"]:
        return Verdict(INCONCLUSIVE, f"the reference run was preempted too ({d['reference']['preemptions']:.0f} times)")
    same = sum(a["text"] == b["text"] for a, b in zip(d["loaded"]["results"], d["reference"]["results"]))
    return verdict_if(same == REQUESTS, f"{same} of {REQUESTS} greedy answers identical with preemption and without "
                                        f"(reference: {REFERENCE_AT_ONCE} at a time, 0 preemptions)")


JOB = Job(
    id="kv-preemption",
    title="When the KV cache is too small for the load",
    question="With a KV cache too small for the requests running at once, are requests preempted, do they all still "
             "finish, and do greedy answers change?",
    pages=("kv-cache.md",),
    variant="tiny-kv-cache",
    collect=collect,
    claims=(
        Claim("kv-preemption.preempted", "When running requests need more blocks than the cache has, the engine "
              "preempts some of them (vllm:num_preemptions_total rises).", decide_preempted),
        Claim("kv-preemption.all-finish", "Preempted requests are not failed: every request still finishes with "
              "all its tokens.", decide_all_finish),
        Claim("kv-preemption.greedy-unchanged", "Preemption does not change greedy answers.", decide_same_output),
    ),
)
