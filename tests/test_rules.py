"""Verdict rules that must be able to fail: each is fed a committed record (captured from a real
vLLM server by `verify run`) with one thing changed to the opposite behaviour, and must give the
opposite verdict or inconclusive. No server output is invented: the changes are edits of real
captures, named in each test.
"""

from __future__ import annotations

import copy
import json

import pytest

from verify.captures import iter_captures
from verify.evidence import store
from verify.registry import all_jobs


def _record(job_id: str) -> dict:
    return copy.deepcopy(store.load(job_id, "cpu")["data"])


def _verdict(job_id: str, claim: str, data: dict) -> dict:
    return all_jobs()[job_id].decide(data)[f"{job_id}.{claim}"]


def _edit_chunks(stream: dict, edit) -> None:
    """Apply edit(chunk) to every JSON chunk of a recorded stream, keeping each line's arrival time."""
    for item in stream["lines"]:
        if item["line"].startswith("data: {"):
            chunk = json.loads(item["line"][6:])
            edit(chunk)
            item["line"] = "data: " + json.dumps(chunk)


def test_a_first_chunk_with_null_content_refutes_the_empty_string_claim():
    data = _record("chunk-shapes")
    assert _verdict("chunk-shapes", "first-chunk-role", data)["verdict"] == "confirmed"
    first = next(iter(data["streams"].values()))
    line = next(i for i in first["lines"] if i["line"].startswith("data: {"))
    chunk = json.loads(line["line"][6:])
    chunk["choices"][0]["delta"]["content"] = None
    line["line"] = "data: " + json.dumps(chunk)
    assert _verdict("chunk-shapes", "first-chunk-role", data)["verdict"] == "refuted"


def test_a_length_chunk_that_drops_a_whole_token_refutes_the_finish_token_rule():
    data = _record("chunk-shapes")
    name = next(k for k, t in data["finish_tokens"].items() if "\ufffd" in (t["decoded_alone"] or ""))
    data["finish_tokens"][name]["decoded_alone"] = " sea"  # a whole token, yet its chunk had no text
    assert _verdict("chunk-shapes", "finish-token", data)["verdict"] == "refuted"


def test_usage_compared_on_answers_cut_at_max_tokens_proves_nothing():
    data = _record("usage-in-stream")
    assert _verdict("usage-in-stream", "matches-non-streaming", data)["verdict"] == "confirmed"

    def to_length(chunk):
        for choice in chunk.get("choices", []):
            if choice.get("finish_reason"):
                choice["finish_reason"] = "length"
    _edit_chunks(data["raw_with"], to_length)
    data["non_streaming_finish_reason"] = "length"
    assert _verdict("usage-in-stream", "matches-non-streaming", data)["verdict"] == "inconclusive"


def test_the_end_of_sequence_chunk_is_not_a_held_character():
    from verify.jobs.streaming.detokenisation import held_back
    chunks = _record("detokenisation")["chunks"]
    last = chunks[-1]
    assert last["finish_reason"] == "stop" and last["token_ids"] and not last["content"]
    assert not held_back(last)
    held = [c for c in chunks if held_back(c)]
    assert held and all("\ufffd" in "".join(c["tokens_decoded_alone"]) for c in held)


def test_without_held_characters_the_server_claim_is_refuted():
    data = _record("detokenisation")
    for c in data["chunks"]:
        c["tokens_decoded_alone"] = ["x" for _ in c["tokens_decoded_alone"]]
    assert _verdict("detokenisation", "server-whole-characters", data)["verdict"] == "refuted"


@pytest.mark.parametrize("job_id, claim", [("cancel-direct", "httpx"), ("cancel-nginx-tls", "openai"),
                                           ("cancel-nginx-ignore-abort", "non-streaming-keeps-running")])
def test_a_request_that_was_not_running_when_the_client_left_proves_nothing(job_id, claim):
    data = _record(job_id)
    assert _verdict(job_id, claim, data)["verdict"] == "confirmed"
    for trial in data["trials"].values():
        trial["running_at_disconnect"] = 0
        trial["generated_at_disconnect"] = 0
    verdict = _verdict(job_id, claim, data)
    assert verdict["verdict"] == "inconclusive" and "no request was running" in verdict["because"]


