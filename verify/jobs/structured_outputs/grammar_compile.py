"""The first constrained request a server serves, and the first request with each new schema after it.

On a server that has served nothing yet (the fresh variant), the first request with a JSON schema
is timed to its first token, then a second request with the same schema; then, for each of ROUNDS
more schemas no request used before (their property names carry the round's number), the same
pair. The second request of a pair differs from the first by one word in front, so the prefix
cache serves neither. Before the first request, /metrics is read to show that the server had
served nothing.
"""

from __future__ import annotations

from verify import headline
from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import Claim, Job, verdict_if
from verify.measure.transcript import chunk_text, chunks

ROUNDS = 4
# The server's first constrained request must wait at least this much longer than the next one.
MIN_FIRST_EXTRA_S = 0.1
# After it, the median extra wait of the new schemas must be under this share of the first request's
# (a median: one request's first token can come 100 ms late on a busy 2-core machine).
LATER_SHARE = 0.25


def schema(round_no: int) -> dict:
    words = {"type": "string", "pattern": "^[A-Z][a-z]{2,12}( [A-Z][a-z]{2,12}){0,3}$"}
    props = {f"text_{round_no}_{k}": words for k in range(10)}
    props |= {f"number_{round_no}_{k}": {"type": "integer", "minimum": 0, "maximum": 1000} for k in range(5)}
    return {"type": "object", "properties": props, "required": [f"text_{round_no}_0"], "additionalProperties": False}


def _body(round_no: int, word: str) -> dict:
    return {"model": "chat", "messages": [{"role": "user", "content": f"{word} Fill in the record."}],
            "max_tokens": 5, "temperature": 0, "stream": True,
            "response_format": {"type": "json_schema", "json_schema": {"name": "record", "schema": schema(round_no)}}}


def collect(ctx) -> dict:
    from verify.measure import capture, metrics, sse
    url = ctx.base_url + "/chat/completions"
    before = metrics.read_all(ctx.server.url)
    served = capture.results("metrics", list(before), requests_before=sum(
        v for k, v in before.items() if k.startswith("vllm:request_success_total")))
    pairs = []
    for n in range(ROUNDS + 1):
        # Words no earlier prompt began with, so that the prefix cache serves neither request of a pair.
        pairs.append({"first": sse.capture(url, _body(n, f"Please, record {n}.")),
                      "second": sse.capture(url, _body(n, f"Now, record {n}."))})
    return {"before": served, "pairs": pairs}


def first_token_s(capture: dict) -> float:
    """Seconds from sending to the first chunk that carries text."""
    for line in capture["lines"]:
        if line["line"].startswith("data: {") and chunk_text(chunks([line])[0]):
            return line["t"]
    raise ValueError("no chunk carried text")


def extras(d) -> list[float]:
    """Per pair: the first request's time to first token minus the second's."""
    return [first_token_s(p["first"]) - first_token_s(p["second"]) for p in d["pairs"]]


def _fresh(d) -> bool | None:
    return d["before"]["requests_before"] == 0 or None


def decide_first_request(d):
    e = extras(d)[0]
    return verdict_if(_fresh(d) and e >= MIN_FIRST_EXTRA_S,
                      f"requests the server had served before: {d['before']['requests_before']:.0f}; its first "
                      f"constrained request waited {e * 1000:+.0f} ms longer for its first token than the next one "
                      f"with the same schema (at least {MIN_FIRST_EXTRA_S * 1000:.0f} ms required)")


def decide_later_schemas(d):
    from statistics import median
    first, later = extras(d)[0], extras(d)[1:]
    return verdict_if(_fresh(d) and len(later) == ROUNDS and first > 0 and median(later) < LATER_SHARE * first,
                      f"each later new schema's extra wait: {', '.join(f'{x * 1000:+.0f} ms' for x in later)} "
                      f"(median {median(later) * 1000:+.0f} ms; a median under {LATER_SHARE:.0%} of the first "
                      f"request's {first * 1000:+.0f} ms required)")


HEADLINE = Headline({
    "first constrained request of a server, extra time to first token": lambda d: headline.ms(extras(d)[0]),
    "a later new schema, extra time to first token, median": lambda d: headline.ms(headline.median(extras(d)[1:])),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")


JOB = Job(
    id="grammar-compile",
    title="The first constrained request, and each new schema",
    question="How much longer does a server's first constrained request wait for its first token than the next "
             "one, and how much does each new schema cost after it?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        Claim("grammar-compile.first-request", "A server's first constrained request waits at least 100 ms longer "
              "for its first token than the next request with the same schema.", decide_first_request, timing=True),
        Claim("grammar-compile.later-schemas", "After that, requests with a schema no request used before wait "
              "far less extra: their median is under a quarter of the first request's extra wait.",
              decide_later_schemas, timing=True),
    ),
    variant="fresh",
    headline=HEADLINE,
)
