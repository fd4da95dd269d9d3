"""What decoding through an adapter costs: inter-token latency against the base model's, on one server.

On the lora variant, each of the base model, attn-a (attention) and mlp-c (MLP) streams the first
prompt alone with min_tokens = max_tokens = TOKENS, REPS rounds in turn. A request's figure is
its mean gap between tokens (first to last text chunk); the claim reads the medians over rounds.
"""

from __future__ import annotations

import statistics

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import BASE, SNIPPET
from verify.jobs.lora._together import body, together

# Enough gaps for a mean (23 per request); each record's ratios and their range over rounds are in its reason.
TOKENS = 24
REPS = 3
MODELS = (BASE, "attn-a", "mlp-c")
# The claim: an adapter's median gap is at least this many times the base model's.
SLOWER_BY = 1.2


def collect(ctx) -> dict:
    from verify.measure import capture
    prompt = ctx.snippet(SNIPPET).PROMPTS[0]
    url = ctx.base_url + "/chat/completions"
    rounds = [{m: together(url, [body(m, prompt, TOKENS, min_tokens=TOKENS)])[0] for m in MODELS}
              for _ in range(REPS)]
    every = [s for r in rounds for s in r.values()]
    return {"rounds": rounds, "tokens": TOKENS,
            "streams": capture.results("streams", [s for s in every if s["stream"]["lines"]],
                                       statuses=[s["stream"]["status"] for s in every])}


def times(sent: dict) -> list[float]:
    """When each chunk that carries text arrived (s after sending)."""
    from verify.jobs.lora._together import _has_text
    return [line["t"] for line in sent["stream"]["lines"] if _has_text(line["line"])]


def itl(d) -> dict[str, list[float]]:
    """Each model's inter-token latency per round: first to last text chunk, over the gaps between them
    (a mean, which chunks delivered in a burst by a busy API server do not pull to zero as they do a
    median gap). Rounds whose stream held under half the tokens asked for are left out."""
    out: dict[str, list[float]] = {m: [] for m in MODELS}
    for r in d["rounds"]:
        for m, sent in r.items():
            t = times(sent)
            if len(t) > d["tokens"] // 2:
                out[m].append((t[-1] - t[0]) / (len(t) - 1))
    return out


def decide_slower(d):
    per_round = itl(d)
    if any(len(v) < 2 for v in per_round.values()):
        return verdict_if(None, "fewer than two complete rounds for a model")
    base = statistics.median(per_round[BASE])
    ratios = {m: statistics.median(v) / base for m, v in per_round.items() if m != BASE}
    # The spread is part of the rule: every round of each adapter is slower than the base model's median.
    clear = all(min(per_round[m]) > base for m in ratios)
    return verdict_if(all(r >= SLOWER_BY for r in ratios.values()) and clear,
                      f"inter-token latency, median of {REPS} rounds (range): base {base * 1000:.0f} ms ("
                      f"{min(per_round[BASE]) * 1000:.0f} to {max(per_round[BASE]) * 1000:.0f}); " +
                      "; ".join(f"{m} {statistics.median(per_round[m]) * 1000:.0f} ms ({min(per_round[m]) * 1000:.0f} "
                                f"to {max(per_round[m]) * 1000:.0f}), {r:.2f}x" for m, r in ratios.items()) +
                      f"; tolerance: at least {SLOWER_BY}x, and every adapter round above the base median")


JOB = Job(
    id="lora-cost",
    title="What an adapter costs per token",
    question="How much slower does a request decode through an adapter than through the base model, on one server?",
    pages=("lora.md",),
    collect=collect,
    variant="lora",
    claims=(
        Claim("lora-cost.slower", f"On the CPU build, an adapter request's tokens come at least {SLOWER_BY}x "
              "further apart than the base model's, on the same server.", decide_slower, timing=True),
    ),
)