def test_blocks_still_held_after_the_engine_stopped_refute_kv_freed():
    data = _record("cancel-direct")
    assert _verdict("cancel-direct", "kv-freed", data)["verdict"] == "confirmed"
    trial = data["trials"]["httpx"]
    trial["kv_cache_usage_after"] = trial["kv_cache_usage_at_disconnect"]
    assert _verdict("cancel-direct", "kv-freed", data)["verdict"] == "refuted"


def test_an_engine_that_kept_running_refutes_cancellation():
    data = _record("cancel-direct")
    trial = data["trials"]["openai"]
    trial["stop_after_disconnect_s"], trial["generated_tokens"] = None, trial["max_tokens"]
    assert _verdict("cancel-direct", "openai", data)["verdict"] == "refuted"


def test_a_log_that_was_not_read_is_inconclusive_not_refuted():
    data = _record("cancel-direct")
    for trial in data["trials"].values():
        trial["server_log_read"], trial["abort_log_lines"] = False, []
    assert _verdict("cancel-direct", "log-line", data)["verdict"] == "inconclusive"


def test_a_timeout_longer_than_what_was_timed_directly_cannot_show_a_cut():
    """A prefill, a generation and a stream all shorter than the timeout: none of the three can decide."""
    data = _record("proxy-read-timeout")
    claims = ("slow-first-token-cut", "non-streaming-cut", "long-stream-completes")
    assert {_verdict("proxy-read-timeout", c, data)["verdict"] for c in claims} == {"confirmed"}
    data["timeout_s"] = 600.0
    assert {_verdict("proxy-read-timeout", c, data)["verdict"] for c in claims} == {"inconclusive"}


def test_an_up_front_reservation_would_be_seen():
    data = _record("kv-reservation")
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "refuted"
    full = 1.0  # every block in use from the first token: what a reservation near the context would show
    data["large"]["readings"] = [[n, full, e] for n, _, e in data["large"]["readings"]]
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "confirmed"


def test_retried_copies_running_side_by_side_refute_sequential_copies():
    data = _record("client-retries")
    assert _verdict("client-retries", "sequential-copies", data)["verdict"] == "confirmed"
    data["default_retries"]["max_running"] = 2
    assert _verdict("client-retries", "sequential-copies", data)["verdict"] == "refuted"


def test_the_same_server_ttft_behind_every_proxy_is_required():
    data = _record("proxy-buffering")
    assert _verdict("proxy-buffering", "server-unaffected", data)["verdict"] == "confirmed"
    data["server_side"]["nginx-tls"]["vllm:time_to_first_token_seconds_sum"] += 3.0
    assert _verdict("proxy-buffering", "server-unaffected", data)["verdict"] == "refuted"


def test_a_chat_template_that_gave_no_token_ids_is_inconclusive():
    data = _record("offline-chat")
    assert _verdict("offline-chat", "template-applied", data)["verdict"] == "confirmed"
    data["template_token_ids"] = ["input_ids", "attention_mask"]  # a BatchEncoding read as a list
    assert _verdict("offline-chat", "template-applied", data)["verdict"] == "inconclusive"
    data["template_token_ids"] = data["generate"]["prompt_token_ids"]  # the template added nothing
    assert _verdict("offline-chat", "template-applied", data)["verdict"] == "refuted"


