"""Streaming versus non-streaming: E2E, TTFT and ITL over repeated, interleaved trials.

Trials stop once both verdicts are settled (verify/measure/trials.py): at least
MIN_TRIALS interleaved pairs, then as soon as the median of the paired E2E
differences and the median TTFT fraction are each clear of their thresholds
with CONFIDENCE, at most MAX_TRIALS pairs.
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median, ms
from verify.job import Claim, Job, verdict_if

SNIPPET = "streaming/stream_timing.py"
MIN_TRIALS, MAX_TRIALS = 5, 9  # 5 is the fewest pairs whose median interval reaches CONFIDENCE
CONFIDENCE = 0.90
MAX_TOKENS = 100
# Declared tolerances for the verdicts.
E2E_PARITY_TOLERANCE = 0.10      # the streamed E2E within 10 % of the non-streamed one (median of the pairs)
TTFT_SMALL_FRACTION = 0.20       # TTFT under 20 % of E2E for a 100-token answer


def _paired_differences(trials: dict) -> list[float]:
    """Per interleaved pair: (streamed E2E - non-streamed E2E) relative to the larger of the two."""
    return [(s["e2e"] - n["e2e"]) / max(s["e2e"], n["e2e"])
            for s, n in zip(trials["streaming"], trials["non_streaming"])]


def _ttft_fractions(trials: dict) -> list[float]:
    return [s["ttft"] / s["e2e"] for s in trials["streaming"]]


def _settled(trials: dict) -> list[str | None]:
    from verify.measure.trials import median_interval
    tol = E2E_PARITY_TOLERANCE
    parity = None
    interval = median_interval(_paired_differences(trials), CONFIDENCE)
    if interval:
        lo, hi = interval
        if -tol < lo and hi < tol:
            parity = f"E2E parity: the {CONFIDENCE:.0%} interval of the paired difference ({lo:+.1%} to {hi:+.1%}) " \
                     f"is within +-{tol:.0%}"
        elif lo > tol or hi < -tol:
            parity = f"E2E parity: the {CONFIDENCE:.0%} interval of the paired difference ({lo:+.1%} to {hi:+.1%}) " \
                     f"is outside +-{tol:.0%}"
    from verify.measure.trials import clear_of
    return [parity, clear_of(_ttft_fractions(trials), TTFT_SMALL_FRACTION, CONFIDENCE, "TTFT fraction")]


def collect(ctx) -> dict:
    from openai import DefaultHttpxClient, OpenAI
    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    from verify.measure.trials import until_settled
    snippet = ctx.snippet(SNIPPET)
    # Every HTTP answer the client gets, kept by its own hook: the snippet returns timings only, so a
    # trial's status, and a non-streamed trial's answer, are read from here.
    answers = []
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0,
                    http_client=DefaultHttpxClient(event_hooks={"response": [answers.append]}))
    # ignore_eos makes every answer exactly MAX_TOKENS long, so the two modes do the same work.
    extra = {"ignore_eos": True}
    snippet.timed(client, True, max_tokens=8, **extra)  # warm-up, not recorded
    trials = {"streaming": [], "non_streaming": []}

    def pair(i: int) -> dict:
        order = (False, True) if i % 2 == 0 else (True, False)  # alternate which mode goes first
        for stream in order:
            wait_idle(ctx.server.url)
            seen = len(answers)
            r = snippet.timed(client, stream, max_tokens=MAX_TOKENS, **extra)
            got = answers[seen:]
            # A streamed trial received its text chunks; a non-streamed one, its answer's JSON body
            # (the client has read it; a streamed body is not kept, so it is not read here).
            received = r["arrivals"] if stream else [a for a in map(capture.body, got) if a]
            trials["streaming" if stream else "non_streaming"].append(capture.results(
                "timed-request", received, statuses=[a.status_code for a in got],
                **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k != "arrivals"},
                arrivals=[round(t, 4) for t in r["arrivals"]]))
        return trials

    _, stopped = until_settled(pair, lambda _: _settled(trials), MIN_TRIALS, MAX_TRIALS)
    return {"trials": trials, "max_tokens": MAX_TOKENS, "n": stopped["trials"], "stopped": stopped}


def summaries_of(d):
    from verify.measure.stats import summary
    s = d["trials"]["streaming"]
    n = d["trials"]["non_streaming"]
    return {"e2e_streaming": summary([t["e2e"] for t in s]),
            "e2e_non_streaming": summary([t["e2e"] for t in n]),
            "ttft": summary([t["ttft"] for t in s]),
            "itl": summary([t["itl"] for t in s])}


def decide_parity(d):
    import statistics
    sm = summaries_of(d)
    a, b = sm["e2e_streaming"]["median"], sm["e2e_non_streaming"]["median"]
    diff = statistics.median(_paired_differences(d["trials"]))
    tol = E2E_PARITY_TOLERANCE
    return verdict_if(abs(diff) <= tol, f"median E2E {a:.2f} s streamed vs {b:.2f} s not streamed; median of the "
                                        f"paired differences {diff:+.1%} (tolerance {tol:.0%}, {d['n']} interleaved "
                                        f"pairs; {_why_stopped(d)})")


def decide_ttft_fraction(d):
    import statistics
    sm = summaries_of(d)
    frac = statistics.median(_ttft_fractions(d["trials"]))
    tol = TTFT_SMALL_FRACTION
    return verdict_if(frac < tol, f"median TTFT {sm['ttft']['median'] * 1000:.0f} ms; the median TTFT is "
                                  f"{frac * 100:.1f} % of its request's E2E for a {d['max_tokens']}-token answer "
                                  f"(threshold {tol * 100:.0f} %; {_why_stopped(d)})")


def _why_stopped(d) -> str:
    stopped = d.get("stopped")
    if not stopped:
        return "a fixed number of trials"
    return (f"stopped after {stopped['trials']} pairs, settled with {CONFIDENCE:.0%} confidence" if stopped["settled"]
            else f"not settled after the maximum of {stopped['max_trials']} pairs")


# --- headline figures

def _streamed_median_ms(d, mode: str, key: str) -> float:
    return ms(median(t[key] for t in d["trials"][mode]))


HEADLINE = Headline({
    "time to first token, streamed, median": lambda d: _streamed_median_ms(d, "streaming", "ttft"),
    "inter-token latency, streamed, median": lambda d: _streamed_median_ms(d, "streaming", "itl"),
    f"end-to-end time of a {MAX_TOKENS}-token answer, streamed, median":
        lambda d: _streamed_median_ms(d, "streaming", "e2e"),
    f"end-to-end time of a {MAX_TOKENS}-token answer, not streamed, median":
        lambda d: _streamed_median_ms(d, "non_streaming", "e2e"),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")

JOB = Job(
    id="stream-timing",
    title="Streaming versus non-streaming timing",
    question="Is E2E about the same either way, and is TTFT a small fraction of E2E for a long answer?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("stream-timing.e2e-parity", "E2E latency is about the same streamed or not: streaming does not make "
              "generation faster.", decide_parity, timing=True),
        Claim("stream-timing.ttft-fraction", "For a long answer, TTFT is a small fraction of E2E.",
              decide_ttft_fraction, timing=True),
    ),
    headline=HEADLINE,
)
