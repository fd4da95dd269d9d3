"""Latency article: its rules replay real records captured from a live vLLM server and benchmark tools, edited."""

from __future__ import annotations

from statistics import median

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide, decide_edited, json_lines, record, row
from tests.rules.flips_latency import guidellm_stops_at_the_empty_chunk, tool_times_a_later_chunk
from verify.jobs.latency import bench_definitions as job

BENCH = "bench-definitions"


# --- bench-definitions: each rule decides what its sentence says, and is inconclusive without its condition --

def usage_counts_the_role_chunk(data: dict) -> None:
    """A server whose usage counts the role chunk as a token too: usage equals the chunks with choices."""
    for s in data["streams"]:
        for line, chunk in json_lines(s):
            if chunk.get("usage"):
                chunk["usage"]["completion_tokens"] += 1
                line["line"] = compact(chunk)
    data["bench"]["result"]["output_lens"] = [n + 1 for n in data["bench"]["result"]["output_lens"]]


def first_chunk_brings_text(data: dict) -> None:
    """A first chunk that brings text is no token-less role chunk, though the counts still add up."""
    line, chunk = next((x, c) for x, c in json_lines(data["streams"][0]) if c.get("choices"))
    chunk["choices"][0]["delta"]["content"] = "Hi"
    line["line"] = compact(chunk)


def no_successful_request(data: dict) -> None:
    """No successful request: nothing to count."""
    data["bench"]["result"]["errors"] = ["timeout"] * len(data["bench"]["result"]["errors"])


def token_iterations_miscounted(data: dict) -> None:
    """Token iterations that are not the stream's chunks with text: the timings cannot name the chunk."""
    data["guidellm"]["result"]["requests"][0]["timings"]["token_iterations"] += 1


def first_chunk_and_token_stamped_together(data: dict) -> None:
    """The first chunk and the first token stamped at one moment: nothing to tell apart."""
    t = data["guidellm"]["result"]["requests"][0]["timings"]
    t["first_request_iteration"] = t["first_token_iteration"]


def ttft_at_neither_stamp(data: dict) -> None:
    """A TTFT at neither stamp: inconclusive, not refuted."""
    data["guidellm"]["result"]["requests"][0]["time_to_first_token_ms"] += 1.0


