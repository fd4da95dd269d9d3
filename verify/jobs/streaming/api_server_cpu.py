"""What streaming costs the API server: CPU time per generated token, streamed and not, at two concurrencies.

The server's processes are read with the Lifecycle article's snippet before and
after each batch of requests: the API server (the process listening on the
port) and the engine (engine core and worker). The same requests run with and
without streaming; CPU seconds are divided by the tokens the engine generated.
The snippet's CPU times come in clock ticks of 10 ms, too coarse for the API
server's share of a few requests (a dozen non-streamed requests spanned 14-34
ticks), so the API server's CPU is read from the kernel's CPU clock of that
process (verify/measure/cpu_clock.py), to the nanosecond; the engine's, hundreds
of ticks a batch, from the snippet. One batch can be far off (a single fresh run
once measured the non-streamed batch at twice its usual cost), so the batches run
in up to ROUNDS interleaved pairs and the rule decides on the median of the paired
ratios. The rounds stop once the rest could not move that median across its
threshold (more than half of ROUNDS ratios on one side at every concurrency).
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median
from verify.job import Claim, Job, verdict_if

SNIPPET = "lifecycle/server_processes.py"
MAX_TOKENS = 48
# concurrency: requests in all (rounds of `concurrency` requests at once). The rule reads CPU per token, and the
# API server's is read by its process clock to the nanosecond, so one at a time needs no third request.
LEVELS = {1: 2, 8: 8}
# "Small beside the engine": the API server's CPU per token below this share of the engine's.
SMALL_SHARE = 0.25
# Paired rounds of the four batches; which mode runs first alternates between rounds.
ROUNDS = 3
# "Costs more": the median paired ratio (streamed / not streamed) above 1 + this, at every concurrency.
MORE_MARGIN = 0.10


def _batch(ctx, snippet, stream: bool, concurrency: int, total: int, round_: int) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from verify.measure import capture, metrics
    metrics.wait_idle(ctx.server.url)
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story."}],
            "max_tokens": MAX_TOKENS, "ignore_eos": True, "stream": stream}

    def one(_):
        """A request's status and what came back: its answer, or its stream's data lines."""
        with httpx.Client(timeout=120) as client:
            if not stream:
                r = client.post(ctx.base_url + "/chat/completions", json=body)
                answer = capture.body(r)
                return r.status_code, [answer] if answer else []
            with client.stream("POST", ctx.base_url + "/chat/completions", json=body) as r:
                return r.status_code, [line for line in r.iter_lines() if line.startswith("data: ")]

    from verify.measure.cpu_clock import process_cpu_s
    before_m = metrics.read(ctx.server.url)
    before = snippet.server_processes(ctx.server.port)
    api_pid = before[0]["pid"]  # the snippet lists the listener first
    clock = {"pid": api_pid, "before_s": process_cpu_s(api_pid)}
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, range(total)))
    # Read right away: polling /metrics until idle would add the API server's own work to the count.
    clock["after_s"] = process_cpu_s(api_pid)
    after = snippet.server_processes(ctx.server.port)
    metrics.wait_idle(ctx.server.url)
    generated = metrics.read(ctx.server.url)["vllm:generation_tokens_total"] - before_m["vllm:generation_tokens_total"]
    return capture.results("requests", [item for _, items in results for item in items],
                           statuses=[s for s, _ in results],
                           stream=stream, concurrency=concurrency, requests=total, generated_tokens=generated,
                           round=round_,
                           before=before, after=after, api_clock=clock)


def collect(ctx) -> dict:
    snippet = ctx.snippet(SNIPPET)
    order = ((False, True), (True, False))
    d: dict = {"batches": []}
    for r in range(ROUNDS):
        d["batches"] += [_batch(ctx, snippet, stream, c, n, r) for c, n in LEVELS.items() for stream in order[r % 2]]
        d["stopped"] = settled(d)
        if d["stopped"]["settled"]:
            break
    return d


def settled(d) -> dict:
    """Whether the rounds still to run could change the verdict: at every concurrency, whatever they measure,
    the median of ROUNDS ratios would stay on the side of the threshold it is on."""
    from verify.measure.trials import median_range
    rounds = len({b["round"] for b in d["batches"]})
    sides = {}
    for c in LEVELS:
        lo, hi = median_range(paired_ratios(d, c), ROUNDS)
        sides[c] = "above" if lo > 1 + MORE_MARGIN else "not above" if hi <= 1 + MORE_MARGIN else None
    done = all(sides.values()) or rounds >= ROUNDS
    return {"rounds": rounds, "max_rounds": ROUNDS, "settled": done,
            "why": "; ".join(f"concurrency {c}: {s or 'open'}" for c, s in sides.items())}


def cpu_per_token_ms(batch: dict) -> dict[str, float]:
    """CPU milliseconds per generated token: the API server (the listener, by its process clock) and the
    engine (everything the listener started, by the snippet's readings)."""
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    used = [(p, p["cpu_s"] - before.get(p["pid"], 0.0)) for p in batch["after"]]
    api = api_cpu_s(batch)
    engine = sum(cpu for p, cpu in used[1:] if "EngineCor" in p["name"] or "Worker" in p["name"]
                 or "EngineCore" in p["cmdline"] or "Worker" in p["cmdline"])
    tokens = batch["generated_tokens"]
    return {"api": round(api / tokens * 1000, 3), "engine": round(engine / tokens * 1000, 3)}


def batches_of(d, stream: bool, concurrency: int) -> list[dict]:
    """The batches of one mode and concurrency, in round order."""
    return sorted((b for b in d["batches"] if b["stream"] == stream and b["concurrency"] == concurrency),
                  key=lambda b: b["round"])


def api_cpu_s(batch: dict) -> float:
    """The API server's CPU seconds over the batch, by its process clock; a batch read without it, or with
    the clock of another process than the listener the snippet found, cannot say."""
    clock = batch.get("api_clock")
    if not clock:
        raise ValueError("the batch has no reading of the API server's process clock")
    if clock["pid"] != batch["after"][0]["pid"]:
        raise ValueError(f"the process clock read pid {clock['pid']}, the listener is pid {batch['after'][0]['pid']}")
    return clock["after_s"] - clock["before_s"]


def paired_ratios(d, concurrency: int) -> list[float]:
    """Streamed over non-streamed API server CPU per token, one ratio per round."""
    return [cpu_per_token_ms(s)["api"] / cpu_per_token_ms(n)["api"]
            for n, s in zip(batches_of(d, False, concurrency), batches_of(d, True, concurrency), strict=True)]


def decide_streaming_costs_more(d):
    import statistics
    idle = [f"concurrency {b['concurrency']}{', streamed' if b['stream'] else ''}" for b in d["batches"]
            if api_cpu_s(b) <= 0]
    if idle:
        return verdict_if(None, f"the API server's process clock did not move over a batch ({'; '.join(idle)})")
    ratios = {c: paired_ratios(d, c) for c in LEVELS}
    if not all(ratios.values()):
        return verdict_if(None, "a concurrency has no pair of batches to compare")
    stop = settled(d)
    if not stop["settled"]:
        return verdict_if(None, f"{stop['rounds']} of up to {ROUNDS} rounds, which do not settle the median "
                                f"({stop['why']})")
    medians = {c: statistics.median(r) for c, r in ratios.items()}
    return verdict_if(all(m > 1 + MORE_MARGIN for m in medians.values()),
                      "; ".join(f"concurrency {c}: streamed / not streamed API server CPU per token, median "
                                f"{medians[c]:.2f}x over {len(r)} paired batches (each {min(r):.2f}x to {max(r):.2f}x)"
                                for c, r in ratios.items())
                      + f" (threshold {1 + MORE_MARGIN:.2f}x at every concurrency)")


def decide_small_beside_engine(d):
    shares = [cpu_per_token_ms(b) for b in d["batches"]]
    worst = max(v["api"] / v["engine"] for v in shares)
    return verdict_if(worst < SMALL_SHARE, f"the API server's CPU per token was at most {worst * 100:.1f} % of the "
                                           f"engine's (threshold {SMALL_SHARE * 100:.0f} %), over "
                                           f"{len(shares)} batches")


# --- headline figures

def _median_cpu_per_token_ms(d, stream: bool, concurrency: int, part: str) -> float:
    """The median over the job's rounds of one mode and concurrency."""
    return median(cpu_per_token_ms(b)[part] for b in d["batches"]
                  if b["stream"] == stream and b["concurrency"] == concurrency)


HEADLINE = Headline({
    "API server CPU per generated token, one request at a time, not streamed":
        lambda d: _median_cpu_per_token_ms(d, False, min(LEVELS), "api"),
    "API server CPU per generated token, one request at a time, streamed":
        lambda d: _median_cpu_per_token_ms(d, True, min(LEVELS), "api"),
    f"API server CPU per generated token, {max(LEVELS)} requests at once, streamed":
        lambda d: _median_cpu_per_token_ms(d, True, max(LEVELS), "api"),
    "engine CPU per generated token, one request at a time, streamed":
        lambda d: _median_cpu_per_token_ms(d, True, min(LEVELS), "engine"),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")

JOB = Job(
    id="api-server-cpu",
    title="What streaming costs the API server",
    question="How much CPU does the API server process spend per generated token, with and without streaming, "
             "next to the engine's?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("api-server-cpu.streaming-costs-more", "Streaming costs the API server more CPU per generated token "
              f"than the same requests without streaming: the median of the paired batches (up to {ROUNDS}, fewer once "
              f"the rest could not change the verdict) is more than {MORE_MARGIN:.0%} higher at each concurrency.",
              decide_streaming_costs_more, timing=True),
        Claim("api-server-cpu.small-beside-engine", "On the embedded CPU profile, the API server's CPU per token is a "
              "small fraction of the engine's.", decide_small_beside_engine, timing=True),
    ),
    headline=HEADLINE,
)
