"""A long prefill meets a stream that is decoding: the same experiment on two token budgets."""

from __future__ import annotations

import re

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, ms
from verify.job import Claim, Job, verdict_if

SNIPPET = "prefill-decode/long_prompt_meets_stream.py"
# "Stalls for the prefill": the stream's largest gap is at least this share of the long prompt's time.
STALL_SHARE = 0.7
# "Bounded": with chunks, the largest gap is at most this share of the long prompt's time.
CHUNKED_SHARE = 0.25


def collect(ctx) -> dict:
    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    snippet = ctx.snippet(SNIPPET)
    wait_idle(ctx.server.url)
    # The engine's configuration as the server printed it at start-up (a managed server's log).
    startup = next((line for line in ctx.server.log_since(0) if "Initializing a V1 LLM engine" in line), "")
    chunked = re.search(r"enable_chunked_prefill=(\w+)", startup)
    r = snippet.stream_meets_long_prompt(ctx.base_url)
    # The snippet's first line is the stream's status line ("HTTP 200"); the rest are its timed lines.
    status = int(r["stream"][0]["line"].split()[1]) if r["stream"] else None
    lines = r["stream"][1:]
    lp = r["long_prompt"]
    return {"stream": capture.results("sse", [x for x in lines if x["line"].startswith("data: ")], statuses=[status],
                                      lines=lines),
            # What came back for the long prompt: its answer's prompt token count.
            "long_prompt": capture.results("request", [lp["prompt_tokens"]] if lp.get("prompt_tokens") else [],
                                           statuses=[lp.get("status")], **lp),
            "startup_enable_chunked_prefill": chunked.group(1) if chunked else None}


def analyse(d) -> dict:
    lp = d["long_prompt"]
    times = [x["t"] for x in d["stream"]["lines"] if x["line"].startswith("data: ")]
    gaps = [(round(b - a, 4), a) for a, b in zip(times, times[1:])]
    worst, at = max(gaps)
    typical = sorted(g for g, _ in gaps)[len(gaps) // 2]
    window = (lp["sent_at"], lp["done_at"])
    inside = [t for t in times if window[0] < t < window[1]]
    return {"largest_gap": worst, "gap_starts": at, "median_gap": typical, "long_prompt_s": window[1] - window[0],
            "tokens_during_prefill": len(inside), "prompt_tokens": lp["prompt_tokens"], "window": window}


def decide_stall(d):
    a = analyse(d)
    ok = a["largest_gap"] >= STALL_SHARE * a["long_prompt_s"]
    return verdict_if(ok, f"a {a['prompt_tokens']}-token prompt took {a['long_prompt_s']:.2f} s; the stream's largest "
                          f"gap was {a['largest_gap']:.2f} s (its median gap {a['median_gap'] * 1000:.0f} ms), and "
                          f"{a['tokens_during_prefill']} tokens arrived meanwhile (a stall means a gap of at least "
                          f"{STALL_SHARE:.0%} of the long prompt's time)")


def decide_on_by_default(d):
    flag = d["startup_enable_chunked_prefill"]
    if flag is None:
        return verdict_if(None, "the server's start-up log is not readable here")
    a = analyse(d)
    return verdict_if(flag == "True" and a["largest_gap"] >= STALL_SHARE * a["long_prompt_s"],
                      f"the engine's start-up line says enable_chunked_prefill={flag}; the {a['prompt_tokens']}-token "
                      f"prompt still stalled the stream for {a['largest_gap']:.2f} s: it fits the default budget, "
                      "so it is one chunk")


def decide_bounded(d):
    a = analyse(d)
    ok = a["largest_gap"] <= CHUNKED_SHARE * a["long_prompt_s"] and a["tokens_during_prefill"] >= 3
    return verdict_if(ok, f"a {a['prompt_tokens']}-token prompt took {a['long_prompt_s']:.2f} s; the stream's largest "
                          f"gap was {a['largest_gap']:.2f} s (median {a['median_gap'] * 1000:.0f} ms) and "
                          f"{a['tokens_during_prefill']} of its tokens arrived meanwhile (bounded means at most "
                          f"{CHUNKED_SHARE:.0%} of the long prompt's time, with tokens still arriving)")


# --- headline figures

HEADLINE = Headline({
    "long prompt's time, sent to answered": lambda d: ms(analyse(d)["long_prompt_s"]),
    "stream's largest gap between tokens (the stall)": lambda d: ms(analyse(d)["largest_gap"]),
    "stream's median gap between tokens": lambda d: ms(analyse(d)["median_gap"]),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")


def stall_job(job_id: str, variant: str, chunked: bool) -> Job:
    extra = None
    if chunked:
        claim = Claim(f"{job_id}.stall-bounded", "With --max-num-batched-tokens 128, the long prompt is prefilled in "
                      "chunks between decode steps: the stream keeps receiving tokens and its largest gap is a fraction "
                      "of the prefill.", decide_bounded, timing=True)
    else:
        claim = Claim(f"{job_id}.decode-waits", "With the default token budget, a long prompt that arrives while "
                      "another request is streaming stops that stream for about the whole prefill.", decide_stall,
                      timing=True)
        extra = Claim(f"{job_id}.chunked-prefill-on-by-default", "Chunked prefill is on by default, and it does not "
                      "prevent that stall: a prompt shorter than the token budget is prefilled in one step.",
                      decide_on_by_default, timing=True)
    budget = "--max-num-batched-tokens 128" if chunked else "the default token budget"
    return Job(
        id=job_id,
        title=f"A long prefill meets a decoding stream ({budget})",
        question="Does a long prefill stall the decoding of a request already streaming, and by how much?",
        pages=("prefill-decode.md",),
        variant=variant,
        collect=collect,
        claims=(claim,) if extra is None else (claim, extra),
        headline=HEADLINE,
    )