# Each a claim, an edit of its committed record (None: as recorded) and the verdict it must give, on the
# records of both CPU profiles.
BOUNDARIES = [
    row("bench-definitions.server-usage-counts", None, "confirmed", contains="32/32/33 role"),
    row("bench-definitions.server-usage-counts", usage_counts_the_role_chunk, "refuted"),
    row("bench-definitions.server-usage-counts", first_chunk_brings_text, "refuted"),
    row("bench-definitions.server-usage-counts", no_successful_request, "inconclusive"),
    # A tool whose clock runs on to a later token's chunk is refuted.
    row("bench-definitions.ttft-first-chunk", tool_times_a_later_chunk, "refuted",
        contains="after the first chunk with choices in 0 of 8"),
    # GuideLLM's TTFT is read from its own timings, tied to the stream.
    row("bench-definitions.guidellm-ttft", None, "confirmed", contains="at its first token iteration in 8 of 8"),
    row("bench-definitions.guidellm-ttft", guidellm_stops_at_the_empty_chunk, "refuted"),
    row("bench-definitions.guidellm-ttft", token_iterations_miscounted, "inconclusive"),
    row("bench-definitions.guidellm-ttft", first_chunk_and_token_stamped_together, "inconclusive"),
    row("bench-definitions.guidellm-ttft", ttft_at_neither_stamp, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile", PROFILES)
def test_goodput_decides_every_objective_only_in_a_run_where_no_request_met_both(profile):
    data = record(BENCH, profile)
    assert job.goodput_counts(data)[0] == 0
    assert decide(BENCH, "goodput-every-objective", data)["verdict"] == "confirmed"
    # A tool that counts requests meeting any objective prints more than 0: refuted.
    any_one = record(BENCH, profile)
    _, some, _ = job.goodput_counts(any_one)
    any_one["bench"]["result"]["request_goodput"] = some / any_one["bench"]["result"]["duration"]
    assert decide(BENCH, "goodput-every-objective", any_one)["verdict"] == "refuted"
    # Objectives some requests meet both of: the printed figure then rides on its divisor too, which this
    # claim does not settle.
    met = record(BENCH, profile)
    r = met["bench"]["result"]
    tpots = sorted((r["latencies"][i] - r["ttfts"][i]) / (r["output_lens"][i] - 1) for i in job._ok(met))
    met["slo_ms"]["tpot"] = tpots[len(tpots) // 2] * 1000
    every, some, _ = job.goodput_counts(met)
    assert 0 < every < some
    v = decide(BENCH, "goodput-every-objective", met)
    assert v["verdict"] == "inconclusive" and "a request met every objective" in v["because"]


def _ttft_edit(profile: str, edit) -> dict:
    """The record with edit(ttfts, i, role_at_proxy, text_at_proxy) applied to each successful request."""
    data = record(BENCH, profile)
    for i, (_, first, text) in zip(job._ok(data), job._ttft_rows(data)):
        edit(data["bench"]["result"]["ttfts"], i, first, text)
    return data


@pytest.mark.parametrize("profile", PROFILES)
def test_the_tools_ttft_ends_within_a_few_ms_of_the_streams_first_chunk(profile, monkeypatch):
    v = decide(BENCH, "ttft-first-chunk", record(BENCH, profile))
    assert v["verdict"] == "confirmed" and "in 8 of 8" in v["because"]
    # At the bound in every request confirms; one request just past it refutes.
    inside = _ttft_edit(profile, lambda ttfts, i, first, text: ttfts.__setitem__(i, first + job.FIRST_CHUNK_S - 1e-4))
    assert decide(BENCH, "ttft-first-chunk", inside)["verdict"] == "confirmed"
    past = _ttft_edit(profile, lambda ttfts, i, first, text: i == 0 and ttfts.__setitem__(i, first + job.FIRST_CHUNK_S
                                                                                           + 1e-4))
    assert decide(BENCH, "ttft-first-chunk", past)["verdict"] == "refuted"
    # A TTFT over before the proxy saw any chunk: the clocks disagree.
    early = _ttft_edit(profile, lambda ttfts, i, first, text: i == 0 and ttfts.__setitem__(i, first - 0.0001))
    v = decide(BENCH, "ttft-first-chunk", early)
    assert v["verdict"] == "inconclusive" and "clocks disagree" in v["because"]
    # Tokens closer together than twice the bound: the first chunk cannot be told from a later one.
    monkeypatch.setattr(job, "FIRST_CHUNK_S", 0.5)
    v = decide(BENCH, "ttft-first-chunk", record(BENCH, profile))
    assert v["verdict"] == "inconclusive" and "too close to tell" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_printed_itl_matches_the_pooled_gaps_within_the_tolerance(profile):
    data = record(BENCH, profile)
    assert decide(BENCH, "itl-pooled", data)["verdict"] == "confirmed"
    ours = median(job._pooled(data)) * 1000
    # Boundary: exactly the tolerance away confirms, a little more refutes (the old 4 ms confirmed it).
    for off, verdict in ((job.POOLED_SAME_MS - 1e-9, "confirmed"), (job.POOLED_SAME_MS + 0.01, "refuted")):
        data["bench"]["result"]["median_itl_ms"] = ours + off
        assert decide(BENCH, "itl-pooled", data)["verdict"] == verdict
    # The box names the per-request reading and whether it tells the two apart on this record.
    because = decide(BENCH, "itl-pooled", record(BENCH, profile))["because"]
    assert "a median of per-request means would be" in because
    assert ("does not tell the two definitions apart" in because) != ("told apart" in because)


@pytest.mark.parametrize("profile", PROFILES)
def test_tpot_divided_by_n_is_refuted_and_a_tolerance_as_wide_as_the_gap_decides_nothing(profile, monkeypatch):
    data = record(BENCH, profile)
    assert decide(BENCH, "tpot-formula", data)["verdict"] == "confirmed"
    r = data["bench"]["result"]
    per_request = [(job.by_tool(data["streams"][i], "vllm_bench_serve")["tpot"], r["output_lens"][i])
                   for i in job._ok(data)]
    by_n = median(t * (n - 1) / n for t, n in per_request)
    r["median_tpot_ms"] = by_n * 1000  # the time after the first chunk over all n tokens
    assert decide(BENCH, "tpot-formula", data)["verdict"] == "refuted"
    ours = median(t for t, _ in per_request)
    monkeypatch.setattr(job, "PER_TOKEN_SAME_S", abs(ours - by_n) / 2)  # the old tolerance was 1.1-1.4 ms
    r["median_tpot_ms"] = ours * 1000
    assert decide(BENCH, "tpot-formula", data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("claim, key, factor", [("guidellm-itl", "inter_token_latency_ms", 31 / 32),
                                                ("guidellm-tpot", "time_per_output_token_ms", 32 / 31)],
                         ids=["guidellm-itl", "guidellm-tpot"])
def test_guidellm_itl_and_tpot_allow_one_request_off_by_the_other_divisor_and_not_two(profile, claim, key, factor,
                                                                                      monkeypatch):
    data = record(BENCH, profile)
    assert decide(BENCH, claim, data)["verdict"] == "confirmed"
    requests = data["guidellm"]["result"]["requests"]
    assert {q["output_tokens"] for q in requests} == {32}
    # A record may already hold the one request a stall moved: put every request at its stream's figure first.
    for q, (_, s) in zip(requests, job.guidellm_requests(data)):
        times, n = job._text_times(s), q["output_tokens"]
        q[key] = 1000 * ((times[-1] - times[0]) / (n - 1) if claim == "guidellm-itl" else times[-1] / n)
    assert decide(BENCH, claim, data)["verdict"] == "confirmed"
    requests[0][key] *= factor  # one request by the other divisor: a stall may do that to one
    assert decide(BENCH, claim, data)["verdict"] == "confirmed"
    requests[1][key] *= factor
    assert decide(BENCH, claim, data)["verdict"] == "refuted"
    # A tolerance as wide as half the gap between the divisors cannot tell them apart.
    data = record(BENCH, profile)
    widest = max(abs(q[key] / 1000 - q[key] / 1000 / factor) for q in data["guidellm"]["result"]["requests"])
    monkeypatch.setattr(job, "PER_TOKEN_SAME_S", widest / 2)
    v = decide(BENCH, claim, data)
    assert v["verdict"] == "inconclusive" and "cannot tell them apart" in v["because"]
