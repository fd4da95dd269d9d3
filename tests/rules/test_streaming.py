"""Streaming article: its rules (and the probe's checks) replay real records captured from a live vLLM server, edited."""

from __future__ import annotations

import copy
import json

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide, decide_edited, edit_chunks, record, row
from verify.evidence import store
from verify.jobs.streaming import api_server_cpu

# --- edits of the records: each a server, proxy or client behaving another way --------------------------


def _null_first_content(stream: dict) -> None:
    """The stream's first chunk with content null instead of the empty string."""
    line = next(i for i in stream["lines"] if i["line"].startswith("data: {"))
    chunk = json.loads(line["line"][6:])
    chunk["choices"][0]["delta"]["content"] = None
    line["line"] = "data: " + json.dumps(chunk)


def first_chunk_with_null_content(data: dict) -> None:
    """A first chunk with null content refutes the empty-string claim."""
    _null_first_content(next(iter(data["streams"].values())))


def length_chunk_drops_a_whole_token(data: dict) -> None:
    """A length chunk that drops a whole token: its token decodes alone, yet its chunk had no text."""
    name = next(k for k, t in data["finish_tokens"].items() if "\ufffd" in (t["decoded_alone"] or ""))
    data["finish_tokens"][name]["decoded_alone"] = " sea"


def answers_cut_at_max_tokens(data: dict) -> None:
    """Usage compared on answers cut at max_tokens proves nothing."""
    def to_length(chunk):
        for choice in chunk.get("choices", []):
            if choice.get("finish_reason"):
                choice["finish_reason"] = "length"
    edit_chunks(data["raw_with"], to_length)
    data["non_streaming_finish_reason"] = "length"


def no_held_characters(data: dict) -> None:
    """Every token decodes alone to a whole character: nothing for the server to hold back."""
    for c in data["chunks"]:
        c["tokens_decoded_alone"] = ["x" for _ in c["tokens_decoded_alone"]]


def nothing_running_at_disconnect(data: dict) -> None:
    """A request that was not running when the client left proves nothing."""
    for trial in data["trials"].values():
        trial["running_at_disconnect"] = 0
        trial["generated_at_disconnect"] = 0


def blocks_still_held_after_the_engine_stopped(data: dict) -> None:
    """The KV cache as full after the engine stopped as at the disconnect: the blocks were not freed."""
    trial = data["trials"]["httpx"]
    trial["kv_cache_usage_after"] = trial["kv_cache_usage_at_disconnect"]


def engine_kept_running(data: dict) -> None:
    """An engine that kept running to max_tokens after the client left."""
    trial = data["trials"]["openai"]
    trial["stop_after_disconnect_s"], trial["generated_tokens"] = None, trial["max_tokens"]


def server_log_not_read(data: dict) -> None:
    """A log that was not read is inconclusive, not refuted."""
    for trial in data["trials"].values():
        trial["server_log_read"], trial["abort_log_lines"] = False, []


def timeout_longer_than_what_was_timed(data: dict) -> None:
    """A prefill, a generation and a stream all shorter than the timeout: none of the three can decide."""
    data["timeout_s"] = 600.0


def retried_copies_side_by_side(data: dict) -> None:
    """Retried copies running side by side refute sequential copies."""
    data["default_retries"]["max_running"] = 2


def server_ttft_differs_behind_one_proxy(data: dict) -> None:
    """The server's own TTFT three seconds longer behind one proxy: the proxy affected the server."""
    data["server_side"]["nginx-tls"]["vllm:time_to_first_token_seconds_sum"] += 3.0


def stream_of_one_event(data: dict) -> None:
    """A stream of one event cannot show buffering."""
    capture = data["captures"]["nginx-streaming"]
    first = next(i for i, item in enumerate(capture["lines"]) if item["line"].startswith("data: "))
    capture["lines"] = capture["lines"][:first + 1]


def streaming_slower_in_every_pair(data: dict) -> None:
    """Streaming 30 % slower in every pair: no parity."""
    for t in data["trials"]["streaming"]:
        t["e2e"] *= 1.3


def first_token_a_third_of_the_answer(data: dict) -> None:
    """A first token that takes a third of the answer's time."""
    for t in data["trials"]["streaming"]:
        t["ttft"] = t["e2e"] / 3


def no_streamed_trial(data: dict) -> None:
    """No streamed trial: nothing to decide from."""
    data["trials"]["streaming"] = []


