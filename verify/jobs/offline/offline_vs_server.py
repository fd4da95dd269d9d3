"""The same batch through the offline engine and through the server: limits, throughput, start-up.

An offline job that also starts the profile's server (after its own engine is shut
down: one engine at a time). The offline engine's scheduling limits are read from
the engine object; the server's are observed: more requests in flight than it runs,
with /metrics sampled every 50 ms. The page's snippet runs the same greedy batch
through both, TRIALS times each. For the start-up figures each engine is started
TRIALS times from a fresh process, on the same clock: from launching Python to a
constructed vllm.LLM, and from launching the server to its first healthy /health.
"""

from __future__ import annotations

import os

from verify.job import OFFLINE, Claim, Job, verdict_if
from verify.measure.stats import summary
from verify.site import html as render

SNIPPET = "offline/same_batch_two_ways.py"
PROMPTS = 160  # more than the server's default max_num_seqs on CPU (128), fewer than the offline engine's (256)
MAX_TOKENS = 16
TRIALS = 3
# Throughput: the offline engine "at least matches" the server when its median is no more than this much lower.
THROUGHPUT_TOLERANCE = 0.10
# Start-up: "sooner" when the slowest offline start beats the fastest server start.
READY = "VERIFY-LLM-READY"


def _prompts() -> list[str]:
    return [f"Write a short story about the number {i}." for i in range(PROMPTS)]


def _fresh_offline_start(ctx) -> float:
    """Seconds from launching a new Python process to a constructed vllm.LLM, imports included."""
    import json
    import sys
    import tempfile
    import time
    from pathlib import Path

    from verify.errors import VerifyError
    from verify.live import processes
    code = ("import json, sys\nfrom vllm import LLM\nLLM(model=sys.argv[1], **json.loads(sys.argv[2]))\n"
            f"print({READY!r}, flush=True)\nimport time\ntime.sleep(600)\n")
    log = Path(tempfile.mkdtemp(prefix="vllm-offline-start-")) / "start.log"
    argv = [sys.executable, "-c", code, ctx.model_path, json.dumps(ctx.profile.offline_args())]
    t0 = time.monotonic()
    proc = processes.spawn(argv, log, env={**os.environ, **ctx.profile.env, "PYTHONUNBUFFERED": "1"})
    try:
        while READY not in log.read_text("utf-8", "replace"):
            if proc.poll() is not None or time.monotonic() - t0 > 300:
                raise VerifyError("a fresh vllm.LLM did not start", detail=log.read_text("utf-8", "replace")[-2000:])
            time.sleep(0.1)
        return round(time.monotonic() - t0, 2)
    finally:
        processes.stop_group(proc)


def collect(ctx) -> dict:
    import asyncio
    import time

    import httpx

    from verify.measure import metrics
    snippet = ctx.snippet(SNIPPET)
    prompts = _prompts()
    offline = {"trials": []}
    llm = ctx.llm()
    sched = llm.llm_engine.vllm_config.scheduler_config
    offline["limits"] = {"max_num_seqs": sched.max_num_seqs, "max_num_batched_tokens": sched.max_num_batched_tokens}
    snippet.through_llm(llm, ["Warm up."], 4)  # one-off costs stay out of the timing
    for _ in range(TRIALS):
        seconds, texts = snippet.through_llm(llm, prompts, MAX_TOKENS)
        offline["trials"].append({"capture": "offline-generate", "events": len(texts), "error": None,
                                  "seconds": round(seconds, 3), "texts": texts})
    ctx.close_llm()
    offline["starts_s"] = [_fresh_offline_start(ctx) for _ in range(TRIALS)]
    server = {"trials": [], "starts_s": []}
    for start in range(TRIALS):
        with ctx.server() as srv:
            server["starts_s"].append(srv.start_seconds)
            if start > 0:
                continue
            model = httpx.get(srv.api + "/models", timeout=10).json()["data"][0]["id"]
            asyncio.run(snippet.through_server(srv.api, model, ["Warm up."], 4))
            for _ in range(TRIALS):
                metrics.wait_idle(srv.url)
                sampler = metrics.Sampler(srv.url)
                sampler.start()
                error, texts, t0 = None, [], time.perf_counter()
                try:
                    seconds, texts = asyncio.run(snippet.through_server(srv.api, model, prompts, MAX_TOKENS))
                except Exception as e:  # noqa: BLE001 - a failed request makes the trial a failed capture
                    error, seconds = f"{type(e).__name__}: {e}", time.perf_counter() - t0
                finally:
                    sampler.stop()
                samples = sampler.samples
                server["trials"].append({
                    "capture": "server-batch", "events": len(texts), "error": error, "seconds": round(seconds, 3),
                    "texts": texts,
                    "peak_running": max((s["num_requests_running"] for s in samples), default=None),
                    "peak_waiting": max((s["num_requests_waiting"] for s in samples), default=None),
                    "peak_kv_usage": max((s["kv_cache_usage_perc"] for s in samples), default=None),
                    "samples": len(samples)})
    return {"prompts": PROMPTS, "max_tokens": MAX_TOKENS, "offline": offline, "server": server}


def throughput(trial: dict, d: dict) -> float:
    return d["prompts"] * d["max_tokens"] / trial["seconds"]