def test_generation_defaults_rules_follow_the_recorded_lengths():
    data = _record("offline-generation-defaults")
    claims = ("no-params-follow-model", "explicit-replaces-all", "start-from-defaults", "server-fills-gaps")
    for claim in claims:
        assert _verdict("offline-generation-defaults", claim, data)["verdict"] == "confirmed"
    # A new SamplingParams whose answers ran to the model's max_new_tokens kept a model default.
    kept = copy.deepcopy(data)
    for out in kept["ways"]["SamplingParams(temperature=0)"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = kept["model_defaults"]["max_new_tokens"]
    assert _verdict("offline-generation-defaults", "explicit-replaces-all", kept)["verdict"] == "refuted"
    # A changed copy of the defaults that lost the model's max_new_tokens.
    lost = copy.deepcopy(data)
    for out in lost["ways"]["model defaults, temperature=0"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = 16
    assert _verdict("offline-generation-defaults", "start-from-defaults", lost)["verdict"] == "refuted"
    # A server that ignored the model's max_new_tokens: answers run past it.
    past = copy.deepcopy(data)
    for answer in past["server"]["temperature only"]["answers"]:
        answer["tokens"] = 40
    assert _verdict("offline-generation-defaults", "server-fills-gaps", past)["verdict"] == "refuted"
    # Answers that all ended on their own cannot show where the length limit was.
    natural = copy.deepcopy(data)
    for out in natural["ways"]["no SamplingParams"]["outputs"]:
        out["finish_reason"] = "stop"
    assert _verdict("offline-generation-defaults", "no-params-follow-model", natural)["verdict"] == "inconclusive"


def test_a_failed_server_request_makes_generation_defaults_inconclusive():
    data = _record("offline-generation-defaults")
    data["server"]["temperature only"]["answers"][0].update(status=500, events=0)
    verdicts = all_jobs()["offline-generation-defaults"].decide(data)
    assert {v["verdict"] for v in verdicts.values()} == {"inconclusive"}


def test_offline_vs_server_rules_can_fail():
    data = _record("offline-vs-server")
    for claim in ("server-caps-running", "larger-limits", "throughput", "same-outputs"):
        assert _verdict("offline-vs-server", claim, data)["verdict"] == "confirmed"
    # A server that ran the whole batch at once caps nothing.
    uncapped = copy.deepcopy(data)
    for trial in uncapped["server"]["trials"]:
        trial.update(peak_running=uncapped["prompts"], peak_waiting=0)
    assert _verdict("offline-vs-server", "server-caps-running", uncapped)["verdict"] == "refuted"
    assert _verdict("offline-vs-server", "larger-limits", uncapped)["verdict"] == "refuted"
    # Requests waiting because the whole batch would not fit in the KV cache: a memory limit.
    full = copy.deepcopy(data)
    full["server"]["trials"][0]["peak_kv_usage"] = 0.95
    assert _verdict("offline-vs-server", "server-caps-running", full)["verdict"] == "refuted"
    # An offline engine twice as slow as the server.
    slow = copy.deepcopy(data)
    fastest_server = min(t["seconds"] for t in slow["server"]["trials"])
    for trial in slow["offline"]["trials"]:
        trial["seconds"] = fastest_server * 2
    assert _verdict("offline-vs-server", "throughput", slow)["verdict"] == "refuted"
    # One answer that came out differently through the server.
    changed = copy.deepcopy(data)
    changed["server"]["trials"][1]["texts"][0] += " (changed)"
    assert _verdict("offline-vs-server", "same-outputs", changed)["verdict"] == "refuted"
    # Start-up: markedly sooner only when the offline start beats the fastest server start by over 25 %.
    early = copy.deepcopy(data)
    early["offline"]["starts_s"] = [min(early["server"]["starts_s"]) * 0.5]
    assert _verdict("offline-vs-server", "starts-sooner", early)["verdict"] == "confirmed"
    early["offline"]["starts_s"] = [min(early["server"]["starts_s"]) * 0.9]  # a lead within the noise
    assert _verdict("offline-vs-server", "starts-sooner", early)["verdict"] == "refuted"


def test_a_failed_server_batch_makes_offline_vs_server_inconclusive():
    data = _record("offline-vs-server")
    data["server"]["trials"][0].update(error="APIConnectionError: Connection error.", events=0, texts=[])
    verdicts = all_jobs()["offline-vs-server"].decide(data)
    assert {v["verdict"] for v in verdicts.values()} == {"inconclusive"}


def test_an_empty_chat_answer_is_a_failed_capture_not_a_different_answer():
    data = _record("offline-chat")
    assert _verdict("offline-chat", "answers-differ", data)["verdict"] == "confirmed"
    data["chat"].update(text="", events=0)  # chat() returned no tokens at all
    verdicts = all_jobs()["offline-chat"].decide(data)
    assert {v["verdict"] for v in verdicts.values()} == {"inconclusive"}


def test_kv_sizing_reads_either_releases_report_and_cannot_decide_without_it():
    """0.32.0 logs the KV cache report on one line, 0.27.0 on two: both real records decide; a report
    missing its concurrency line (edited out of the 0.27.0 record) decides nothing."""
    one_line = _record("kv-sizing")
    two_lines = copy.deepcopy(store.load("kv-sizing", "cpu-oldest")["data"])
    assert len(one_line["report"]["lines"]) == 1 and len(two_lines["report"]["lines"]) == 2
    for data in (one_line, two_lines):
        assert _verdict("kv-sizing", "max-concurrency", data)["verdict"] == "confirmed"
    two_lines["report"]["lines"] = [ln for ln in two_lines["report"]["lines"] if "Maximum concurrency" not in ln]
    assert _verdict("kv-sizing", "max-concurrency", two_lines)["verdict"] == "inconclusive"


def test_stream_timing_rules_can_fail():
    data = _record("stream-timing")
    assert _verdict("stream-timing", "e2e-parity", data)["verdict"] == "confirmed"
    assert _verdict("stream-timing", "ttft-fraction", data)["verdict"] == "confirmed"
    # Streaming 30 % slower in every pair: no parity.
    slow = copy.deepcopy(data)
    for t in slow["trials"]["streaming"]:
        t["e2e"] *= 1.3
    assert _verdict("stream-timing", "e2e-parity", slow)["verdict"] == "refuted"
    # A first token that takes a third of the answer's time.
    late = copy.deepcopy(data)
    for t in late["trials"]["streaming"]:
        t["ttft"] = t["e2e"] / 3
    assert _verdict("stream-timing", "ttft-fraction", late)["verdict"] == "refuted"
    # No streamed trial: nothing to decide from.
    empty = copy.deepcopy(data)
    empty["trials"]["streaming"] = []
    assert _verdict("stream-timing", "ttft-fraction", empty)["verdict"] == "inconclusive"


def test_offline_vs_server_start_up_needs_a_timed_start_of_each():
    data = _record("offline-vs-server")
    data["offline"]["starts_s"] = []  # a run whose offline engine was not started from a fresh process
    assert _verdict("offline-vs-server", "starts-sooner", data)["verdict"] == "inconclusive"


def test_metrics_endpoint_rule_needs_vllm_samples():
    data = _record("server-endpoints")
    assert _verdict("server-endpoints", "metrics-prometheus", data)["verdict"] == "confirmed"
    data["endpoints"]["GET /metrics"]["vllm_samples"] = 0  # a Prometheus page of some other program
    assert _verdict("server-endpoints", "metrics-prometheus", data)["verdict"] == "refuted"


def test_a_400_that_does_not_name_the_parameter_is_not_its_rejection():
    data = _record("parameter-validation")
    for claim in ("greedy-n-rejected", "temperature-range"):
        assert _verdict("parameter-validation", claim, data)["verdict"] == "confirmed"
    for case in data["cases"].values():
        if case["status"] == 400:  # what a broken base body would give: a 400 about something else
            case["body"]["error"]["message"] = "messages: field required"
    for claim in ("greedy-n-rejected", "temperature-range"):
        assert _verdict("parameter-validation", claim, data)["verdict"] == "refuted"
    # No rejection at all: whether rejections name their parameter cannot be judged.
    assert _verdict("parameter-validation", "error-names-parameter", data)["verdict"] == "inconclusive"


def test_error_types_need_error_objects():
    data = _record("request-handling")
    assert _verdict("request-handling", "error-types-differ", data)["verdict"] == "confirmed"
    for name in ("unknown model", "seed not a number", "temperature 3"):
        data["cases"][name]["body"] = {}
    assert _verdict("request-handling", "error-types-differ", data)["verdict"] == "inconclusive"
    data = _record("request-handling")
    data["cases"]["temperature 3"]["body"]["error"]["type"] = "invalid_request_error"  # OpenAI's own type
    assert _verdict("request-handling", "error-types-differ", data)["verdict"] == "refuted"


def test_a_stream_of_one_event_cannot_show_buffering():
    data = _record("proxy-buffering")
    assert _verdict("proxy-buffering", "nginx-streaming", data)["verdict"] == "confirmed"
    capture = data["captures"]["nginx-streaming"]
    first = next(i for i, item in enumerate(capture["lines"]) if item["line"].startswith("data: "))
    capture["lines"] = capture["lines"][:first + 1]
    assert _verdict("proxy-buffering", "nginx-streaming", data)["verdict"] == "inconclusive"


def test_a_reservation_is_refuted_only_when_both_requests_held_the_same_blocks():
    data = _record("kv-reservation")
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "refuted"
    assert _verdict("kv-reservation", "grows-by-block", data)["verdict"] == "confirmed"
    # The small request held one block more at every reading: the block-by-block comparison fails.
    step = 1 / data["num_blocks"]
    data["small"]["readings"] = [[n, u + step, e] for n, u, e in data["small"]["readings"]]
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "inconclusive"
    # A request that held one block more than its tokens need: not growth block by block.
    ahead = _record("kv-reservation")
    ahead["large"]["readings"] = [[n, u + step, e] for n, u, e in ahead["large"]["readings"]]
    assert _verdict("kv-reservation", "grows-by-block", ahead)["verdict"] == "refuted"


def test_empty_answers_prove_no_reproducibility():
    data = _record("reproducibility")
    assert _verdict("reproducibility", "greedy-in-a-row", data)["verdict"] == "confirmed"
    for group in ("greedy", "seeded"):
        data[group]["in_a_row"] = ["" for _ in data[group]["in_a_row"]]
        data[group]["among_others"] = ["" for _ in data[group]["among_others"]]
    for claim in ("greedy-in-a-row", "greedy-among-others", "seed-in-a-row", "seed-among-others"):
        assert _verdict("reproducibility", claim, data)["verdict"] == "inconclusive"


def test_defaults_when_unset_reads_the_models_generation_config():
    data = _record("sampling-behaviour")
    assert _verdict("sampling-behaviour", "defaults-when-unset", data)["verdict"] == "confirmed"
    data["model_generation_config"]["temperature"] = 0.6  # a model that ships its own default
    assert _verdict("sampling-behaviour", "defaults-when-unset", data)["verdict"] == "refuted"


def test_the_console_script_must_fail_for_its_known_reason():
    data = _record("launch-path")
    assert _verdict("launch-path", "cpu-console-script-fails", data)["verdict"] == "confirmed"
    other = copy.deepcopy(data)
    other["vllm_command"]["last_line"] = ["error: unrecognized arguments: --version"]
    assert _verdict("launch-path", "cpu-console-script-fails", other)["verdict"] == "inconclusive"
    missing = copy.deepcopy(data)
    missing["vllm_command"] = {"exit_code": None, "last_line": ["no vllm command installed"]}
    assert _verdict("launch-path", "cpu-console-script-fails", missing)["verdict"] == "inconclusive"
    works = copy.deepcopy(data)
    works["vllm_command"] = {"exit_code": 0, "last_line": ["0.32.0"]}
    assert _verdict("launch-path", "cpu-console-script-fails", works)["verdict"] == "refuted"


def _scale_api_cpu(batch: dict, factor: float) -> None:
    """Scale the API server's CPU used in a recorded batch (its listener's reading after the batch)."""
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    listener = batch["after"][0]
    start = before.get(listener["pid"], 0.0)
    listener["cpu_s"] = start + (listener["cpu_s"] - start) * factor


def test_cpu_per_token_is_the_listener_and_the_engine_processes_over_generated_tokens():
    # The table's figures: the first process listed is the API server; the engine is core + worker only.
    from verify.jobs.streaming.api_server_cpu import cpu_per_token_ms
    batch = _record("api-server-cpu")["batches"][0]
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    used = {p["name"]: p["cpu_s"] - before.get(p["pid"], 0.0) for p in batch["after"]}
    tokens = batch["generated_tokens"]
    got = cpu_per_token_ms(batch)
    assert got["api"] == round((batch["after"][0]["cpu_s"] - before[batch["after"][0]["pid"]]) / tokens * 1000, 3)
    assert got["engine"] == round((used["VLLM::EngineCore"] + used["VLLM::Worker"]) / tokens * 1000, 3)
    # A process named otherwise counts only when its command line says it is the engine.
    for p in batch["after"][1:]:
        p["name"] = "python"
    assert cpu_per_token_ms(batch)["engine"] == got["engine"]
    for p in batch["after"][1:]:
        p["cmdline"] = "python -m something-else"
    assert cpu_per_token_ms(batch)["engine"] == 0.0


def test_streaming_costs_more_needs_the_median_ratio_above_its_margin_at_every_concurrency():
    from verify.jobs.streaming import api_server_cpu as job
    data = _record("api-server-cpu")
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] == "confirmed"
    for concurrency in job.LEVELS:
        # Every streamed batch at this concurrency brought to just under, then just over, the margin.
        for nudge, expected in ((0.99, "refuted"), (1.01, "confirmed")):
            edited = copy.deepcopy(data)
            for n, s in zip(job._by(edited, False, concurrency), job._by(edited, True, concurrency)):
                ratio = job.cpu_per_token_ms(s)["api"] / job.cpu_per_token_ms(n)["api"]
                _scale_api_cpu(s, (1 + job.MORE_MARGIN) / ratio * nudge)
            verdict = _verdict("api-server-cpu", "streaming-costs-more", edited)
            assert verdict["verdict"] == expected, (nudge, verdict)
            assert f"concurrency {concurrency}: " in verdict["because"] and "threshold 1.10x" in verdict["because"]


def test_one_outlying_round_does_not_decide_streaming_costs_more():
    # The median of three rounds: one round where streaming looked cheaper leaves the verdict alone.
    from verify.jobs.streaming import api_server_cpu as job
    data = _record("api-server-cpu")
    for concurrency in job.LEVELS:
        _scale_api_cpu(job._by(data, False, concurrency)[0], 2.5)
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] == "confirmed"
    for concurrency in job.LEVELS:
        _scale_api_cpu(job._by(data, False, concurrency)[1], 2.5)
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] == "refuted"


