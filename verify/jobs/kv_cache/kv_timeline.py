"""KV cache usage over time under a few overlapping requests, and what usage counts once they end.

Four streams start a second apart, each generating a different number of
tokens; the engine's metrics are sampled every 50 ms until it is idle. Then the
first request's prompt is sent again: its blocks are still cached (a prefix
hit) although usage reads zero.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

PROMPT_TOKENS = 300
STAGGER_S = 1.0
# Each crosses one 128-token block boundary as it generates (301 + 84 tokens fill three blocks), and the
# shortest early one still runs well after the fourth starts (at 300/200/250/150 they ran 7 to 25 s).
MAX_TOKENS = (180, 120, 150, 90)


def collect(ctx) -> dict:
    import threading
    import time
    import uuid

    import httpx

    from verify.measure import capture, metrics
    from verify.measure.prompts import exact_prompt
    with httpx.Client(timeout=120) as client:
        block = next(k for k in metrics.read_all(ctx.server.url) if k.startswith("vllm:cache_config_info"))
        num_blocks = int(block.split('num_gpu_blocks="')[1].split('"')[0])
        salt = uuid.uuid4().hex  # keeps earlier runs' cache out of it
        prompts = [f"{i} " + exact_prompt(ctx.server.url, client, PROMPT_TOKENS) for i in range(len(MAX_TOKENS))]
    metrics.wait_idle(ctx.server.url)
    results: list[dict] = [{} for _ in MAX_TOKENS]
    sampler = metrics.Sampler(ctx.server.url)
    sampler.start()

    def run(i):
        body = {"model": "chat", "prompt": prompts[i], "max_tokens": MAX_TOKENS[i], "temperature": 0,
                "ignore_eos": True, "cache_salt": salt}
        start = time.perf_counter() - sampler.t0
        try:
            r = httpx.post(ctx.base_url + "/completions", json=body, timeout=300)
        except httpx.HTTPError as e:  # no answer: a failed capture, not a request missing from the record
            results[i] = capture.no_response("request", e, started_s=round(start, 3),
                                             ended_s=round(time.perf_counter() - sampler.t0, 3), usage=None)
            return
        results[i] = capture.response(r, started_s=round(start, 3), ended_s=round(time.perf_counter() - sampler.t0, 3),
                                      usage=(capture.body(r) or {}).get("usage") if r.status_code == 200 else None)

    threads = []
    for i in range(len(MAX_TOKENS)):
        threads.append(threading.Thread(target=run, args=(i,)))
        threads[-1].start()
        time.sleep(STAGGER_S)
    for t in threads:
        t.join()
    metrics.wait_idle(ctx.server.url)
    time.sleep(0.3)
    sampler.stop()
    before = metrics.read_all(ctx.server.url)
    again = httpx.post(ctx.base_url + "/completions", json={"model": "chat", "prompt": prompts[0], "max_tokens": 1,
                                                             "temperature": 0, "cache_salt": salt}, timeout=60)
    metrics.wait_idle(ctx.server.url)
    after = metrics.read_all(ctx.server.url)
    return {"num_blocks": num_blocks, "requests": results, "samples": sampler.samples,
            "usage_after": sampler.samples[-1]["kv_cache_usage_perc"],
            "again": capture.response(again, hits=after.get("vllm:prefix_cache_hits_total", 0)
                                      - before.get("vllm:prefix_cache_hits_total", 0))}


def blocks_at(d, usage) -> int:
    return round(usage * d["num_blocks"])


def decide_rises_and_returns(d):
    peak = max(blocks_at(d, s["kv_cache_usage_perc"]) for s in d["samples"])
    most_running = max(s["num_requests_running"] for s in d["samples"])
    after = blocks_at(d, d["usage_after"])
    return verdict_if(peak > 0 and after == 0 and most_running == len(MAX_TOKENS),
                      f"up to {most_running:.0f} requests running at once; usage peaked at {peak} of {d['num_blocks']} "
                      f"blocks and read {after} blocks once the last request had ended")


def decide_cached_not_counted(d):
    return verdict_if(blocks_at(d, d["usage_after"]) == 0 and d["again"]["hits"] > 0,
                      f"usage read {d['usage_after'] * 100:.2f} % after the requests ended, yet sending the first "
                      f"prompt again hit {d['again']['hits']:.0f} cached tokens")


JOB = Job(
    id="kv-timeline",
    title="KV cache usage over time",
    question="What does KV cache usage do while a few requests overlap, and what does it count once they end?",
    pages=("kv-cache.md",),
    collect=collect,
    claims=(
        Claim("kv-timeline.rises-and-returns", "Usage rises with each running request and is back to zero when the "
              "last one ends.", decide_rises_and_returns, timing=True),
        Claim("kv-timeline.cached-not-counted", "Blocks kept for prefix caching do not count as used: usage reads zero "
              "while a finished request's prompt still hits the cache.", decide_cached_not_counted),
    ),
)
