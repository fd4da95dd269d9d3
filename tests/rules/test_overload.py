"""Overload article: its rules replay real records of bursts against a live vLLM server (with and without
an admission limit, and through nginx), edited to the opposite behaviour or to data that cannot decide."""

from __future__ import annotations

import pytest

from tests.rules._records import cases, check, decide_edited, row

# --- admission-limit -------------------------------------------------------------------------------------


def _answers(d):
    return d["burst_answers"]["answers"]


def _refused(d):
    return [a for a in _answers(d) if a["status"] == 503]


def three_admitted(d):
    _refused(d)[0].update(status=200, tokens=32, finish_reason="length", message=None, seconds=3.0)


def refused_with_another_message(d):
    _refused(d)[0]["message"] = "Internal server error"


def a_slow_refusal(d):
    _refused(d)[0]["seconds"] = 1.5


def retry_after_sent(d):
    _refused(d)[0]["retry_after"] = "1"


def one_refusal_not_counted(d):
    d["burst_answers"]["counters_after"]["vllm:admission_rejections_total{max_num_queued_reqs}"] -= 1


def an_admitted_answer_cut(d):
    next(a for a in _answers(d) if a["status"] == 200).update(tokens=10, finish_reason="abort")


def nothing_refused(d):
    for a in _refused(d):
        a.update(status=200, tokens=32, finish_reason="length", message=None)


def sdk_tried_once(d):
    c = d["sdk"]["default"]
    key = "vllm:admission_rejections_total{max_num_queued_reqs}"
    c["counters_after"][key] = c["counters_before"][key] + 1


def sdk_without_retries_slow(d):
    d["sdk"]["no retries"]["result"]["seconds"] = d["sdk"]["default"]["result"]["seconds"] + 1


def no_admission_counter(d):
    """A release whose /metrics has no admission counter (0.29.0's record is one)."""
    for c in (d["sdk"]["default"], d["sdk"]["no retries"], d["burst_answers"]):
        for side in ("counters_before", "counters_after"):
            c[side].pop("vllm:admission_rejections_total{max_num_queued_reqs}", None)


def limit_not_held(d):
    d["sdk"]["default"]["limit_held_by"][0]["status"] = None


ADMISSION = "admission-limit"
ROWS = [
    row("admission-limit.flag-known", None, "confirmed"),
    row("admission-limit.counts-running", None, "confirmed"),
    row("admission-limit.counts-running", three_admitted, "refuted"),
    row("admission-limit.refused-503", refused_with_another_message, "refuted"),
    row("admission-limit.refused-503", nothing_refused, "inconclusive"),
    row("admission-limit.refused-fast", a_slow_refusal, "refuted"),
    row("admission-limit.refused-fast", nothing_refused, "inconclusive"),
    row("admission-limit.no-retry-after", retry_after_sent, "refuted"),
    row("admission-limit.no-retry-after", nothing_refused, "inconclusive"),
    row("admission-limit.counted", one_refusal_not_counted, "refuted"),
    row("admission-limit.admitted-whole", an_admitted_answer_cut, "refuted"),
    row("admission-limit.sdk-retries", sdk_tried_once, "refuted"),
    row("admission-limit.sdk-retries", limit_not_held, "inconclusive"),
    row("admission-limit.sdk-no-retries", sdk_without_retries_slow, "refuted"),
    row("admission-limit.counted", no_admission_counter, "refuted", contains="has no vllm:admission_rejections_total"),
    row("admission-limit.sdk-retries", no_admission_counter, "inconclusive", contains="no vllm:admission_rejections_total"),
    row("admission-limit.sdk-no-retries", no_admission_counter, "inconclusive"),
]

# On a release without the flag the server refuses to start: that is the one finding, every other claim
# has nothing to decide on.
OLDEST = [row("admission-limit.flag-known", None, "refuted", contains="unrecognized arguments")] + [
    row(f"admission-limit.{c}", None, "inconclusive", starts="the server did not start")
    for c in ("counts-running", "refused-503", "refused-fast", "no-retry-after", "counted", "admitted-whole",
              "sdk-retries", "sdk-no-retries")]

# --- queue-grows -----------------------------------------------------------------------------------------


def _stream_lines(d, i):
    return d["requests"][i]["lines"]


def one_answer_aborted(d):
    import json
    lines = _stream_lines(d, 0)
    for x in lines:
        if x["line"].startswith("data: {"):
            chunk = json.loads(x["line"][6:])
            for c in chunk.get("choices") or []:
                if c.get("finish_reason"):
                    c["finish_reason"] = "abort"
            x["line"] = "data: " + json.dumps(chunk)


def last_first_token_late(d):
    """The last request in the queue got its first token 50 % later than k answers."""
    from verify.jobs.overload.queue_grows import _timings
    last = _timings(d)[-1]
    for r in d["requests"]:
        first = [x["t"] for x in r["lines"] if x["line"].startswith("data: ")]
        if first and abs(first[-1] - last["e2e"]) < 1e-9:
            for x in r["lines"]:
                x["t"] = round(x["t"] + 0.5 * last["ttft"], 4)


def counted_as_abort(d):
    d["moved"]['vllm:request_success_total{finished_reason="abort"}'] = 1.0


def impatient_generated(d):
    d["moved"]["vllm:generation_tokens_total"] += 16


def impatient_served(d):
    d["impatient"].update(status=200, error=None)


ROWS += [
    row("queue-grows.none-refused", None, "confirmed"),
    row("queue-grows.none-refused", one_answer_aborted, "refuted"),
    row("queue-grows.ttft-arithmetic", None, "confirmed"),
    row("queue-grows.ttft-arithmetic", last_first_token_late, "refuted"),
    row("queue-grows.impatient-unseen", None, "confirmed"),
    row("queue-grows.impatient-unseen", counted_as_abort, "refuted"),
    row("queue-grows.impatient-unseen", impatient_generated, "refuted"),
    row("queue-grows.impatient-unseen", impatient_served, "inconclusive"),
]

# --- front-limit -----------------------------------------------------------------------------------------


def nginx_let_one_more_through(d):
    next(a for a in _answers(d) if a["status"] == 429).update(status=200, tokens=32, finish_reason="length")


def engine_counted_a_refused_one(d):
    key = next(k for k in d["moved"] if k.startswith("vllm:request_success_total"))
    d["moved"][key] += 1


def passed_answer_cut(d):
    next(a for a in _answers(d) if a["status"] == 200).update(tokens=5)


ROWS += [
    row("front-limit.nginx-refuses", None, "confirmed"),
    row("front-limit.nginx-refuses", nginx_let_one_more_through, "refuted"),
    row("front-limit.engine-never-sees", engine_counted_a_refused_one, "refuted"),
    row("front-limit.admitted-whole", passed_answer_cut, "refuted"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(ROWS, ("cpu",)))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(OLDEST, ("cpu-oldest",)))
def test_a_release_without_the_flag_decides_only_that(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)