def test_streaming_costs_more_without_a_pair_at_a_concurrency_is_inconclusive():
    data = _record("api-server-cpu")
    data["batches"] = [b for b in data["batches"] if not (b["concurrency"] == 8 and b["stream"])]
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] == "inconclusive"


def test_small_beside_engine_fails_on_one_batch_at_its_share():
    # "At most": the worst batch decides, and a share exactly at the threshold is not small.
    from verify.jobs.streaming import api_server_cpu as job
    data = _record("api-server-cpu")
    assert _verdict("api-server-cpu", "small-beside-engine", data)["verdict"] == "confirmed"
    last = data["batches"][-1]
    c = job.cpu_per_token_ms(last)
    below = copy.deepcopy(data)
    _scale_api_cpu(below["batches"][-1], job.SMALL_SHARE * c["engine"] / c["api"] * 0.99)
    assert _verdict("api-server-cpu", "small-beside-engine", below)["verdict"] == "confirmed"
    _scale_api_cpu(last, job.SMALL_SHARE * c["engine"] / c["api"] * 1.001)
    verdict = _verdict("api-server-cpu", "small-beside-engine", data)
    assert verdict["verdict"] == "refuted" and f"over {len(data['batches'])} batches" in verdict["because"]


def test_a_batch_just_at_the_tick_floor_is_fine_and_one_below_it_is_too_coarse():
    from verify.jobs.streaming import api_server_cpu as job
    data = _record("api-server-cpu")
    batch = data["batches"][0]
    before = {p["pid"]: p["cpu_s"] for p in batch["before"]}
    batch["after"][0]["cpu_s"] = before[batch["after"][0]["pid"]] + job.MIN_TICKS * job.TICK_S * 1.01
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] != "inconclusive"
    batch["after"][0]["cpu_s"] = before[batch["after"][0]["pid"]] + job.MIN_TICKS * job.TICK_S * 0.95
    verdict = _verdict("api-server-cpu", "streaming-costs-more", data)
    assert verdict["verdict"] == "inconclusive" and "fewer than 20 clock ticks" in verdict["because"]


