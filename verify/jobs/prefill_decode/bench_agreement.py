"""The harness's TTFT and ITL against vLLM's own serving benchmark, on the same server and lengths.

The harness sends HARNESS_EACH_SIDE requests, one at a time, right before the benchmark's first run
and as many right after it, and the rules compare the median of all of them with the benchmark's:
the machine's speed can drift by a fifth within a minute (one run measured the benchmark's median ITL
at 41 ms and the harness's, after both benchmark runs, at 57 ms), so the harness brackets the run it
is compared with. The benchmark then runs again with the same seed, for the prefix-cache claim.
"""

from __future__ import annotations

from verify.headline import Headline, ms
from verify.job import Claim, Job, verdict_if

BENCH = "prefill-decode/vllm_bench.py"
HARNESS = "prefill-decode/ttft_by_length.py"
HARNESS_EACH_SIDE = 3  # harness requests right before the benchmark's first run, and as many right after it
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

    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    d = {"harness": []}

    def run_harness(side: str) -> None:
        for i in range(HARNESS_EACH_SIDE):
            r = harness.measure(client, harness.prompt_of(HARNESS_SENTENCES, f"harness {seed} {side} {i}"),
                                max_tokens=OUTPUT_LEN)
            # measure() returns the number of text chunks that arrived, not the chunks themselves.
            d["harness"].append(capture.results("timed-request", range(r["chunks"]), side=side, **r))

    run_harness("before")
    d["bench"] = run_bench()
    run_harness("after")
    # The same command again, same seed: the same random prompts, now in the prefix cache.
    d["same_seed_again"] = run_bench()
    return d


TOLERANCES = {"ttft": TTFT_AGREEMENT, "itl": ITL_AGREEMENT}


def bracket_gap(d) -> str | None:
    """Why the harness requests do not bracket the benchmark's first run (None when they do): fewer than
    HARNESS_EACH_SIDE of them, before it or after it."""
    sides = {side: sum(1 for r in d["harness"] if r.get("side") == side) for side in ("before", "after")}
    short = [f"{n} {side} it" for side, n in sides.items() if n < HARNESS_EACH_SIDE]
    return (f"the harness ran {' and '.join(short)} (it brackets the benchmark's run with {HARNESS_EACH_SIDE} "
            f"requests on each side)") if short else None


def figures(d) -> dict:
    from statistics import median
    b = d["bench"]["result"]
    h = d["harness"]
    return {"bench_ttft": b["median_ttft_ms"] / 1000, "bench_itl": b["median_itl_ms"] / 1000,
            "bench_prompt_tokens": b["total_input_tokens"] / b["completed"],
            "harness_ttft": median(r["ttft"] for r in h), "harness_itl": median(r["itl"] for r in h),
            "harness_prompt_tokens": median(r["prompt_tokens"] for r in h)}


def _agree(d, key, tolerance, label):
    if not d["bench"].get("result"):
        return verdict_if(None, "vllm bench serve saved no result")
    gap = bracket_gap(d)
    if gap:
        return verdict_if(None, gap)
    f = figures(d)
    a, b = f[f"harness_{key}"], f[f"bench_{key}"]
    diff = abs(a - b) / b
    n = len(d["harness"])
    return verdict_if(diff <= tolerance, f"median {label}: harness {a * 1000:.1f} ms over {n} requests, half right before "
                                         f"the benchmark's run and half right after ({f['harness_prompt_tokens']:.0f}-token "
                                         f"prompts), vllm bench serve {b * 1000:.1f} ms ({f['bench_prompt_tokens']:.0f}-token "
                                         f"prompts): {diff:.0%} apart (tolerance {tolerance:.0%})")


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
              "the same server and prompt length.", lambda d: _agree(d, "ttft", TTFT_AGREEMENT, "TTFT"), timing=True),
        Claim("bench-agreement.itl-agrees", "The harness's inter-token latency agrees with vllm bench serve's.",
              lambda d: _agree(d, "itl", ITL_AGREEMENT, "ITL"), timing=True),
        Claim("bench-agreement.same-seed-is-cached", "vllm bench serve run twice against one server with the same seed "
              "sends the same random prompts, and the second run's TTFT comes mostly from the prefix cache.",
              decide_same_seed, timing=True),
    ),
    headline=HEADLINE,
)