def no_streamed_batch_at_concurrency_8(data: dict) -> None:
    """Without a pair at a concurrency, streaming-costs-more is inconclusive."""
    data["batches"] = [b for b in data["batches"] if not (b["concurrency"] == 8 and b["stream"])]


def streamed_and_non_streamed_swapped(data: dict) -> None:
    """Streamed and non-streamed swapped: streaming would cost less."""
    for b in data["batches"]:
        b["stream"] = not b["stream"]


def a_batch_read_without_the_process_clock(data: dict) -> None:
    """One batch without the API server's process-clock readings (as the 10 ms ticks alone would be)."""
    del data["batches"][0]["api_clock"]


def the_clock_of_another_process(data: dict) -> None:
    """One batch's process clock read for another pid than the listener the snippet found."""
    data["batches"][0]["api_clock"]["pid"] += 1


def the_clock_standing_still(data: dict) -> None:
    """One batch over which the API server's process clock did not move."""
    clock = data["batches"][0]["api_clock"]
    clock["after_s"] = clock["before_s"]


# proxy-read-timeout's slow-first-token-cut, pinned at its boundaries.

def _direct_first_text_at(data: dict, seconds: float) -> None:
    """Shift the direct stream's arrival times so its first text comes exactly `seconds` after sending."""
    from verify.jobs.streaming.proxy_read_timeout import timing_of
    direct = data["slow_first_token_direct"]
    shift = timing_of(direct)["first_text"] - seconds
    for item in direct["lines"]:
        item["t"] = round(item["t"] - shift, 4)
    direct["ended_s"] = round(direct["ended_s"] - shift, 4)
    assert timing_of(direct)["first_text"] == seconds


def _through_nginx(data: dict, status: int, keep) -> None:
    """The stream through nginx given the direct stream's lines that keep(line) selects."""
    via = data["slow_first_token"]
    via["status"] = status
    via["body_lines"] = [copy.deepcopy(i) for i in data["slow_first_token_direct"]["lines"] if keep(i["line"])]


def direct_first_text_at_the_timeout(data: dict) -> None:
    """Boundary first text == timeout: the prefill must be longer than the timeout (<= is inconclusive)."""
    _direct_first_text_at(data, data["timeout_s"])


def direct_first_text_a_millisecond_past_the_timeout(data: dict) -> None:
    """Boundary first text == timeout + 1 ms: long enough, so the stream through nginx decides."""
    _direct_first_text_at(data, data["timeout_s"] + 0.001)


def direct_stream_without_any_text(data: dict) -> None:
    """No first text at all directly: not "longer than the timeout", and said so, not a crash."""
    for item in data["slow_first_token_direct"]["lines"]:
        if item["line"].startswith("data: {"):
            chunk = json.loads(item["line"][6:])
            chunk["choices"][0]["delta"]["content"] = ""
            item["line"] = compact(chunk)


def text_through_nginx_before_the_cut(data: dict) -> None:
    """The "no text" clause alone false: the stream was cut ([DONE] missing), but after its first text."""
    _through_nginx(data, 200, lambda line: '"content":"The"' in line or '"role"' in line)


def stream_through_nginx_ended_with_done(data: dict) -> None:
    """The "cut" clause alone false: HTTP 200 and [DONE] received, no text: nothing was cut off."""
    _through_nginx(data, 200, lambda line: '"role"' in line or line == "data: [DONE]")


def a_504_from_nginx(data: dict) -> None:
    """The status half of "cut" alone true: a 504 is a cut whatever the body carried."""
    _through_nginx(data, 504, lambda line: '"role"' in line or line == "data: [DONE]")


TIMEOUT_CLAIMS = ("proxy-read-timeout.slow-first-token-cut", "proxy-read-timeout.non-streaming-cut",
                  "proxy-read-timeout.long-stream-completes")
NOT_RUNNING = ("cancel-direct.httpx", "cancel-nginx-tls.openai", "cancel-nginx-ignore-abort.non-streaming-keeps-running")

# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    row("chunk-shapes.first-chunk-role", None, "confirmed"),
    row("chunk-shapes.first-chunk-role", first_chunk_with_null_content, "refuted"),
    row("chunk-shapes.finish-token", length_chunk_drops_a_whole_token, "refuted"),
    row("usage-in-stream.matches-non-streaming", None, "confirmed"),
    row("usage-in-stream.matches-non-streaming", answers_cut_at_max_tokens, "inconclusive"),
    row("detokenisation.server-whole-characters", no_held_characters, "refuted"),
    *[r for claim in NOT_RUNNING for r in (
        row(claim, None, "confirmed"),
        row(claim, nothing_running_at_disconnect, "inconclusive", contains="no request was running"))],
    row("cancel-direct.kv-freed", None, "confirmed"),
    row("cancel-direct.kv-freed", blocks_still_held_after_the_engine_stopped, "refuted"),
    row("cancel-direct.openai", engine_kept_running, "refuted"),
    row("cancel-direct.log-line", server_log_not_read, "inconclusive"),
    *[r for claim in TIMEOUT_CLAIMS for r in (
        row(claim, None, "confirmed"),
        row(claim, timeout_longer_than_what_was_timed, "inconclusive"))],
    row("client-retries.sequential-copies", None, "confirmed"),
    row("client-retries.sequential-copies", retried_copies_side_by_side, "refuted"),
    row("proxy-buffering.server-unaffected", None, "confirmed"),
    row("proxy-buffering.server-unaffected", server_ttft_differs_behind_one_proxy, "refuted"),
    row("proxy-buffering.nginx-streaming", None, "confirmed"),
    row("proxy-buffering.nginx-streaming", stream_of_one_event, "inconclusive"),
    row("stream-timing.e2e-parity", None, "confirmed"),
    row("stream-timing.e2e-parity", streaming_slower_in_every_pair, "refuted"),
    row("stream-timing.ttft-fraction", None, "confirmed"),
    row("stream-timing.ttft-fraction", first_token_a_third_of_the_answer, "refuted"),
    row("stream-timing.ttft-fraction", no_streamed_trial, "inconclusive"),
    row("api-server-cpu.streaming-costs-more", None, "confirmed"),
    row("api-server-cpu.streaming-costs-more", no_streamed_batch_at_concurrency_8, "inconclusive"),
    row("api-server-cpu.streaming-costs-more", streamed_and_non_streamed_swapped, "refuted"),
    row("api-server-cpu.streaming-costs-more", a_batch_read_without_the_process_clock, "inconclusive",
        contains="no reading of the API server's process clock"),
    row("api-server-cpu.streaming-costs-more", the_clock_of_another_process, "inconclusive",
        contains="the listener is pid"),
    row("api-server-cpu.streaming-costs-more", the_clock_standing_still, "inconclusive",
        contains="process clock did not move"),
    row("api-server-cpu.small-beside-engine", None, "confirmed"),
]

