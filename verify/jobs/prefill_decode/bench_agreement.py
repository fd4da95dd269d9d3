"""The harness's TTFT and ITL against vLLM's own serving benchmark, on the same server and lengths.

The harness sends up to REQUESTS requests one at a time, after both benchmark runs, and the rules
compare the median of their TTFT and ITL with the benchmark's. The requests stop once the ones still
to come could not move either median across its tolerance, whatever they measure (after
more than half of REQUESTS at the earliest: with fewer, the median of REQUESTS is not bounded); the record keeps why they
stopped, and a rule given fewer requests than that settles is inconclusive.
"""

from __future__ import annotations

from verify.headline import Headline, ms
from verify.job import Claim, Job, verdict_if

BENCH = "prefill-decode/vllm_bench.py"
HARNESS = "prefill-decode/ttft_by_length.py"
REQUESTS = 5
OUTPUT_LEN = 32
INPUT_LEN = 128  # random tokens, to which the chat template adds its own
HARNESS_SENTENCES = 8  # about the same prompt length, counted by the server
TTFT_AGREEMENT = 0.25
ITL_AGREEMENT = 0.15
# A rerun "served from cache": its median TTFT at most this share of the first run's.
SAME_SEED_SHARE = 0.6


def collect(ctx) -> dict:
    import json
    import os
    import subprocess
    import sys
    import tempfile
    import time

    from openai import OpenAI

    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    harness = ctx.snippet(HARNESS)
    script = ctx.snippet_path(BENCH)
    import httpx
    # The server names its model's folder (or hub id) as the model's root: the benchmark's tokenizer.
    root = httpx.get(ctx.base_url + "/models", timeout=10).json()["data"][0].get("root")
    tokenizer = root if root and os.path.isdir(root) else None
    out = os.path.join(tempfile.mkdtemp(), "bench.json")
    seed = time.time_ns() % 1_000_000  # fresh prompts: nothing for the prefix cache to serve
    wait_idle(ctx.server.url)

    def run_bench() -> dict:
        bench = {"seed": seed, "input_len": INPUT_LEN, "output_len": OUTPUT_LEN}
        if tokenizer is None:
            return capture.results("command", [], **bench, exit_code=None, lines=[],
                                   error="the server's model folder is not on this machine: the benchmark needs it "
                                         "as its tokenizer")
        env = {**os.environ, "BASE_URL": ctx.base_url, "OUT": out, "SEED": str(seed), "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run([sys.executable, str(script), tokenizer], env=env, capture_output=True, text=True,
                              timeout=600)
        lines = [{"t": 0, "line": line} for line in proc.stdout.splitlines() if line.strip()]
        result = None
        if proc.returncode == 0:
            with open(out) as f:
                result = {k: v for k, v in json.load(f).items() if not isinstance(v, list)}
        wait_idle(ctx.server.url)
        return capture.results("command", lines, **bench, exit_code=proc.returncode, lines=lines, result=result)

    bench = run_bench()
    # The same command again, same seed: the same random prompts, now in the prefix cache.
    same_seed_again = run_bench()
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    d = {"bench": bench, "harness": [], "same_seed_again": same_seed_again}
    for i in range(REQUESTS):
        r = harness.measure(client, harness.prompt_of(HARNESS_SENTENCES, f"harness {seed} {i}"), max_tokens=OUTPUT_LEN)
        # measure() returns the number of text chunks that arrived, not the chunks themselves.
        d["harness"].append(capture.results("timed-request", range(r["chunks"]), **r))
        d["stopped"] = settled(d)
        if d["stopped"]["settled"]:
            break
    return d


TOLERANCES = {"ttft": TTFT_AGREEMENT, "itl": ITL_AGREEMENT}


def _side(d, key: str) -> str | None:
    """Where the harness's median of REQUESTS lies against the benchmark's figure, whatever the requests
    not yet run measure: "agrees", "apart", or None while the requests run so far leave it open."""
    from verify.measure.trials import median_range
    b = d["bench"].get("result")
    h = d["harness"]
    if not b or not h or b.get(f"median_{key}_ms") is None:
        return None
    ref, tol = b[f"median_{key}_ms"] / 1000, TOLERANCES[key]
    lo, hi = median_range([r[key] for r in h], REQUESTS)
    if lo >= ref * (1 - tol) and hi <= ref * (1 + tol):
        return "agrees"
    if hi < ref * (1 - tol) or lo > ref * (1 + tol):
        return "apart"
    return None


