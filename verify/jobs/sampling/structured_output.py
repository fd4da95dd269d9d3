"""A JSON schema constraint: does every sample obey it, and what does it cost in time?

Constrained and unconstrained requests alternate, one at a time. Every constrained sample is taken
(their answers are judged, not only their time); the unconstrained ones, which run into max_tokens
and take the longest, stop once the requests still to come could not move the ratio of the two
medians (of SAMPLES each) across COST_FACTOR, whatever they measure. The record keeps why they
stopped; a rule given fewer samples than settle it is inconclusive.
"""

from __future__ import annotations

import json
from collections import Counter

from verify import headline
from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import Claim, Job, verdict_if

SNIPPET = "sampling/json_schema.py"
SAMPLES = 8
# Unseeded sampling at temperature 1.0 may run an answer into max_tokens (a long invented name, say):
# a cut answer is unfinished JSON whatever the constraint does. The rule judges the answers that ended
# by themselves, and needs at least this many of them.
MIN_FINISHED = 6
# The constrained answers' time per token may be at most this many times the unconstrained one's.
COST_FACTOR = 1.5


def _keeping_last(client):
    """The client as the page's snippet uses it (client.chat.completions.create), keeping the last
    completion it returned: the snippet returns only the text, and the rule needs the finish reason."""
    last = {}

    class Completions:
        def create(self, **kwargs):
            last["completion"] = client.chat.completions.create(**kwargs)
            return last["completion"]

    class Chat:
        completions = Completions()

    class Client:
        chat = Chat()
    return Client(), last


def collect(ctx) -> dict:
    import time

    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    keeping, last = _keeping_last(client)
    snippet.person(client)  # the first constrained request compiles the grammar: not recorded
    import httpx
    samples, plain, stopped = [], [], None
    for _ in range(SAMPLES):
        t0 = time.perf_counter()
        text = snippet.person(keeping)
        samples.append({"text": text, "seconds": round(time.perf_counter() - t0, 4),
                        "finish_reason": last["completion"].choices[0].finish_reason})
        # The answer's token count, from the server's own tokenizer (between the timed requests).
        samples[-1]["tokens"] = httpx.post(ctx.server.url + "/tokenize", json={"model": "chat", "prompt": text},
                                           timeout=30).json()["count"]
        if stopped is not None and stopped["settled"]:
            continue
        t0 = time.perf_counter()
        r = client.chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "Invent a person: name and age, as JSON."}],
            max_tokens=60, temperature=1.0)
        plain.append({"text": r.choices[0].message.content, "seconds": round(time.perf_counter() - t0, 4),
                      "tokens": r.usage.completion_tokens, "finish_reason": r.choices[0].finish_reason})
        stopped = cost_settled(samples, plain)
    # One event per sample that holds text (the client raises on an HTTP error).
    return {"constrained": capture.results("answers", [s for s in samples if s["text"]], samples=samples,
                                           schema=snippet.SCHEMA),
            "unconstrained": capture.results("answers", [s for s in plain if s["text"]], samples=plain),
            "stopped": {**stopped, "unconstrained": len(plain), "max_unconstrained": SAMPLES}}


def valid_answer(text: str) -> bool:
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return (isinstance(obj, dict) and set(obj) == {"name", "age"} and isinstance(obj["name"], str)
            and isinstance(obj["age"], int) and not isinstance(obj["age"], bool))


def decide_valid(d):
    c = d["constrained"]["samples"]
    u = d["unconstrained"]["samples"]
    finished = [s for s in c if s.get("finish_reason") == "stop"]
    ok = sum(valid_answer(s["text"]) for s in finished)
    plain_ok = sum(valid_answer(s["text"]) for s in u)
    reasons = ", ".join(f"{n} {r or 'not recorded'}" for r, n in Counter(s.get("finish_reason") for s in c).items())
    because = (f"{ok} of the {len(finished)} constrained samples (temperature 1.0) that ended by themselves parse and "
               f"match the schema (finish reasons of all {len(c)}: {reasons}); without the constraint, {plain_ok} of "
               f"{len(u)} do")
    if len(finished) < MIN_FINISHED:
        return verdict_if(None, because + f" (at least {MIN_FINISHED} finished answers needed)")
    return verdict_if(ok == len(finished), because)


def _per_token(samples) -> float:
    from statistics import median
    return median(s["seconds"] / s["tokens"] for s in samples if s["tokens"])


def _median_range(samples) -> tuple[float, float]:
    """The least and greatest median time per token SAMPLES samples could have, these among them (a sample
    without tokens is left out of the median, so it counts neither way)."""
    from verify.measure.trials import median_range
    known = [s["seconds"] / s["tokens"] for s in samples if s["tokens"]]
    return median_range(known, max(len(known), SAMPLES - (len(samples) - len(known))))


def cost_settled(constrained, unconstrained) -> dict:
    """Whether the samples still to take could change the cost verdict: whatever they measure, the
    constrained median stays on its side of COST_FACTOR times the unconstrained one."""
    (c_lo, c_hi), (u_lo, u_hi) = _median_range(constrained), _median_range(unconstrained)
    side = ("within" if c_hi <= COST_FACTOR * u_lo else "over" if c_lo > COST_FACTOR * u_hi else None)
    done = side is not None
    return {"settled": done, "why": f"constrained median {c_lo * 1000:.4g} to {c_hi * 1000:.4g} ms per token, "
                                    f"unconstrained {u_lo * 1000:.4g} to {u_hi * 1000:.4g} ms: "
                                    + (f"{side} {COST_FACTOR}x whatever the rest measure" if done else "open")}


def decide_cost(d):
    cs, us = d["constrained"]["samples"], d["unconstrained"]["samples"]
    stop = cost_settled(cs, us)
    if not stop["settled"]:
        return verdict_if(None, f"{len(cs)} constrained and {len(us)} unconstrained samples of up to {SAMPLES} each, "
                                f"which do not settle the ratio of their medians ({stop['why']})")
    c, u = _per_token(cs), _per_token(us)
    fewer = "" if len(cs) >= SAMPLES and len(us) >= SAMPLES else (
        f"; {len(cs)} constrained and {len(us)} unconstrained samples of up to {SAMPLES}, the rest could not have "
        "changed the verdict")
    return verdict_if(c <= COST_FACTOR * u, f"median time per output token: {c * 1000:.1f} ms constrained, "
                                            f"{u * 1000:.1f} ms unconstrained ({c / u:.2f}x; at most {COST_FACTOR}x "
                                            f"required{fewer})")


# --- headline figures

def _per_token_ms(samples) -> float:
    return headline.ms(headline.median(s["seconds"] / s["tokens"] for s in samples if s["tokens"]))


HEADLINE = Headline({
    "time per output token, JSON schema constrained, median": lambda d: _per_token_ms(d["constrained"]["samples"]),
    "time per output token, unconstrained, median": lambda d: _per_token_ms(d["unconstrained"]["samples"]),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")


JOB = Job(
    id="structured-output",
    title="JSON schema constraints",
    question="Does a JSON schema constraint hold on every sample, and what does it cost in time?",
    pages=("sampling.md",),
    collect=collect,
    claims=(
        Claim("structured-output.every-sample-valid", "With a JSON schema in response_format, every sampled answer "
              "that ends by itself (finish_reason stop, not cut by max_tokens) parses and matches the schema, even at "
              "temperature 1.0.", decide_valid),
        Claim("structured-output.small-cost", "The constraint costs little time per token once its grammar is "
              "compiled.", decide_cost, timing=True),
    ),
    headline=HEADLINE,
)