# The same, pinned at a boundary, on the records of both CPU profiles.
BOUNDARIES = [
    row("proxy-read-timeout.slow-first-token-cut", direct_first_text_at_the_timeout, "inconclusive",
        because="directly, the first text came after 2000 ms, not longer than the 2 s timeout"),
    row("proxy-read-timeout.slow-first-token-cut", direct_first_text_a_millisecond_past_the_timeout, "confirmed",
        starts="directly, the first text came after 2001 ms; through nginx with a 2 s read timeout: HTTP 200, "
               "no text received"),
    row("proxy-read-timeout.slow-first-token-cut", direct_stream_without_any_text, "inconclusive",
        because="directly, the first text came after n/a, not longer than the 2 s timeout"),
    row("proxy-read-timeout.slow-first-token-cut", text_through_nginx_before_the_cut, "refuted",
        contains="HTTP 200, text received"),
    row("proxy-read-timeout.slow-first-token-cut", stream_through_nginx_ended_with_done, "refuted",
        contains="HTTP 200, no text received"),
    row("proxy-read-timeout.slow-first-token-cut", a_504_from_nginx, "confirmed", contains="HTTP 504, no text received"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS) + cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


# --- detokenisation ---------------------------------------------------------------------------------------

def test_the_end_of_sequence_chunk_is_not_a_held_character():
    from verify.jobs.streaming.detokenisation import held_back
    chunks = record("detokenisation")["chunks"]
    last = chunks[-1]
    assert last["finish_reason"] == "stop" and last["token_ids"] and not last["content"]
    assert not held_back(last)
    held = [c for c in chunks if held_back(c)]
    assert held and all("\ufffd" in "".join(c["tokens_decoded_alone"]) for c in held)


# --- api-server-cpu ---------------------------------------------------------------------------------------

def _scale_api_cpu(batch: dict, factor: float) -> None:
    """Scale the API server's CPU used in a recorded batch (its process clock's reading after the batch)."""
    clock = batch["api_clock"]
    clock["after_s"] = clock["before_s"] + (clock["after_s"] - clock["before_s"]) * factor


def test_cpu_per_token_is_the_listener_and_the_engine_processes_over_generated_tokens():
    # The table's figures: the first process listed is the API server; the engine is core + worker only.
    from verify.jobs.streaming.api_server_cpu import cpu_per_token_ms
    batch = record("api-server-cpu")["batches"][0]
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    used = {p["name"]: p["cpu_s"] - before.get(p["pid"], 0.0) for p in batch["after"]}
    tokens = batch["generated_tokens"]
    got = cpu_per_token_ms(batch)
    clock = batch["api_clock"]  # the listener's CPU, by its process clock
    assert clock["pid"] == batch["after"][0]["pid"]
    assert got["api"] == round((clock["after_s"] - clock["before_s"]) / tokens * 1000, 3)
    assert got["engine"] == round((used["VLLM::EngineCore"] + used["VLLM::Worker"]) / tokens * 1000, 3)
    # A process named otherwise counts only when its command line says it is the engine.
    for p in batch["after"][1:]:
        p["name"] = "python"
    assert cpu_per_token_ms(batch)["engine"] == got["engine"]
    for p in batch["after"][1:]:
        p["cmdline"] = "python -m something-else"
    assert cpu_per_token_ms(batch)["engine"] == 0.0


@pytest.mark.parametrize("concurrency", sorted(api_server_cpu.LEVELS))
@pytest.mark.parametrize("nudge, expected", [(0.99, "refuted"), (1.01, "confirmed")], ids=["just-under", "just-over"])
def test_streaming_costs_more_needs_the_median_ratio_above_its_margin_at_every_concurrency(concurrency, nudge, expected):
    # Every streamed batch at this concurrency brought to just under, then just over, the margin.
    job = api_server_cpu
    edited = record("api-server-cpu")
    for n, s in zip(job.batches_of(edited, False, concurrency), job.batches_of(edited, True, concurrency)):
        ratio = job.cpu_per_token_ms(s)["api"] / job.cpu_per_token_ms(n)["api"]
        _scale_api_cpu(s, (1 + job.MORE_MARGIN) / ratio * nudge)
    verdict = decide("api-server-cpu", "streaming-costs-more", edited)
    assert verdict["verdict"] == expected, (nudge, verdict)
    assert f"concurrency {concurrency}: " in verdict["because"] and "threshold 1.10x" in verdict["because"]


def test_one_outlying_round_does_not_decide_streaming_costs_more():
    # The median of three rounds: one round where streaming looked cheaper leaves the verdict alone.
    job = api_server_cpu
    data = record("api-server-cpu")
    # A record that stopped after two rounds (the third could not change the verdict) gets its third round
    # as a deep copy of its first round's batches (real readings), numbered as the third.
    rounds = sorted({b["round"] for b in data["batches"]})
    for r in range(len(rounds), job.ROUNDS):
        data["batches"] += [{**copy.deepcopy(b), "round": r} for b in data["batches"] if b["round"] == rounds[0]]
    assert len({b["round"] for b in data["batches"]}) == job.ROUNDS
    for concurrency in job.LEVELS:
        _scale_api_cpu(job.batches_of(data, False, concurrency)[0], 2.5)
    assert decide("api-server-cpu", "streaming-costs-more", data)["verdict"] == "confirmed"
    for concurrency in job.LEVELS:
        _scale_api_cpu(job.batches_of(data, False, concurrency)[1], 2.5)
    assert decide("api-server-cpu", "streaming-costs-more", data)["verdict"] == "refuted"


@pytest.mark.parametrize("nudge, expected", [(0.99, "confirmed"), (1.001, "refuted")], ids=["just-under", "just-over"])
def test_small_beside_engine_fails_on_one_batch_at_its_share(nudge, expected):
    # "At most": the worst batch decides, and a share exactly at the threshold is not small.
    job = api_server_cpu
    data = record("api-server-cpu")
    batch = data["batches"][-1]
    c = job.cpu_per_token_ms(batch)
    # The API server's CPU per token before rounding: a small reading rounded to 1 us moves by more than the nudge.
    api = job.api_cpu_s(batch) / batch["generated_tokens"] * 1000
    _scale_api_cpu(batch, job.SMALL_SHARE * c["engine"] / api * nudge)
    verdict = decide("api-server-cpu", "small-beside-engine", data)
    assert verdict["verdict"] == expected
    if expected == "refuted":
        assert f"over {len(data['batches'])} batches" in verdict["because"]


# --- the probe's checks, which apply this article's rules to a server someone else runs -------------------

def test_probe_delivery_takes_the_least_grouped_of_its_streams():
    """Replays the proxy-buffering record's real captures (direct: one at a time; nginx-tls: in blocks).
    One clumped stream beside a smooth one is a late client, not a buffering path; only clumps every
    time say "differs"."""
    from verify.probe.checks import delivery_check
    captures = store.load("proxy-buffering", "cpu")["data"]["captures"]
    direct, blocks = captures["direct"], captures["nginx-tls"]
    assert delivery_check([direct]).verdict == "ok"
    assert delivery_check([blocks]).verdict == "differs"
    assert delivery_check([blocks, direct]).verdict == "ok"
    assert delivery_check([blocks, blocks, blocks]).verdict == "differs"
    assert "least grouped of 2 streams" in delivery_check([blocks, direct]).measured


@pytest.mark.parametrize("job_id, path, link", [
    ("proxy-buffering", "direct", "streaming/#experiment-4"),
    ("proxy-buffering", "nginx-tls", "streaming/#claim-proxy-buffering--nginx-tls"),
    ("proxy-buffering", "nginx-default", "streaming/#claim-proxy-buffering--nginx-default"),
    ("other-proxies", "caddy-tls", "streaming/#claim-other-proxies--caddy-tls"),
    ("other-proxies", "caddy-default", "streaming/#claim-other-proxies--caddy-default"),
    ("other-proxies", "haproxy-default", "streaming/#experiment-4"),
])
def test_probe_links_the_claim_of_the_proxy_the_headers_name(job_id, path, link):
    """The headers of real recorded streams: nginx's Server header, Caddy's 'Caddy, uvicorn', and
    HAProxy's untouched 'uvicorn' (which names no proxy, so the candidates are linked)."""
    from verify.probe.checks import delivery_check
    # The listener probed: TLS termination where the set-up has it.
    url = ("https" if path.endswith("tls") else "http") + "://127.0.0.1:8443/v1"
    result = delivery_check([store.load(job_id, "cpu")["data"]["captures"][path]], url)
    assert result.claim == link
    assert ("no proxy named itself" in result.measured) == (link == "streaming/#experiment-4")


def test_probe_first_chunk_is_the_chunk_shapes_rule():
    """The probe's first-chunk check on a real recorded stream, then on the same stream with null content."""
    from verify.probe.checks import first_chunk_check
    stream = next(iter(record("chunk-shapes")["streams"].values()))
    assert first_chunk_check(stream).verdict == "ok"
    _null_first_content(stream)
    assert first_chunk_check(stream).verdict == "differs"
    # A stream that came back empty is a failed capture: it says nothing about the first chunk.
    assert first_chunk_check({"capture": "sse", "lines": []}).verdict == "unknown"


# --- cancellation: was_generating, why a trial cannot say anything ---------------------------------------

def _trial(profile: str, client: str = "httpx") -> tuple[dict, dict]:
    data = record("cancel-direct", profile)
    return data, data["trials"][client]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("client", ["httpx", "openai"])
def test_a_trial_is_live_only_with_a_request_running_and_generating_when_the_client_left(profile, client):
    from verify.jobs.streaming._cancellation import was_generating
    data, t = _trial(profile, client)
    assert t["running_at_disconnect"] and t["generated_at_disconnect"] and was_generating(t) is None
    generated = t["generated_at_disconnect"]
    seen = f" (the last reading before then was {t['disconnect_reading_age_s']:.2f} s old)"
    t["generated_at_disconnect"] = 0.0
    assert was_generating(t) == "the request had generated no token when the client left" + seen
    v = decide("cancel-direct", client, data)
    check(v, "inconclusive", ends=f": the request had generated no token when the client left{seen}, so the trial "
                                  f"shows nothing ({t.get('attempts', 1)} attempts)", contains=f", {client}: ")
    t["running_at_disconnect"] = 0.0
    assert was_generating(t) == "no request was running when the client left" + seen
    t["generated_at_disconnect"] = generated  # generated before, no longer running: still nothing to see
    assert was_generating(t) == "no request was running when the client left" + seen
    del t["disconnect_reading_age_s"]
    assert was_generating(t) == "no request was running when the client left (no reading before then)"
    t["running_at_disconnect"] = 1.0
    assert was_generating(t) is None
    del t["generated_at_disconnect"]
    assert was_generating(t) == "the request had generated no token when the client left (no reading before then)"
    del t["running_at_disconnect"]
    assert was_generating(t) == "no request was running when the client left (no reading before then)"
