"""The phases of a request and the server's own histograms for them, and a timeline drawn from them."""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline, median, ms
from verify.job import Claim, Job, verdict_if

SNIPPET = "lifecycle/request_phases.py"
TRIALS = 5
# No rule reads the answer's length: a decode phase of 20 tokens is some 1.3 s here.
MAX_TOKENS = 20
PHASES = ("request_queue_time_seconds", "request_prefill_time_seconds", "request_decode_time_seconds",
          "request_inference_time_seconds", "e2e_request_latency_seconds", "time_to_first_token_seconds")
# inference = prefill + decode, to within this (the histograms round nothing; this is clock noise).
SUM_TOLERANCE_S = 0.002
# What e2e holds beyond queue + inference (the API server's own work) must stay under this.
API_SERVER_BOUND_S = 0.020


def collect(ctx) -> dict:
    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    snippet = ctx.snippet(SNIPPET)
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a story about a lighthouse."}],
            "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True}
    trials = []
    for _ in range(TRIALS):
        wait_idle(ctx.server.url)
        r = snippet.request_phases(ctx.base_url, body)
        # The snippet returns once its request was answered, with the answer's status (not its body).
        trials.append(capture.results("request", [r], statuses=[r["status"]], **r))
    return {"trials": trials}


def phase_seconds(t, phase):
    return t["phases"][phase]["seconds"]


def decide_one_each(d):
    counts = [{p: t["phases"][p]["observations"] for p in PHASES} for t in d["trials"]]
    ok = all(v == 1 for c in counts for v in c.values())
    odd = [c for c in counts if any(v != 1 for v in c.values())]
    return verdict_if(ok, f"{len(counts)} requests, one at a time: each added exactly one observation to each of "
                          f"{', '.join(PHASES)}" if ok else f"observation counts that are not 1: {odd}")


def decide_inference(d):
    gaps = [abs(phase_seconds(t, "request_inference_time_seconds") - phase_seconds(t, "request_prefill_time_seconds")
                - phase_seconds(t, "request_decode_time_seconds")) for t in d["trials"]]
    return verdict_if(max(gaps) <= SUM_TOLERANCE_S, f"|inference - (prefill + decode)| at most {max(gaps) * 1000:.2f} ms "
                                                    f"over {len(gaps)} requests (tolerance {SUM_TOLERANCE_S * 1000:.0f} ms)")


def api_server_time(t):
    return (phase_seconds(t, "e2e_request_latency_seconds") - phase_seconds(t, "request_queue_time_seconds")
            - phase_seconds(t, "request_inference_time_seconds"))


def decide_add_up(d):
    rest = [api_server_time(t) for t in d["trials"]]
    e2e = [phase_seconds(t, "e2e_request_latency_seconds") for t in d["trials"]]
    ok = all(0 <= r <= API_SERVER_BOUND_S for r in rest)
    return verdict_if(ok, "e2e minus (queue + inference): " + ", ".join(f"{r * 1000:.1f} ms" for r in rest) +
                      f" of e2e " + ", ".join(f"{e:.2f} s" for e in e2e) +
                      f" (must be between 0 and {API_SERVER_BOUND_S * 1000:.0f} ms)")


def decide_client(d):
    extra = [t["client_e2e_s"] - phase_seconds(t, "e2e_request_latency_seconds") for t in d["trials"]]
    return verdict_if(all(x > 0 for x in extra), "the client's time minus the server's e2e: " +
                      ", ".join(f"{x * 1000:.1f} ms" for x in extra))


# --- headline figures

def _phase_median(d, name):
    return ms(median(phase_seconds(t, name) for t in d["trials"]))


HEADLINE = Headline({
    "server prefill time, median": lambda d: _phase_median(d, "request_prefill_time_seconds"),
    f"server decode time of a {MAX_TOKENS}-token answer, median":
        lambda d: _phase_median(d, "request_decode_time_seconds"),
    "server end-to-end latency, median": lambda d: _phase_median(d, "e2e_request_latency_seconds"),
    "client's wait, send to last byte, median": lambda d: ms(median(t["client_e2e_s"] for t in d["trials"])),
}, TIMING_TOLERANCE, TIMING_WHY, "ms")


JOB = Job(
    id="request-phases",
    title="The phases of a request, by the server's histograms",
    question="Does each request add one observation to each phase histogram, and do the phases add up to the "
             "end-to-end time?",
    pages=("lifecycle.md",),
    collect=collect,
    claims=(
        Claim("request-phases.one-observation-each", "Each finished request adds exactly one observation to each of "
              "the queue, prefill, decode, inference, end-to-end and time-to-first-token histograms.", decide_one_each),
        Claim("request-phases.inference-is-prefill-plus-decode", "The inference time is the prefill time plus the "
              "decode time.", decide_inference),
        Claim("request-phases.phases-add-up", "Queue plus inference time is the end-to-end time, but for a few "
              "milliseconds the API server spends on the request.", decide_add_up, timing=True),
        Claim("request-phases.client-waits-longer", "The client waits longer than the server's end-to-end latency "
              "says: the server's clock starts when the request reaches it.", decide_client),
    ),
    headline=HEADLINE,
)