def test_api_server_cpu_needs_batches_that_span_enough_clock_ticks():
    data = _record("api-server-cpu")
    assert _verdict("api-server-cpu", "streaming-costs-more", data)["verdict"] == "confirmed"
    # Streamed and non-streamed swapped: streaming would cost less.
    swapped = copy.deepcopy(data)
    for b in swapped["batches"]:
        b["stream"] = not b["stream"]
    assert _verdict("api-server-cpu", "streaming-costs-more", swapped)["verdict"] == "refuted"
    # Batches too small for the 10 ms clock: the API server's CPU readings barely move.
    coarse = copy.deepcopy(data)
    for b in coarse["batches"]:
        before = {p["pid"]: p["cpu_s"] for p in b["before"]}
        listener = b["after"][0]
        listener["cpu_s"] = before.get(listener["pid"], 0.0) + 0.05
    assert _verdict("api-server-cpu", "streaming-costs-more", coarse)["verdict"] == "inconclusive"


def test_an_unread_server_log_is_a_failed_capture():
    for job_id in ("request-endings", "request-handling"):
        data = _record(job_id)
        reads = [c for _, c in iter_captures(data) if c["capture"] == "server-log"]
        assert reads, f"{job_id} records no log read"
        for c in reads:
            c.update(events=0, lines_read=0)
        verdicts = all_jobs()[job_id].decide(data)
        assert {v["verdict"] for v in verdicts.values()} == {"inconclusive"}


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
    check = delivery_check([store.load(job_id, "cpu")["data"]["captures"][path]], url)
    assert check.claim == link
    assert ("no proxy named itself" in check.measured) == (link == "streaming/#experiment-4")


