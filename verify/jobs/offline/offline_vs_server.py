"""The same batch through the offline engine and through the server: limits, throughput, start-up.

An offline job with a server phase: the offline part runs in the run's offline
child on the run's shared engine; the server part runs on the run's own default
server (one engine at a time, and no start of its own). The offline engine's
scheduling limits are read from the engine object; the server's are observed:
more requests in flight than it runs, with /metrics sampled every 50 ms. The
page's snippet runs the same greedy batch through both: TRIALS times offline,
and up to TRIALS times through the server, which stops once the rest could not
change the throughput verdict (whatever they measured, the server's median of
TRIALS would stay on its side of the offline median's tolerance). The
start-up figures are the starts the run made anyway, on one clock: the offline
child's launch to its first constructed vllm.LLM (a fresh process), and every
server start of the run before this job, launch to healthy.
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median
from verify.job import OFFLINE, Claim, Job, verdict_if
from verify.measure.stats import summary

SNIPPET = "offline/same_batch_two_ways.py"
PROMPTS = 160  # more than the server's default max_num_seqs on CPU (128), fewer than the offline engine's (256)
MAX_TOKENS = 16
TRIALS = 3
# Throughput: the offline engine "at least matches" the server when its median is no more than this much lower.
THROUGHPUT_TOLERANCE = 0.10
# Start-up: "markedly sooner" when the offline start beats the fastest server start by more than
# this share. Starts of either engine spread by a few seconds from run to run (and from a cold
# to a warm file cache), so a smaller lead is noise, not a difference between the engines.
STARTS_SOONER_BY = 0.25


def _prompts() -> list[str]:
    return [f"Write a short story about the number {i}." for i in range(PROMPTS)]


def collect(ctx) -> dict:
    """The offline part, in the run's offline child."""
    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    prompts = _prompts()
    offline = {"trials": []}
    llm = ctx.llm()
    sched = llm.llm_engine.vllm_config.scheduler_config
    offline["limits"] = {"max_num_seqs": sched.max_num_seqs, "max_num_batched_tokens": sched.max_num_batched_tokens}
    snippet.through_llm(llm, ["Warm up."], 4)  # one-off costs stay out of the timing
    for _ in range(TRIALS):
        seconds, texts = snippet.through_llm(llm, prompts, MAX_TOKENS)
        # One event per answer that holds text.
        offline["trials"].append(capture.results("offline-generate", [t for t in texts if t],
                                                 seconds=round(seconds, 3), texts=texts))
    fresh = ctx.fresh_start
    # The run's start of the offline engine from a fresh process (launch to constructed), if
    # it was of this engine's configuration.
    offline["starts"] = [{"seconds": fresh["fresh_process_start_seconds"], "built_for": fresh["built_for"],
                          "clock": "launch of the child process to a constructed vllm.LLM"}] \
        if fresh and fresh["args"] == ctx.profile.offline_args() else []
    offline["starts_s"] = [s["seconds"] for s in offline["starts"]]
    return {"prompts": PROMPTS, "max_tokens": MAX_TOKENS, "offline": offline}


def server_phase(ctx, data: dict) -> dict:
    """The server part, on the run's default server, after the offline part."""
    import asyncio
    import time

    import httpx

    from verify.measure import capture, metrics
    snippet = ctx.snippet(SNIPPET)
    prompts = _prompts()
    starts = [{"seconds": s["seconds"], "name": s["name"], "clock": s["clock"]}
              for s in ctx.run_starts if s["kind"] == "server"]
    server = {"trials": [], "starts": starts, "starts_s": [s["seconds"] for s in starts]}
    api, url = ctx.base_url, ctx.server.url
    model = httpx.get(api + "/models", timeout=10).json()["data"][0]["id"]
    asyncio.run(snippet.through_server(api, model, ["Warm up."], 4))
    while len(server["trials"]) < TRIALS:
        metrics.wait_idle(url)
        sampler = metrics.Sampler(url)
        sampler.start()
        error, texts, t0 = None, [], time.perf_counter()
        try:
            seconds, texts = asyncio.run(snippet.through_server(api, model, prompts, MAX_TOKENS))
        except Exception as e:  # noqa: BLE001 - a failed request makes the trial a failed capture
            error, seconds = f"{type(e).__name__}: {e}", time.perf_counter() - t0
        finally:
            sampler.stop()
        samples = sampler.samples
        # One event per answer that holds text; the snippet's client raises on an HTTP error (then
        # error is set), and gives no per-request status, so the capture carries none.
        server["trials"].append(capture.results(
            "server-batch", [t for t in texts if t], error=error, seconds=round(seconds, 3),
            texts=texts,
            peak_running=max((s["num_requests_running"] for s in samples), default=None),
            peak_waiting=max((s["num_requests_waiting"] for s in samples), default=None),
            peak_kv_usage=max((s["kv_cache_usage_perc"] for s in samples), default=None),
            samples=len(samples)))
        server["stopped"] = settled({**data, "server": server})
        if server["stopped"]["settled"]:
            break
    return {"server": server}


