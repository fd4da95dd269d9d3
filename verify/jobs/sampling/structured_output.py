"""A JSON schema constraint: does every sample obey it, and what does it cost in time?"""

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
    samples, plain = [], []
    for _ in range(SAMPLES):
        t0 = time.perf_counter()
        text = snippet.person(keeping)
        samples.append({"text": text, "seconds": round(time.perf_counter() - t0, 4),
                        "finish_reason": last["completion"].choices[0].finish_reason})
        t0 = time.perf_counter()
        r = client.chat.completions.create(
            model="chat", messages=[{"role": "user", "content": "Invent a person: name and age, as JSON."}],
            max_tokens=60, temperature=1.0)
        plain.append({"text": r.choices[0].message.content, "seconds": round(time.perf_counter() - t0, 4),
                      "tokens": r.usage.completion_tokens, "finish_reason": r.choices[0].finish_reason})
    # Token counts of the constrained answers, from the server's own tokenizer.
    import httpx
    for s in samples:
        s["tokens"] = httpx.post(ctx.server.url + "/tokenize", json={"model": "chat", "prompt": s["text"]},
                                 timeout=30).json()["count"]
    # One event per sample that holds text (the client raises on an HTTP error).
    return {"constrained": capture.results("answers", [s for s in samples if s["text"]], samples=samples,
                                           schema=snippet.SCHEMA),
            "unconstrained": capture.results("answers", [s for s in plain if s["text"]], samples=plain)}


def _valid(text: str) -> bool:
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
    ok = sum(_valid(s["text"]) for s in finished)
    plain_ok = sum(_valid(s["text"]) for s in u)
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


def decide_cost(d):
    c, u = _per_token(d["constrained"]["samples"]), _per_token(d["unconstrained"]["samples"])
    return verdict_if(c <= COST_FACTOR * u, f"median time per output token: {c * 1000:.1f} ms constrained, "
                                            f"{u * 1000:.1f} ms unconstrained ({c / u:.2f}x; at most {COST_FACTOR}x "
                                            f"required)")


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
              "compiled.", decide_cost),
    ),
    headline=HEADLINE,
)