def test_probe_first_chunk_is_the_chunk_shapes_rule():
    """The probe's first-chunk check on a real recorded stream, then on the same stream with null content."""
    from verify.probe.checks import first_chunk_check
    stream = next(iter(_record("chunk-shapes")["streams"].values()))
    assert first_chunk_check(stream).verdict == "ok"
    line = next(i for i in stream["lines"] if i["line"].startswith("data: {"))
    chunk = json.loads(line["line"][6:])
    chunk["choices"][0]["delta"]["content"] = None
    line["line"] = "data: " + json.dumps(chunk)
    assert first_chunk_check(stream).verdict == "differs"
    # A stream that came back empty is a failed capture: it says nothing about the first chunk.
    assert first_chunk_check({"capture": "sse", "lines": []}).verdict == "unknown"


def test_server_ttft_needs_one_observation_of_each_histogram_per_trial():
    """ttft-clocks: a histogram that did not move is not a 0 s queue or prefill."""
    data = _record("ttft-clocks")
    for trial in data["trials"]:
        del trial["histograms"]["vllm:request_queue_time_seconds_count"]
        trial["histograms"].pop("vllm:request_queue_time_seconds_sum", None)
    assert _verdict("ttft-clocks", "covers-queue-and-prefill", data)["verdict"] == "inconclusive"
    data = _record("ttft-clocks")
    data["trials"][0]["histograms"]["vllm:time_to_first_token_seconds_count"] = 2.0
    assert _verdict("ttft-clocks", "server-shorter", data)["verdict"] == "inconclusive"
