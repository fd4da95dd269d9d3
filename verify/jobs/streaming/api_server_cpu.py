"""What streaming costs the API server: CPU time per generated token, streamed and not, at two concurrencies.

The server's processes are read with the Lifecycle article's snippet before and
after each batch of requests: the API server (the process listening on the
port) and the engine (engine core and worker). The same requests run with and
without streaming; CPU seconds are divided by the tokens the engine generated.
The kernel counts CPU time in clock ticks of 10 ms, so each batch is made large
enough that the API server's CPU spans many ticks, and a batch that spans fewer
than MIN_TICKS cannot settle the comparison.
"""

from __future__ import annotations

from verify.site import html as render
from verify.job import Claim, Job, verdict_if

SNIPPET = "lifecycle/server_processes.py"
MAX_TOKENS = 48
# concurrency: requests in all (rounds of `concurrency` requests at once)
LEVELS = {1: 12, 8: 32}
# CPU time is counted in 10 ms ticks (USER_HZ 100): fewer than this many ticks of API server
# CPU in a batch is too coarse to compare two batches.
TICK_S, MIN_TICKS = 0.01, 20
# "Small beside the engine": the API server's CPU per token below this share of the engine's.
SMALL_SHARE = 0.25


def _batch(ctx, snippet, stream: bool, concurrency: int, total: int) -> dict:
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

    before_m = metrics.read(ctx.server.url)
    before = snippet.server_processes(ctx.server.port)
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, range(total)))
    # Read right away: polling /metrics until idle would add the API server's own work to the count.
    after = snippet.server_processes(ctx.server.port)
    metrics.wait_idle(ctx.server.url)
    generated = metrics.read(ctx.server.url)["vllm:generation_tokens_total"] - before_m["vllm:generation_tokens_total"]
    return capture.results("requests", [item for _, items in results for item in items],
                           statuses=[s for s, _ in results],
                           stream=stream, concurrency=concurrency, requests=total, generated_tokens=generated,
                           before=before, after=after)


def collect(ctx) -> dict:
    snippet = ctx.snippet(SNIPPET)
    return {"batches": [_batch(ctx, snippet, stream, c, n) for c, n in LEVELS.items() for stream in (False, True)]}


def cpu_per_token_ms(batch: dict) -> dict[str, float]:
    """CPU milliseconds per generated token: the API server (listener) and the engine (everything it started)."""
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    used = [(p, p["cpu_s"] - before.get(p["pid"], 0.0)) for p in batch["after"]]
    api = used[0][1]  # the snippet lists the listener first
    engine = sum(cpu for p, cpu in used[1:] if "EngineCor" in p["name"] or "Worker" in p["name"]
                 or "EngineCore" in p["cmdline"] or "Worker" in p["cmdline"])
    tokens = batch["generated_tokens"]
    return {"api": round(api / tokens * 1000, 3), "engine": round(engine / tokens * 1000, 3)}


def _by(d, stream: bool, concurrency: int) -> dict:
    return next(b for b in d["batches"] if b["stream"] == stream and b["concurrency"] == concurrency)


def api_cpu_s(batch: dict) -> float:
    return cpu_per_token_ms(batch)["api"] * batch["generated_tokens"] / 1000


def decide_streaming_costs_more(d):
    coarse = [f"concurrency {b['concurrency']}{', streamed' if b['stream'] else ''}: {api_cpu_s(b) * 1000:.0f} ms"
              for b in d["batches"] if api_cpu_s(b) < MIN_TICKS * TICK_S]
    if coarse:
        return verdict_if(None, f"the API server's CPU in a batch spans fewer than {MIN_TICKS} clock ticks of "
                                f"{TICK_S * 1000:.0f} ms ({'; '.join(coarse)}): too coarse to compare")
    pairs = {c: (cpu_per_token_ms(_by(d, False, c))["api"], cpu_per_token_ms(_by(d, True, c))["api"]) for c in LEVELS}
    return verdict_if(all(s > n for n, s in pairs.values()),
                      "; ".join(f"concurrency {c}: {n:.2f} ms of API server CPU per token without streaming, "
                                f"{s:.2f} ms streamed" for c, (n, s) in pairs.items()))


def decide_small_beside_engine(d):
    shares = {(b["concurrency"], b["stream"]): cpu_per_token_ms(b) for b in d["batches"]}
    worst = max(v["api"] / v["engine"] for v in shares.values())
    return verdict_if(worst < SMALL_SHARE, f"the API server's CPU per token was at most {worst * 100:.0f} % of the "
                                           f"engine's (threshold {SMALL_SHARE * 100:.0f} %), over "
                                           f"{len(shares)} batches")


def fragment(record):
    rows = []
    for b in record["data"]["batches"]:
        c = cpu_per_token_ms(b)
        rows.append([b["concurrency"], "yes" if b["stream"] else "no", b["requests"], f"{b['generated_tokens']:.0f}",
                     f"{c['api']:.2f} ms", f"{c['engine']:.2f} ms", f"{c['api'] / c['engine'] * 100:.0f} %"])
    return render.table(["concurrency", "streamed", "requests", "tokens generated", "API server CPU per token",
                         "engine CPU per token (core + worker)", "API server / engine"], rows)


JOB = Job(
    id="api-server-cpu",
    title="What streaming costs the API server",
    question="How much CPU does the API server process spend per generated token, with and without streaming, "
             "next to the engine's?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("api-server-cpu.streaming-costs-more", "Streaming costs the API server more CPU per generated token "
              "than the same requests without streaming.", decide_streaming_costs_more),
        Claim("api-server-cpu.small-beside-engine", "On the embedded CPU profile, the API server's CPU per token is a "
              "small fraction of the engine's.", decide_small_beside_engine),
    ),
    fragments={"table": fragment},
)