def settled(d: dict) -> dict:
    """Whether the server trials still to run (up to TRIALS) could change the throughput verdict: the
    offline median at its least against the server's at its greatest (and the other way round), each
    the median TRIALS trials could still reach."""
    from verify.measure.trials import median_range
    off = [throughput(t, d) for t in d["offline"]["trials"]]
    srv = [throughput(t, d) for t in d["server"]["trials"]]
    n = min(len(off), len(srv))
    if n < TRIALS and 2 * n <= TRIALS:
        return {"trials": n, "max_trials": TRIALS, "settled": False, "why": "too few trials to bound a median"}
    (off_lo, off_hi), (srv_lo, srv_hi) = median_range(off, TRIALS), median_range(srv, TRIALS)
    side = True if off_lo >= srv_hi * (1 - THROUGHPUT_TOLERANCE) else \
        False if off_hi < srv_lo * (1 - THROUGHPUT_TOLERANCE) else None
    return {"trials": len(srv), "max_trials": TRIALS, "settled": n >= TRIALS or side is not None,
            "why": f"offline median {off_lo:.0f} to {off_hi:.0f} tokens/s, server median {srv_lo:.0f} to "
                   f"{srv_hi:.0f} tokens/s: {'open' if side is None else 'holds' if side else 'fails'}"}


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
    stop = settled(d)
    if not stop["settled"]:
        return verdict_if(None, f"{len(d['offline']['trials'])} offline and {len(d['server']['trials'])} server "
                                f"trials of up to {TRIALS}, which do not settle the medians ({stop['why']})")
    off, srv = medians(d)
    return verdict_if(off >= srv * (1 - THROUGHPUT_TOLERANCE),
                      f"median of {trials_text(d)}: offline {off:.0f} tokens/s, server {srv:.0f} tokens/s "
                      f"(offline/server {off / srv:.2f}; tolerance {THROUGHPUT_TOLERANCE:.0%})")


def decide_starts_sooner(d):
    offline, server = d["offline"]["starts_s"], d["server"]["starts_s"]
    if not offline or not server:
        return verdict_if(None, f"the run timed {len(offline)} offline and {len(server)} server start(s) from a "
                                "fresh process; both are needed")
    lead = 1 - max(offline) / min(server)
    return verdict_if(lead > STARTS_SOONER_BY,
                      f"the run's starts from a fresh process: offline engine (launch to constructed vllm.LLM) "
                      f"{span_text(offline)} s ({len(offline)} start), {lead:+.0%} against the fastest server start "
                      f"(markedly sooner above {STARTS_SOONER_BY:.0%}); server (launch to healthy) {span_text(server)} s "
                      f"({len(server)} start{'s' if len(server) > 1 else ''}: "
                      f"{', '.join(s['name'] for s in d['server']['starts'])})")


def trials_text(d) -> str:
    """How many trials each engine's median is of: "3", or "3 offline, 2 server"."""
    off, srv = len(d["offline"]["trials"]), len(d["server"]["trials"])
    return f"{off}" if off == srv else f"{off} offline, {srv} server"


def span_text(values: list[float]) -> str:
    return f"{values[0]:.1f}" if len(values) == 1 else f"{min(values):.1f} to {max(values):.1f}"


def decide_same_outputs(d):
    first = d["offline"]["trials"][0]["texts"]
    differing = [(engine, i) for engine in ("offline", "server") for i, t in enumerate(d[engine]["trials"])
                 if t["texts"] != first]
    return verdict_if(not differing, f"greedy: all {len(first)} answers identical in every trial of both engines"
                      if not differing else f"answers differ from the first offline trial in: {differing}")


# --- headline figures

def _offline_throughput(d, engine: str) -> float:
    return median(throughput(t, d) for t in d[engine]["trials"])


# THROUGHPUT_TOLERANCE (10 %) compares the two engines within one run; between runs of one
# release their medians differ by up to about a third.
HEADLINE = Headline({
    "offline engine throughput, median (tokens/s)": lambda d: _offline_throughput(d, "offline"),
    "server throughput, every request in flight, median (tokens/s)": lambda d: _offline_throughput(d, "server"),
    "offline engine start-up, fresh process to constructed vllm.LLM, median (s)":
        lambda d: median(d["offline"]["starts_s"]),
    "server start-up, launch to healthy, median (s)": lambda d: median(d["server"]["starts_s"]),
}, TIMING_TOLERANCE, TIMING_WHY)


JOB = Job(
    id="offline-vs-server",
    title="The same batch through the offline engine and the server",
    question="Does a batch job get more from vllm.LLM than from a server given every request at once, and what "
             "does each engine cost to start?",
    pages=("offline.md",),
    engine=OFFLINE,
    collect=collect,
    server_phase=server_phase,
    claims=(
        Claim("offline-vs-server.server-caps-running", f"A server given {PROMPTS} requests at once runs only part "
              "of them at a time; the rest wait in its queue, though its KV cache, at its peak use scaled to every "
              "request, would hold them all.",
              decide_server_cap, timing=True),
        Claim("offline-vs-server.larger-limits", "The offline engine's sequence limit (max_num_seqs) is above the "
              f"number the server ran at once, and above the {PROMPTS} prompts of the batch.", decide_larger_limits),
        Claim("offline-vs-server.throughput", "For the same batch, the offline engine's throughput is no lower than "
              f"the server's with every request in flight (within {THROUGHPUT_TOLERANCE:.0%}).", decide_throughput,
              timing=True),
        Claim("offline-vs-server.same-outputs", "Through either engine, the batch gets the same greedy answers.",
              decide_same_outputs),
        Claim("offline-vs-server.starts-sooner", "From a fresh process, the offline engine is ready markedly sooner "
              f"than the server (by more than {STARTS_SOONER_BY:.0%}).", decide_starts_sooner, timing=True),
    ),
    headline=HEADLINE,
)