def settled(d) -> dict:
    """Whether the harness requests still to run could change a verdict: for TTFT and ITL, whatever they
    measure, the median of REQUESTS stays on the side of the tolerance it is on."""
    sides = {key: _side(d, key) for key in TOLERANCES}
    n = len(d["harness"])
    return {"requests": n, "max_requests": REQUESTS, "settled": all(sides.values()) or n >= REQUESTS,
            "why": "; ".join(f"{key.upper()}: {s or 'open'}" for key, s in sides.items())}


def figures(d) -> dict:
    from statistics import median
    b = d["bench"]["result"]
    h = d["harness"]
    return {"bench_ttft": b["median_ttft_ms"] / 1000, "bench_itl": b["median_itl_ms"] / 1000,
            "bench_prompt_tokens": b["total_input_tokens"] / b["completed"],
            "harness_ttft": median(r["ttft"] for r in h), "harness_itl": median(r["itl"] for r in h),
            "harness_prompt_tokens": median(r["prompt_tokens"] for r in h)}


def _agree(d, key, tolerance, label):
    n = len(d["harness"])
    if n < REQUESTS and _side(d, key) is None:
        return verdict_if(None, f"{n} of up to {REQUESTS} harness requests, which do not settle the median {label} "
                                f"against the tolerance ({tolerance:.0%})")
    f = figures(d)
    a, b = f[f"harness_{key}"], f[f"bench_{key}"]
    diff = abs(a - b) / b
    n = len(d["harness"])
    stopped = (f"; {n} of up to {REQUESTS} harness requests, the rest could not have moved their median across the "
               f"tolerance" if n < REQUESTS else "")
    return verdict_if(diff <= tolerance, f"median {label}: harness {a * 1000:.1f} ms ({f['harness_prompt_tokens']:.0f}-token "
                                         f"prompts), vllm bench serve {b * 1000:.1f} ms ({f['bench_prompt_tokens']:.0f}-token "
                                         f"prompts): {diff:.0%} apart (tolerance {tolerance:.0%}{stopped})")


def decide_same_seed(d):
    first, again = d["bench"]["result"]["median_ttft_ms"], d["same_seed_again"]["result"]["median_ttft_ms"]
    share = again / first
    return verdict_if(share <= SAME_SEED_SHARE, f"vllm bench serve, seed {d['bench']['seed']}: median TTFT {first:.0f} ms; "
                                                f"run again with the same seed: {again:.0f} ms ({share:.0%}; cached means at "
                                                f"most {SAME_SEED_SHARE:.0%})")


# --- headline figures

HEADLINE = Headline({
    "vllm bench serve: time to first token, median": lambda d: ms(figures(d)["bench_ttft"]),
    "vllm bench serve: inter-token latency, median": lambda d: ms(figures(d)["bench_itl"]),
    "harness: time to first token, median": lambda d: ms(figures(d)["harness_ttft"]),
    "harness: inter-token latency, median": lambda d: ms(figures(d)["harness_itl"]),
    "vllm bench serve: time to first token run again with the same seed (prefix cache), median":
        lambda d: d["same_seed_again"]["result"]["median_ttft_ms"],
}, TTFT_AGREEMENT, "the job's own threshold for two measurements of one TTFT to agree, TTFT_AGREEMENT", "ms")

JOB = Job(
    id="bench-agreement",
    title="The harness against vllm bench serve",
    question="How do the harness's TTFT and inter-token figures compare with vLLM's own serving benchmark on the same "
             "server, prompt length and output length?",
    pages=("prefill-decode.md",),
    collect=collect,
    claims=(
        Claim("bench-agreement.ttft-agrees", "The harness's time to first token agrees with vllm bench serve's on "
              "the same server and prompt length.", lambda d: _agree(d, "ttft", TTFT_AGREEMENT, "TTFT")),
        Claim("bench-agreement.itl-agrees", "The harness's inter-token latency agrees with vllm bench serve's.",
              lambda d: _agree(d, "itl", ITL_AGREEMENT, "ITL")),
        Claim("bench-agreement.same-seed-is-cached", "vllm bench serve run twice against one server with the same seed "
              "sends the same random prompts, and the second run's TTFT comes mostly from the prefix cache.",
              decide_same_seed),
    ),
    headline=HEADLINE,
)