def medians(d: dict) -> tuple[float, float]:
    return (summary([throughput(t, d) for t in d["offline"]["trials"]])["median"],
            summary([throughput(t, d) for t in d["server"]["trials"]])["median"])


def decide_server_cap(d):
    t = d["server"]["trials"]
    running, waiting, kv = max(x["peak_running"] for x in t), max(x["peak_waiting"] for x in t), \
        max(x["peak_kv_usage"] for x in t)
    # Requests wait although the cache would hold them all (usage scaled from the running ones
    # to every prompt stays under 100 %): the cap is the sequence limit, not memory.
    fits = running > 0 and kv * d["prompts"] / running < 1.0
    return verdict_if(running < d["prompts"] and waiting > 0 and fits,
                      f"{d['prompts']} requests in flight: at most {running:.0f} running at once, up to "
                      f"{waiting:.0f} waiting, KV cache at most {kv:.0%} used (all {d['prompts']} would take "
                      f"about {kv * d['prompts'] / max(running, 1):.0%})")


def decide_larger_limits(d):
    served = max(x["peak_running"] for x in d["server"]["trials"])
    limit = d["offline"]["limits"]["max_num_seqs"]
    return verdict_if(limit >= d["prompts"] > served,
                      f"offline engine built with max_num_seqs={limit} (max_num_batched_tokens="
                      f"{d['offline']['limits']['max_num_batched_tokens']}), above the {d['prompts']} prompts; the server "
                      f"ran at most {served:.0f} at once")


def decide_throughput(d):
    off, srv = medians(d)
    return verdict_if(off >= srv * (1 - THROUGHPUT_TOLERANCE),
                      f"median of {TRIALS}: offline {off:.0f} tokens/s, server {srv:.0f} tokens/s "
                      f"(offline/server {off / srv:.2f}; tolerance {THROUGHPUT_TOLERANCE:.0%})")


def decide_starts_sooner(d):
    offline, server = d["offline"]["starts_s"], d["server"]["starts_s"]
    return verdict_if(max(offline) < min(server),
                      f"{TRIALS} starts each from a fresh process: offline engine (launch to constructed vllm.LLM) "
                      f"{min(offline):.1f} to {max(offline):.1f} s, server (launch to healthy) "
                      f"{min(server):.1f} to {max(server):.1f} s")


def decide_same_outputs(d):
    first = d["offline"]["trials"][0]["texts"]
    differing = [(engine, i) for engine in ("offline", "server") for i, t in enumerate(d[engine]["trials"])
                 if t["texts"] != first]
    return verdict_if(not differing, f"greedy: all {len(first)} answers identical in every trial of both engines"
                      if not differing else f"answers differ from the first offline trial in: {differing}")


def fragment(record) -> str:
    d = record["data"]
    off, srv = d["offline"], d["server"]
    o, s = summary([throughput(t, d) for t in off["trials"]]), summary([throughput(t, d) for t in srv["trials"]])
    b, st = summary(off["starts_s"]), summary(srv["starts_s"])
    rows = [
        ["sequence limit; requests running at once",
         f"limit {off['limits']['max_num_seqs']} (the engine's configuration; running count not observed)",
         f"at most {max(t['peak_running'] for t in srv['trials']):.0f} running, "
         f"up to {max(t['peak_waiting'] for t in srv['trials']):.0f} waiting (observed)"],
        [f"throughput, tokens/s (median of {TRIALS}; min to max)", f"{o['median']:.0f} ({o['min']:.0f} to {o['max']:.0f})",
         f"{s['median']:.0f} ({s['min']:.0f} to {s['max']:.0f})"],
        [f"start-up from a fresh process, s (median of {TRIALS}; min to max)",
         f"{b['median']:.1f} ({b['min']:.1f} to {b['max']:.1f}), launch to constructed",
         f"{st['median']:.1f} ({st['min']:.1f} to {st['max']:.1f}), launch to healthy"],
    ]
    return render.table([f"{d['prompts']} prompts x {d['max_tokens']} tokens", "vllm.LLM, one generate()",
                         "server, every request at once"], rows)


JOB = Job(
    id="offline-vs-server",
    title="The same batch through the offline engine and the server",
    question="Does a batch job get more from vllm.LLM than from a server given every request at once, and what "
             "does each engine cost to start?",
    pages=("offline.md",),
    engine=OFFLINE,
    collect=collect,
    claims=(
        Claim("offline-vs-server.server-caps-running", f"A server given {PROMPTS} requests at once runs only part "
              "of them at a time; the rest wait in its queue, though its KV cache, at its peak use scaled to every "
              "request, would hold them all.",
              decide_server_cap),
        Claim("offline-vs-server.larger-limits", "The offline engine's sequence limit (max_num_seqs) is above the "
              f"number the server ran at once, and above the {PROMPTS} prompts of the batch.", decide_larger_limits),
        Claim("offline-vs-server.throughput", "For the same batch, the offline engine's throughput is no lower than "
              f"the server's with every request in flight (within {THROUGHPUT_TOLERANCE:.0%}).", decide_throughput),
        Claim("offline-vs-server.same-outputs", "Through either engine, the batch gets the same greedy answers.",
              decide_same_outputs),
        Claim("offline-vs-server.starts-sooner", "From a fresh process, the offline engine is ready sooner than the "
              "server.", decide_starts_sooner),
    ),
    fragments={"table": fragment},
)
