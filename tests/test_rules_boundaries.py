"""Verdict rules pinned at their boundaries, on committed records of both CPU profiles.

Each test loads a real record (captured from a live vLLM server by `verify run`), edits it at one
threshold, one list position or one clause of a compound condition, and asserts the exact verdict,
reason or helper value. A rule whose `<` became `<=`, whose index moved or whose `and` became `or`
reads these records differently and fails here.
"""

from __future__ import annotations

import copy
import json

import pytest

from tests.test_rules import _verdict
from verify.evidence import store

PROFILES = ("cpu", "cpu-oldest")


def _record(job_id: str, profile: str = "cpu") -> dict:
    return copy.deepcopy(store.load(job_id, profile)["data"])


def _compact(chunk: dict) -> str:
    """A chunk written back as the server writes it: 'data: ' and compact JSON."""
    return "data: " + json.dumps(chunk, separators=(",", ":"))


# --- kv-reservation: decide_reserved and its helpers (_running, _off_growth) -------------------------

def _at(request: dict, engine_tokens: int) -> list:
    """The reading taken when the engine had generated engine_tokens tokens."""
    return next(r for r in request["readings"] if r[2] == engine_tokens)


def _hold(d: dict, reading: list, blocks: int) -> None:
    """Make one reading show exactly `blocks` KV cache blocks in use."""
    reading[1] = blocks / d["num_blocks"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_first_reading_exactly_at_the_reservation_confirms_it_even_with_other_blocks_later(profile):
    # Boundary first == reserved: reaching the reservation is enough (>=), and it is not "less than" it (<).
    data = _record("kv-reservation", profile)
    _hold(data, data["large"]["readings"][0], 15)  # ceil((38 + 1800) / 128) = 15 blocks
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "confirmed"
    assert "held 15 block(s) after its first token (a reservation would be 15 of 182 blocks" in v["because"]
    assert v["because"].endswith("with max_tokens 260 it held other blocks")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_first_reading_one_block_short_of_the_reservation_with_off_growth_decides_nothing(profile):
    # Boundary first == reserved - 1: less than a reservation, but growth is off, so neither way is shown.
    data = _record("kv-reservation", profile)
    _hold(data, data["large"]["readings"][0], 14)
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "inconclusive"
    assert v["because"].startswith("with max_tokens 1800 the request held 14 block(s), less than a reservation (15)")


@pytest.mark.parametrize("profile", PROFILES)
def test_only_the_reading_after_the_first_token_is_compared_with_the_reservation(profile):
    # First vs second element: a reservation seen only at the second reading is not "from the start".
    data = _record("kv-reservation", profile)
    _hold(data, data["large"]["readings"][1], 15)
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "inconclusive"
    assert "held 1 block(s), less than a reservation (15)" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_max_tokens_whose_reservation_is_the_one_block_held_confirms_a_reservation(profile):
    # Boundary reserved == first with growth as needed: 38 + 90 tokens fill exactly one 128-token block.
    data = _record("kv-reservation", profile)
    data["large"]["max_tokens"] = 90
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "confirmed"
    assert "held 1 block(s) after its first token (a reservation would be 1 of 182 blocks" in v["because"]
    assert v["because"].endswith("as with the larger one")


@pytest.mark.parametrize("profile", PROFILES)
def test_one_max_token_past_a_one_block_reservation_refutes_it(profile):
    # Boundary reserved == first + 1: 38 + 91 tokens need a second block that the request never held at first.
    data = _record("kv-reservation", profile)
    data["large"]["max_tokens"] = 91
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "refuted"
    assert "(a reservation would be 2 of 182 blocks of 128 tokens)" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_reason_for_an_undecided_reservation_lists_three_off_readings_of_each_request(profile):
    # The reason names at most three off readings per request, large first: what a reader checks by hand.
    data = _record("kv-reservation", profile)
    for n in (11, 12, 13, 14):
        _hold(data, _at(data["large"], n), 3)
    for n in (41, 42, 43, 44):
        _hold(data, _at(data["small"], n), 2)
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v == {"verdict": "inconclusive",
                 "because": "with max_tokens 1800 the request held 1 block(s), less than a reservation (15), but not, "
                            "at every reading, the blocks its tokens need (off: max_tokens 1800 [(11, 3), (12, 3), "
                            "(13, 3)], max_tokens 260 [(41, 2), (42, 2), (43, 2)])"}


@pytest.mark.parametrize("profile", PROFILES)
def test_one_off_reading_of_the_large_request_alone_keeps_the_reservation_undecided(profile):
    # Each half of "both requests grew as needed" separately false: the large one here.
    data = _record("kv-reservation", profile)
    _hold(data, _at(data["large"], 50), 2)
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "inconclusive"
    assert "(off: max_tokens 1800 [(50, 2)], max_tokens 260 [])" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_one_off_reading_of_the_small_request_alone_keeps_the_reservation_undecided(profile):
    # Each half of "both requests grew as needed" separately false: the small one here.
    data = _record("kv-reservation", profile)
    _hold(data, _at(data["small"], 50), 2)
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "inconclusive"
    assert "(off: max_tokens 1800 [], max_tokens 260 [(50, 2)])" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_running_drops_only_the_reading_taken_once_the_engine_had_all_max_tokens(profile):
    # Boundary engine count == max_tokens: that reading is after the request finished; max_tokens - 1 is not.
    from verify.jobs.kv_cache.kv_reservation import _running
    small = _record("kv-reservation", profile)["small"]
    running = _running(small)
    assert [r[2] for r in running["readings"]][-2:] == [258, 259]
    assert len(running["readings"]) == len(small["readings"]) - 1 == 259
    assert {k: v for k, v in running.items() if k != "readings"} == {k: v for k, v in small.items() if k != "readings"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_freed_cache_while_the_engine_still_lacked_one_token_is_an_off_reading(profile):
    # Boundary engine count == max_tokens - 1: the request was still running, so 0 blocks held is off.
    data = _record("kv-reservation", profile)
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "refuted"
    data["small"]["readings"][-1][2] = 259  # the last reading (0 blocks) taken one token before the end
    v = _verdict("kv-reservation", "reserved-up-front", data)
    assert v["verdict"] == "inconclusive"
    assert "max_tokens 260 [(259, 0)]" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("engine_tokens, blocks", [(90, 2), (91, 2), (91, 1), (92, 2)])
def test_blocks_within_one_token_of_the_engine_count_are_what_its_tokens_need(profile, engine_tokens, blocks):
    # ENGINE_SLACK either way: 38 + 90 tokens fill block 1; at 90 or 91 engine tokens 1 or 2 blocks are right.
    data = _record("kv-reservation", profile)
    _hold(data, _at(data["large"], engine_tokens), blocks)
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "refuted"
    assert _verdict("kv-reservation", "grows-by-block", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("engine_tokens, blocks", [(89, 2), (92, 1), (93, 1)])
def test_blocks_two_tokens_away_from_the_engine_count_are_off(profile, engine_tokens, blocks):
    # Just past ENGINE_SLACK: a second block at 89 tokens is early, one block at 92 or 93 is late.
    data = _record("kv-reservation", profile)
    _hold(data, _at(data["large"], engine_tokens), blocks)
    v = _verdict("kv-reservation", "grows-by-block", data)
    assert v["verdict"] == "refuted" and f"{[(engine_tokens, blocks)]}" in v["because"]
    assert _verdict("kv-reservation", "reserved-up-front", data)["verdict"] == "inconclusive"


# --- kv-sizing: _reported and the rules that read it --------------------------------------------------

def _report_without(data: dict, pattern) -> None:
    """Cut one part of the start-up report out of the log line(s) that carry it; the lines stay."""
    data["report"]["lines"] = [pattern.sub("", line) for line in data["report"]["lines"]]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_start_up_report_reads_as_the_exact_numbers_the_server_logged(profile):
    # The helper's exact return for a real report: "23,296" as 23296, "2,048" as 2048, "11.38x" as 11.38.
    from verify.jobs.kv_cache.kv_sizing import _reported
    assert _reported(_record("kv-sizing", profile)) == {"tokens": 23296, "per_request": 2048, "concurrency": 11.38}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_report_without_its_concurrency_part_says_which_line_is_missing(profile):
    # Only the size present (one of the two parts): nothing is decided, and the reason names the missing line.
    from verify.jobs.kv_cache.kv_sizing import CONCURRENCY
    data = _record("kv-sizing", profile)
    _report_without(data, CONCURRENCY)
    for claim in ("size-from-memory", "max-concurrency"):
        assert _verdict("kv-sizing", claim, data) == {
            "verdict": "inconclusive", "because": "the recorded data cannot decide this (ValueError: the start-up "
                                                  "report lacks its concurrency line)"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_report_without_its_size_part_says_which_line_is_missing(profile):
    # Only the concurrency present: the other part missing, named as such.
    from verify.jobs.kv_cache.kv_sizing import SIZE
    data = _record("kv-sizing", profile)
    _report_without(data, SIZE)
    for claim in ("size-from-memory", "max-concurrency"):
        assert _verdict("kv-sizing", claim, data) == {
            "verdict": "inconclusive", "because": "the recorded data cannot decide this (ValueError: the start-up "
                                                  "report lacks its size line)"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_reported_size_one_block_short_of_the_worked_out_cache_refutes_the_size(profile):
    # The token half of the size rule alone false: 181 x 128 = 23,168 tokens reported, 182 blocks worked out.
    data = _record("kv-sizing", profile)
    data["report"]["lines"] = [line.replace("23,296 tokens", "23,168 tokens") for line in data["report"]["lines"]]
    v = _verdict("kv-sizing", "size-from-memory", data)
    assert v["verdict"] == "refuted" and v["because"].endswith("the server reported 182 blocks and 23,168 tokens")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_reported_block_count_that_differs_refutes_the_size_even_when_the_tokens_agree(profile):
    # The block half of the size rule alone false: the log's tokens still match what is worked out.
    data = _record("kv-sizing", profile)
    data["cache_config"]["num_gpu_blocks"] = "181"
    v = _verdict("kv-sizing", "size-from-memory", data)
    assert v["verdict"] == "refuted" and v["because"].endswith("the server reported 181 blocks and 23,296 tokens")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reported, verdict", [("11.38", "confirmed"), ("11.384", "confirmed"),
                                               ("11.366", "confirmed"), ("11.386", "refuted"),
                                               ("11.364", "refuted"), ("11.39", "refuted")])
def test_a_reported_concurrency_must_be_within_a_hundredth_of_tokens_over_context(profile, reported, verdict):
    # The 0.01 tolerance either side of 23,296 / 2,048 = 11.375: the log rounds to two decimals, no more slack.
    data = _record("kv-sizing", profile)
    data["report"]["lines"] = [line.replace("11.38x", f"{reported}x") for line in data["report"]["lines"]]
    v = _verdict("kv-sizing", "max-concurrency", data)
    assert v["verdict"] == verdict and v["because"].startswith("23,296 tokens / 2,048 tokens per request")


# --- max-num-seqs-queue: _tokens and the timings it feeds ---------------------------------------------

def _edit_chunk(request: dict, index: int, edit) -> None:
    """Apply edit(chunk) to the index-th JSON chunk of a recorded stream, keeping its arrival time."""
    items = [i for i in request["lines"] if i["line"].startswith("data: {")]
    chunk = json.loads(items[index]["line"][6:])
    edit(chunk)
    items[index]["line"] = _compact(chunk)


@pytest.mark.parametrize("profile", PROFILES)
def test_each_queued_answer_counts_exactly_its_max_tokens_text_chunks(profile):
    # The helper's exact count for real streams: 41 chunks, the role chunk not counted, 40 = max_tokens.
    from verify.jobs.lifecycle.max_num_seqs_queue import MAX_TOKENS, _tokens
    data = _record("max-num-seqs-queue", profile)
    assert [_tokens(r) for r in data["requests"]] == [MAX_TOKENS] * 3 == [40] * 3


@pytest.mark.parametrize("profile", PROFILES)
def test_an_empty_text_chunk_without_a_role_is_a_token(profile):
    # The role clause alone: the first chunk (content "") counts once it no longer carries the role.
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = _record("max-num-seqs-queue", profile)["requests"][0]
    _edit_chunk(request, 0, lambda c: c["choices"][0]["delta"].pop("role"))
    assert _tokens(request) == 41


@pytest.mark.parametrize("profile", PROFILES)
def test_a_role_chunk_with_null_content_is_not_a_token_either(profile):
    # The content clause alone false on the role chunk: still 40.
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = _record("max-num-seqs-queue", profile)["requests"][0]
    _edit_chunk(request, 0, lambda c: c["choices"][0]["delta"].update(content=None))
    assert _tokens(request) == 40


@pytest.mark.parametrize("profile", PROFILES)
def test_a_chunk_whose_content_is_null_is_not_a_token(profile):
    # content None is not text, while content "" would be: the `is not None` boundary.
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = _record("max-num-seqs-queue", profile)["requests"][1]
    _edit_chunk(request, 5, lambda c: c["choices"][0]["delta"].update(content=None))
    assert _tokens(request) == 39


@pytest.mark.parametrize("profile", PROFILES)
def test_a_choice_without_a_delta_is_not_a_token_and_does_not_break_the_count(profile):
    # A choice with no delta at all (a bare finish chunk) reads as no content, not as an error.
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = _record("max-num-seqs-queue", profile)["requests"][2]
    _edit_chunk(request, -1, lambda c: c["choices"][0].pop("delta"))
    assert _tokens(request) == 39


@pytest.mark.parametrize("profile", PROFILES)
def test_a_usage_chunk_without_choices_is_not_a_token(profile):
    # A chunk with "choices": [] (the usage chunk of include_usage) or none at all adds nothing.
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = _record("max-num-seqs-queue", profile)["requests"][0]
    done = next(i for i, x in enumerate(request["lines"]) if x["line"] == "data: [DONE]")
    t = request["lines"][done]["t"]
    request["lines"][done:done] = [{"t": t, "line": _compact({"choices": [], "usage": {"completion_tokens": 40}})},
                                   {"t": t, "line": _compact({"usage": {"completion_tokens": 40}})}]
    assert _tokens(request) == 40


@pytest.mark.parametrize("profile", PROFILES)
def test_each_request_timing_carries_its_token_count(profile):
    # The timings table's "text chunks" column: the count rides along with each request, sorted by first text.
    from verify.jobs.lifecycle.max_num_seqs_queue import _timings
    timings = _timings(_record("max-num-seqs-queue", profile))
    assert [t["tokens"] for t in timings] == [40, 40, 40]
    assert [t["ttft"] for t in timings] == sorted(t["ttft"] for t in timings)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_first_text_is_the_first_chunk_with_content_not_the_role_chunk(profile):
    # First vs second chunk: the role chunk (content "") arriving earlier must not count as the first text.
    from verify.jobs.lifecycle.max_num_seqs_queue import _timings
    data = _record("max-num-seqs-queue", profile)
    before = [t["ttft"] for t in _timings(data)]
    for request in data["requests"]:
        role = next(i for i in request["lines"] if i["line"].startswith("data: {"))
        role["t"] = 0.0
    assert [t["ttft"] for t in _timings(data)] == before
    text = next(i for i in data["requests"][0]["lines"] if '"content":"Once"' in i["line"])
    assert text["t"] in before


# --- server-processes: _roles and the rules that read it ----------------------------------------------

def _spawned(api: dict) -> str:
    """A spawned child's command line, as ps shows it before the child names itself: no role in it."""
    return api["cmdline"].split(" -m ")[0] + " -c from multiprocessing.spawn import spawn_main; spawn_main()"


def _by_name(processes: list[dict], name: str) -> dict:
    return next(p for p in processes if p["name"] == name)


@pytest.mark.parametrize("profile", PROFILES)
def test_roles_name_the_listener_the_engine_core_and_the_worker_by_pid(profile):
    # The helper's exact return for a real process list: first process, EngineCore, Worker; no helper role.
    from verify.jobs.lifecycle.server_processes import _roles
    after = _record("server-processes", profile)["after"]
    roles = _roles(after)
    assert {role: p["pid"] for role, p in roles.items()} == {
        "api server": after[0]["pid"], "engine core": _by_name(after, "VLLM::EngineCore")["pid"],
        "worker": _by_name(after, "VLLM::Worker")["pid"]}
    assert after[1]["pid"] not in {p["pid"] for p in roles.values()}  # the resource tracker


@pytest.mark.parametrize("profile", PROFILES)
def test_without_the_multiprocessing_helper_the_engine_listed_second_is_still_found(profile):
    # Index boundary: the processes after the first are all looked at, the second one included.
    data = _record("server-processes", profile)
    data["after"] = [p for p in data["after"] if "multiprocessing" not in p["cmdline"]]
    assert data["after"][1]["name"] == "VLLM::EngineCore"
    assert _verdict("server-processes", "three-processes", data)["verdict"] == "confirmed"
    assert _verdict("server-processes", "busy-cores", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_the_api_server_is_whichever_process_is_listed_first(profile):
    # First vs another element: listed after its children, the listener is no longer taken as the API server.
    data = _record("server-processes", profile)
    data["after"] = data["after"][1:] + data["after"][:1]
    v = _verdict("server-processes", "three-processes", data)
    assert v["verdict"] == "refuted"


@pytest.mark.parametrize("profile", PROFILES)
def test_an_engine_core_known_only_by_its_process_name_is_found(profile):
    # The name half of the engine test alone true: its command line names no role.
    data = _record("server-processes", profile)
    engine = _by_name(data["after"], "VLLM::EngineCore")
    engine["cmdline"] = _spawned(data["after"][0])
    assert _verdict("server-processes", "three-processes", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_an_engine_core_known_only_by_its_command_line_is_found(profile):
    # The command-line half of the engine test alone true: the process name is the interpreter's.
    from verify.jobs.lifecycle.server_processes import _roles
    data = _record("server-processes", profile)
    engine = _by_name(data["after"], "VLLM::EngineCore")
    engine["name"] = data["after"][0]["name"]
    assert _roles(data["after"])["engine core"]["pid"] == engine["pid"]
    assert _verdict("server-processes", "three-processes", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_worker_known_only_by_its_process_name_is_found(profile):
    # The name half of the worker test alone true.
    data = _record("server-processes", profile)
    worker = _by_name(data["after"], "VLLM::Worker")
    worker["cmdline"] = _spawned(data["after"][0])
    assert _verdict("server-processes", "three-processes", data)["verdict"] == "confirmed"
    assert _verdict("server-processes", "worker-holds-model", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_a_worker_known_only_by_its_command_line_is_found(profile):
    # The command-line half of the worker test alone true.
    from verify.jobs.lifecycle.server_processes import _roles
    data = _record("server-processes", profile)
    worker = _by_name(data["after"], "VLLM::Worker")
    worker["name"] = data["after"][0]["name"]
    assert _roles(data["after"])["worker"]["pid"] == worker["pid"]
    assert _verdict("server-processes", "worker-holds-model", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name, role", [("VLLM::EngineCore", "engine core"), ("VLLM::Worker", "worker")],
                         ids=["engine-core", "worker"])
def test_a_child_that_names_no_role_anywhere_leaves_its_role_empty(profile, name, role):
    # Both halves false: neither name nor command line says what the process is, so no role is guessed.
    from verify.jobs.lifecycle.server_processes import _roles
    data = _record("server-processes", profile)
    child = _by_name(data["after"], name)
    child["name"], child["cmdline"] = data["after"][0]["name"], _spawned(data["after"][0])
    assert role not in _roles(data["after"])
    assert _verdict("server-processes", "three-processes", data)["verdict"] == "refuted"
    assert _verdict("server-processes", "busy-cores", data)["verdict"] == "refuted"


def _busy_at(data: dict, engine: float, worker: float, api: float) -> None:
    """A 10 s generation in which the three processes used exactly these CPU seconds."""
    data["generation"]["seconds"] = 10.0
    before = {p["pid"]: p["cpu_s"] for p in data["before"]}
    after = data["after"]
    for p, used in ((_by_name(after, "VLLM::EngineCore"), engine), (_by_name(after, "VLLM::Worker"), worker),
                    (after[0], api)):
        p["cpu_s"] = round(before[p["pid"]] + used, 3)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("engine, worker, api, verdict", [
    (7.0, 7.0, 1.999, "confirmed"),  # both at exactly 70 %, the API server just under 20 %
    (6.999, 7.0, 1.0, "refuted"),    # the engine core just under 70 %
    (7.0, 6.999, 1.0, "refuted"),    # the worker just under 70 %
    (7.0, 7.0, 2.0, "refuted"),      # the API server at exactly 20 % is not "a small fraction"
])
def test_busy_cores_at_exactly_the_shares_of_the_generation(profile, engine, worker, api, verdict):
    # BUSY_SHARE is reached at >= 70 % of the generation's wall time; API_SHARE must be strictly under 20 %.
    data = _record("server-processes", profile)
    _busy_at(data, engine, worker, api)
    assert _verdict("server-processes", "busy-cores", data)["verdict"] == verdict


@pytest.mark.parametrize("profile", PROFILES)
def test_an_engine_core_larger_than_the_worker_refutes_that_the_worker_holds_the_model(profile):
    # The largest process must be the worker found by _roles, not merely some process.
    data = _record("server-processes", profile)
    worker = _by_name(data["after"], "VLLM::Worker")
    _by_name(data["after"], "VLLM::EngineCore")["rss_mib"] = worker["rss_mib"] + 1
    assert _verdict("server-processes", "worker-holds-model", data)["verdict"] == "refuted"


# --- proxy-read-timeout: decide_slow_first_token ------------------------------------------------------

def _direct_first_text_at(data: dict, seconds: float) -> None:
    """Shift the direct stream's arrival times so its first text comes exactly `seconds` after sending."""
    from verify.jobs.streaming.proxy_read_timeout import _timing
    direct = data["slow_first_token_direct"]
    shift = _timing(direct)["first_text"] - seconds
    for item in direct["lines"]:
        item["t"] = round(item["t"] - shift, 4)
    direct["ended_s"] = round(direct["ended_s"] - shift, 4)
    assert _timing(direct)["first_text"] == seconds


def _through_nginx(data: dict, status: int, keep) -> None:
    """The stream through nginx given the direct stream's lines that keep(line) selects."""
    via = data["slow_first_token"]
    via["status"] = status
    via["body_lines"] = [copy.deepcopy(i) for i in data["slow_first_token_direct"]["lines"] if keep(i["line"])]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_direct_first_text_exactly_at_the_timeout_decides_nothing(profile):
    # Boundary first text == timeout: the prefill must be longer than the timeout (<= is inconclusive).
    data = _record("proxy-read-timeout", profile)
    _direct_first_text_at(data, data["timeout_s"])
    assert _verdict("proxy-read-timeout", "slow-first-token-cut", data) == {
        "verdict": "inconclusive",
        "because": "directly, the first text came after 2000 ms, not longer than the 2 s timeout"}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_direct_first_text_a_millisecond_past_the_timeout_decides(profile):
    # Boundary first text == timeout + 1 ms: long enough, so the stream through nginx decides.
    data = _record("proxy-read-timeout", profile)
    _direct_first_text_at(data, data["timeout_s"] + 0.001)
    v = _verdict("proxy-read-timeout", "slow-first-token-cut", data)
    assert v["verdict"] == "confirmed"
    assert v["because"].startswith("directly, the first text came after 2001 ms; through nginx with a 2 s read "
                                   "timeout: HTTP 200, no text received")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_direct_stream_without_any_text_decides_nothing(profile):
    # No first text at all directly: not "longer than the timeout", and said so, not a crash.
    data = _record("proxy-read-timeout", profile)
    for item in data["slow_first_token_direct"]["lines"]:
        if item["line"].startswith("data: {"):
            chunk = json.loads(item["line"][6:])
            chunk["choices"][0]["delta"]["content"] = ""
            item["line"] = _compact(chunk)
    assert _verdict("proxy-read-timeout", "slow-first-token-cut", data) == {
        "verdict": "inconclusive",
        "because": "directly, the first text came after n/a, not longer than the 2 s timeout"}


@pytest.mark.parametrize("profile", PROFILES)
def test_text_through_nginx_before_the_cut_refutes_a_cut_before_any_text(profile):
    # The "no text" clause alone false: the stream was cut ([DONE] missing), but after its first text.
    data = _record("proxy-read-timeout", profile)
    _through_nginx(data, 200, lambda line: '"content":"The"' in line or '"role"' in line)
    v = _verdict("proxy-read-timeout", "slow-first-token-cut", data)
    assert v["verdict"] == "refuted" and "HTTP 200, text received" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_stream_through_nginx_that_ended_with_done_was_not_cut(profile):
    # The "cut" clause alone false: HTTP 200 and [DONE] received, no text: nothing was cut off.
    data = _record("proxy-read-timeout", profile)
    _through_nginx(data, 200, lambda line: '"role"' in line or line == "data: [DONE]")
    v = _verdict("proxy-read-timeout", "slow-first-token-cut", data)
    assert v["verdict"] == "refuted" and "HTTP 200, no text received" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_504_from_nginx_counts_as_a_cut_by_itself(profile):
    # The status half of "cut" alone true: a 504 is a cut whatever the body carried.
    data = _record("proxy-read-timeout", profile)
    _through_nginx(data, 504, lambda line: '"role"' in line or line == "data: [DONE]")
    v = _verdict("proxy-read-timeout", "slow-first-token-cut", data)
    assert v["verdict"] == "confirmed" and "HTTP 504, no text received" in v["because"]


# --- request-endings(-quiet): decide_abort ------------------------------------------------------------

ENDINGS = [(job_id, profile) for job_id in ("request-endings", "request-endings-quiet") for profile in PROFILES]
ABORTED = 'vllm:request_success_total{finished_reason="abort"}'
TTFT = "vllm:time_to_first_token_seconds_count"
GENERATED = "vllm:generation_tokens_total"


def _abort_moved(job_id: str, profile: str) -> tuple[dict, dict]:
    data = _record(job_id, profile)
    return data, data["endings"]["abort"]["metrics_delta"]


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_one_count_under_abort_confirms_with_its_reason(job_id, profile):
    # Exactly {abort: 1.0}: the one shape that confirms, with its fixed reason.
    data, moved = _abort_moved(job_id, profile)
    moved[ABORTED] = 1.0
    assert _verdict(job_id, "abort-counted", data) == {
        "verdict": "confirmed", "because": "the disconnected request added 1 to finished_reason=abort"}


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_two_counts_under_abort_are_not_the_one_request(job_id, profile):
    # Boundary 1.0 vs 2.0: a counter that moved by two cannot be this one request; it decides nothing.
    data, moved = _abort_moved(job_id, profile)
    moved[ABORTED] = 2.0
    v = _verdict(job_id, "abort-counted", data)
    assert v["verdict"] == "inconclusive" and '{finished_reason="abort"}\': 2.0}' in v["because"]


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_a_count_under_another_reason_is_inconclusive_not_refuted(job_id, profile):
    # "Counter unchanged" clause alone false (the request was seen running): a count elsewhere refutes nothing.
    data, moved = _abort_moved(job_id, profile)
    moved['vllm:request_success_total{finished_reason="stop"}'] = 1.0
    v = _verdict(job_id, "abort-counted", data)
    assert v["verdict"] == "inconclusive" and 'finished_reason="stop"' in v["because"]


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_without_a_first_token_observation_an_unchanged_counter_proves_nothing(job_id, profile):
    # The first-token half of "seen running" alone false (tokens still generated): a scrape that missed it.
    data, moved = _abort_moved(job_id, profile)
    del moved[TTFT]
    v = _verdict(job_id, "abort-counted", data)
    assert v["verdict"] == "inconclusive"
    assert "time-to-first-token observations +0; generated tokens +9" in v["because"]


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_two_first_token_observations_do_not_show_this_one_request_running(job_id, profile):
    # Boundary ttft == 1: with two observations the scrape saw another request too.
    data, moved = _abort_moved(job_id, profile)
    moved[TTFT] = 2.0
    assert _verdict(job_id, "abort-counted", data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_without_generated_tokens_an_unchanged_counter_proves_nothing(job_id, profile):
    # The generated-tokens half of "seen running" alone false, whether the counter is absent or moved by 0.
    for edit in (lambda m: m.pop(GENERATED), lambda m: m.update({GENERATED: 0.0})):
        data, moved = _abort_moved(job_id, profile)
        edit(moved)
        v = _verdict(job_id, "abort-counted", data)
        assert v["verdict"] == "inconclusive"
        assert "time-to-first-token observations +1; generated tokens +0" in v["because"]


@pytest.mark.parametrize("job_id, profile", ENDINGS)
def test_a_single_generated_token_is_enough_to_see_the_request_running(job_id, profile):
    # Boundary generated == 1 (> 0): one token generated and one first token observed make the refutation.
    data, moved = _abort_moved(job_id, profile)
    moved[GENERATED] = 1.0
    v = _verdict(job_id, "abort-counted", data)
    assert v["verdict"] == "refuted"
    assert "request_success_total unchanged under every finished_reason" in v["because"]


# --- audit fixes: each rule decides what its sentence says, and is inconclusive without its condition ----

def _json_lines(stream: dict) -> list[tuple[dict, dict]]:
    """A recorded stream's JSON events, each with the line (and its arrival time) it came in."""
    return [(x, json.loads(x["line"][6:])) for x in stream["lines"] if x["line"].startswith("data: {")]


def _rewrite(line: dict, chunk: dict) -> None:
    line["line"] = _compact(chunk)


BENCH = "bench-definitions"


@pytest.mark.parametrize("profile", PROFILES)
def test_usage_is_one_fewer_than_the_chunks_with_choices_and_the_extra_one_is_the_role_chunk(profile):
    data = _record(BENCH, profile)
    v = _verdict(BENCH, "server-usage-counts", data)
    assert v["verdict"] == "confirmed" and "32/32/33 role" in v["because"]
    # A server whose usage counts the role chunk as a token too: usage equals the chunks with choices.
    counted = _record(BENCH, profile)
    for s in counted["streams"]:
        for line, chunk in _json_lines(s):
            if chunk.get("usage"):
                chunk["usage"]["completion_tokens"] += 1
                _rewrite(line, chunk)
    counted["bench"]["result"]["output_lens"] = [n + 1 for n in counted["bench"]["result"]["output_lens"]]
    assert _verdict(BENCH, "server-usage-counts", counted)["verdict"] == "refuted"
    # A first chunk that brings text is no token-less role chunk, though the counts still add up.
    texted = _record(BENCH, profile)
    line, chunk = next((x, c) for x, c in _json_lines(texted["streams"][0]) if c.get("choices"))
    chunk["choices"][0]["delta"]["content"] = "Hi"
    _rewrite(line, chunk)
    assert _verdict(BENCH, "server-usage-counts", texted)["verdict"] == "refuted"
    # No successful request: nothing to count.
    failed = _record(BENCH, profile)
    failed["bench"]["result"]["errors"] = ["timeout"] * len(failed["bench"]["result"]["errors"])
    assert _verdict(BENCH, "server-usage-counts", failed)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_goodput_decides_every_objective_only_in_a_run_where_no_request_met_both(profile):
    from verify.jobs.latency import bench_definitions as job
    data = _record(BENCH, profile)
    assert job._goodput_counts(data)[0] == 0
    assert _verdict(BENCH, "goodput-every-objective", data)["verdict"] == "confirmed"
    # A tool that counts requests meeting any objective prints more than 0: refuted.
    any_one = _record(BENCH, profile)
    _, some, _ = job._goodput_counts(any_one)
    any_one["bench"]["result"]["request_goodput"] = some / any_one["bench"]["result"]["duration"]
    assert _verdict(BENCH, "goodput-every-objective", any_one)["verdict"] == "refuted"
    # Objectives some requests meet both of: the printed figure then rides on its divisor too, which this
    # claim does not settle.
    met = _record(BENCH, profile)
    r = met["bench"]["result"]
    tpots = sorted((r["latencies"][i] - r["ttfts"][i]) / (r["output_lens"][i] - 1) for i in job._ok(met))
    met["slo_ms"]["tpot"] = tpots[len(tpots) // 2] * 1000
    every, some, _ = job._goodput_counts(met)
    assert 0 < every < some
    v = _verdict(BENCH, "goodput-every-objective", met)
    assert v["verdict"] == "inconclusive" and "a request met every objective" in v["because"]


def _ttft_edit(profile: str, edit) -> dict:
    """The record with edit(ttfts, i, role_at_proxy, text_at_proxy) applied to each successful request."""
    from verify.jobs.latency import bench_definitions as job
    data = _record(BENCH, profile)
    for i, (_, first, text) in zip(job._ok(data), job._ttft_rows(data)):
        edit(data["bench"]["result"]["ttfts"], i, first, text)
    return data


@pytest.mark.parametrize("profile", PROFILES)
def test_a_ttft_over_before_the_text_chunk_reached_the_proxy_shows_the_first_chunk_ends_it(profile):
    from verify.jobs.latency import bench_definitions as job
    v = _verdict(BENCH, "ttft-first-chunk", _record(BENCH, profile))
    assert v["verdict"] == "confirmed"
    # The tool's TTFT at the very moment the text chunk reached the proxy: the ordering tells nothing then,
    # unless that chunk came more than a hop after the first; with the record's gaps (under 1.4 ms) the
    # rule cannot tell, and says so, where the old 11 ms tolerance confirmed.
    at_text = _ttft_edit(profile, lambda ttfts, i, first, text: ttfts.__setitem__(i, text))
    rows = job._ttft_rows(at_text)
    assert sum(t - f > job.HOP_S for _, f, t in rows) <= len(rows) / 2
    assert _verdict(BENCH, "ttft-first-chunk", at_text)["verdict"] == "inconclusive"
    # A TTFT over before the proxy saw any chunk: the clocks disagree.
    early = _ttft_edit(profile, lambda ttfts, i, first, text: i == 0 and ttfts.__setitem__(i, first - 0.0001))
    v = _verdict(BENCH, "ttft-first-chunk", early)
    assert v["verdict"] == "inconclusive" and "clocks disagree" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_tool_that_waits_for_the_text_chunk_is_refuted_once_the_chunks_are_a_token_step_apart(profile):
    from tests.test_falsifiable import tool_stops_at_the_text_chunk
    data = _record(BENCH, profile)
    tool_stops_at_the_text_chunk(data)
    v = _verdict(BENCH, "ttft-first-chunk", data)
    assert v["verdict"] == "refuted" and "before the chunk with text reached the proxy in 0 of 8" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_pooled_itl_tolerance_is_narrower_than_the_gap_to_per_request_means(profile, monkeypatch):
    from statistics import median

    from verify.jobs.latency import bench_definitions as job
    data = _record(BENCH, profile)
    assert _verdict(BENCH, "itl-pooled", data)["verdict"] == "confirmed"
    ours = median(job._pooled(data)) * 1000
    per_request = median(job._by_tool(data["streams"][i], "aiperf")["itl"] for i in job._ok(data)) * 1000
    assert abs(per_request - ours) > 2 * job.POOLED_SAME_MS
    # A tool that printed the median of per-request means: refuted (the old 4 ms tolerance confirmed it).
    data["bench"]["result"]["median_itl_ms"] = per_request
    assert _verdict(BENCH, "itl-pooled", data)["verdict"] == "refuted"
    # Boundary: exactly the tolerance away confirms, a little more refutes.
    for off, verdict in ((job.POOLED_SAME_MS - 1e-9, "confirmed"), (job.POOLED_SAME_MS + 0.01, "refuted")):
        data["bench"]["result"]["median_itl_ms"] = ours + off
        assert _verdict(BENCH, "itl-pooled", data)["verdict"] == verdict
    # A tolerance as wide as the gap between the definitions cannot tell them apart: inconclusive.
    monkeypatch.setattr(job, "POOLED_SAME_MS", abs(per_request - ours))
    data["bench"]["result"]["median_itl_ms"] = ours
    assert _verdict(BENCH, "itl-pooled", data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_tpot_divided_by_n_is_refuted_and_a_tolerance_as_wide_as_the_gap_decides_nothing(profile, monkeypatch):
    from statistics import median

    from verify.jobs.latency import bench_definitions as job
    data = _record(BENCH, profile)
    assert _verdict(BENCH, "tpot-formula", data)["verdict"] == "confirmed"
    r = data["bench"]["result"]
    per_request = [(job._by_tool(data["streams"][i], "vllm_bench_serve")["tpot"], r["output_lens"][i])
                   for i in job._ok(data)]
    by_n = median(t * (n - 1) / n for t, n in per_request)
    r["median_tpot_ms"] = by_n * 1000  # the time after the first chunk over all n tokens
    assert _verdict(BENCH, "tpot-formula", data)["verdict"] == "refuted"
    ours = median(t for t, _ in per_request)
    monkeypatch.setattr(job, "PER_TOKEN_SAME_S", abs(ours - by_n) / 2)  # the old tolerance was 1.1-1.4 ms
    r["median_tpot_ms"] = ours * 1000
    assert _verdict(BENCH, "tpot-formula", data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_guidellm_itl_and_tpot_allow_one_request_off_by_the_other_divisor_and_not_two(profile, monkeypatch):
    from verify.jobs.latency import bench_definitions as job
    for claim, key, factor in (("guidellm-itl", "inter_token_latency_ms", 31 / 32),
                               ("guidellm-tpot", "time_per_output_token_ms", 32 / 31)):
        data = _record(BENCH, profile)
        assert _verdict(BENCH, claim, data)["verdict"] == "confirmed"
        requests = data["guidellm"]["result"]["requests"]
        assert {q["output_tokens"] for q in requests} == {32}
        requests[0][key] *= factor  # one request by the other divisor: a stall may do that to one
        assert _verdict(BENCH, claim, data)["verdict"] == "confirmed"
        requests[1][key] *= factor
        assert _verdict(BENCH, claim, data)["verdict"] == "refuted"
        # A tolerance as wide as half the gap between the divisors cannot tell them apart.
        data = _record(BENCH, profile)
        widest = max(abs(q[key] / 1000 - q[key] / 1000 / factor) for q in data["guidellm"]["result"]["requests"])
        monkeypatch.setattr(job, "PER_TOKEN_SAME_S", widest / 2)
        v = _verdict(BENCH, claim, data)
        assert v["verdict"] == "inconclusive" and "cannot tell them apart" in v["because"]
        monkeypatch.undo()


@pytest.mark.parametrize("profile", PROFILES)
def test_guidellm_ttft_is_read_from_its_own_timings_tied_to_the_stream(profile):
    from tests.test_falsifiable import guidellm_stops_at_the_empty_chunk
    data = _record(BENCH, profile)
    v = _verdict(BENCH, "guidellm-ttft", data)
    assert v["verdict"] == "confirmed" and "at its first token iteration in 8 of 8" in v["because"]
    first = _record(BENCH, profile)
    guidellm_stops_at_the_empty_chunk(first)
    assert _verdict(BENCH, "guidellm-ttft", first)["verdict"] == "refuted"
    # Token iterations that are not the stream's chunks with text: the timings cannot name the chunk.
    miscounted = _record(BENCH, profile)
    miscounted["guidellm"]["result"]["requests"][0]["timings"]["token_iterations"] += 1
    assert _verdict(BENCH, "guidellm-ttft", miscounted)["verdict"] == "inconclusive"
    # The first chunk and the first token stamped at one moment: nothing to tell apart.
    together = _record(BENCH, profile)
    t = together["guidellm"]["result"]["requests"][0]["timings"]
    t["first_request_iteration"] = t["first_token_iteration"]
    assert _verdict(BENCH, "guidellm-ttft", together)["verdict"] == "inconclusive"
    # A TTFT at neither stamp: inconclusive, not refuted.
    neither = _record(BENCH, profile)
    neither["guidellm"]["result"]["requests"][0]["time_to_first_token_ms"] += 1.0
    assert _verdict(BENCH, "guidellm-ttft", neither)["verdict"] == "inconclusive"


TTFT_Q = "ttft-quantiles"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("claim", ["exact", "within-a-bucket", "linear-in-bucket"])
def test_quantile_rules_need_the_window_to_count_exactly_the_requests_sent(profile, claim):
    data = _record(TTFT_Q, profile)
    assert data["prometheus"]["buckets"]["+Inf"] == len(data["requests"]) == 24
    assert _verdict(TTFT_Q, claim, data)["verdict"] != "inconclusive"
    # An empty window: every bucket 0 and NaN estimates (the old .exact rule read these as "refuted").
    for le in data["prometheus"]["buckets"]:
        data["prometheus"]["buckets"][le] = 0.0
    for q in data["prometheus"]["estimates"].values():
        q[0]["value"][1] = "NaN"
    v = _verdict(TTFT_Q, claim, data)
    assert v["verdict"] == "inconclusive" and "counted 0 first tokens for 24 requests" in v["because"]
    # One request too many in the window.
    data = _record(TTFT_Q, profile)
    data["prometheus"]["buckets"]["+Inf"] += 1
    assert _verdict(TTFT_Q, claim, data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_estimates_at_the_exact_percentiles_confirm_the_exact_claim(profile):
    from tests.test_falsifiable import first_tokens_at_the_estimates
    data = _record(TTFT_Q, profile)
    assert _verdict(TTFT_Q, "exact", data)["verdict"] == "refuted"
    first_tokens_at_the_estimates(data)
    assert _verdict(TTFT_Q, "exact", data)["verdict"] == "confirmed"


LOAD = "load-signals"


def _alert_polls(d: dict):
    from verify.jobs.metrics.load_signals import ALERT
    return [(p, a) for p in d["alerts"]["polls"] for a in p["alerts"] if a["name"] == ALERT]


@pytest.mark.parametrize("profile", PROFILES)
def test_an_alert_that_never_fired_did_not_resolve(profile):
    data = _record(LOAD, profile)
    assert _verdict(LOAD, "alert-resolves", data)["verdict"] == "confirmed"
    for _, alert in _alert_polls(data):
        alert["state"] = "pending"
    v = _verdict(LOAD, "alert-resolves", data)
    assert v["verdict"] == "inconclusive" and "never fired" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_resolution_is_bracketed_by_two_reads_both_within_the_bound(profile):
    from verify.jobs.metrics.load_signals import ALERT, RESOLVE_WITHIN_S
    data = _record(LOAD, profile)
    v = _verdict(LOAD, "alert-resolves", data)
    drained, polls = data["drained_s"], data["alerts"]["polls"]
    last = max(i for i, p in enumerate(polls) if any(a["name"] == ALERT for a in p["alerts"]))
    gap = polls[last + 1]["t"] - polls[last]["t"]
    assert gap > 5 and f"the reads {gap:.1f} s apart there" in v["because"]  # no read while the requests drain
    # The first read without the alert at the bound confirms; past it, refutes.
    for t, verdict in ((drained + RESOLVE_WITHIN_S, "confirmed"), (drained + RESOLVE_WITHIN_S + 0.1, "refuted")):
        edited = copy.deepcopy(data)
        edited["alerts"]["polls"][last + 1]["t"] = t
        assert _verdict(LOAD, "alert-resolves", edited)["verdict"] == verdict
    # Last listed (firing) more than the bound before the last request ended: gone long before, refuted.
    for end, verdict in ((polls[last]["t"] + RESOLVE_WITHIN_S, "confirmed"),
                         (polls[last]["t"] + RESOLVE_WITHIN_S + 0.1, "refuted")):
        edited = copy.deepcopy(data)
        edited["drained_s"] = end
        edited["alerts"]["polls"][last + 1]["t"] = end  # the first read after the drain, as recorded
        assert _verdict(LOAD, "alert-resolves", edited)["verdict"] == verdict
    # Still listed at the last read: refuted.
    kept = copy.deepcopy(data)
    for p in kept["alerts"]["polls"][last + 1:]:
        p["alerts"].append({"name": ALERT, "state": "firing"})
    assert _verdict(LOAD, "alert-resolves", kept)["verdict"] == "refuted"
    # Last listed as pending: it left pending, which resolves no firing alert.
    pending = copy.deepcopy(data)
    next(a for a in pending["alerts"]["polls"][last]["alerts"] if a["name"] == ALERT)["state"] = "pending"
    assert _verdict(LOAD, "alert-resolves", pending)["verdict"] == "inconclusive"


LORA_METRIC = "lora-metric"


@pytest.mark.parametrize("profile", PROFILES)
def test_waiting_named_reads_only_scrapes_in_which_requests_waited(profile):
    from tests.test_falsifiable import waiting_label_names_the_queue
    data = _record(LORA_METRIC, profile)
    assert _verdict(LORA_METRIC, "waiting-named", data)["verdict"] == "refuted"
    # A waiting label naming another adapter in a scrape where nothing waited says nothing: still refuted
    # (the old rule confirmed on any one such scrape).
    idle = _record(LORA_METRIC, profile)
    quiet = [s for s in idle["during"] if s["waiting"] == 0 and s["samples"]
             and max(s["samples"], key=lambda x: x["value"])["labels"].get("running_lora_adapters")]
    assert quiet
    for s in quiet:
        newest = max(s["samples"], key=lambda x: x["value"])
        newest["labels"]["waiting_lora_adapters"] = "attn-a" if newest["labels"]["running_lora_adapters"] != "attn-a" \
            else "attn-b"
    assert _verdict(LORA_METRIC, "waiting-named", idle)["verdict"] == "refuted"
    # No scrape caught requests waiting: inconclusive.
    none = _record(LORA_METRIC, profile)
    for s in none["during"]:
        s["waiting"] = 0.0
    v = _verdict(LORA_METRIC, "waiting-named", none)
    assert v["verdict"] == "inconclusive" and "0 of" in v["because"]
    # Every waiting scrape naming adapters that are not running: confirmed; only some: inconclusive.
    named = _record(LORA_METRIC, profile)
    waiting_label_names_the_queue(named)
    assert _verdict(LORA_METRIC, "waiting-named", named)["verdict"] == "confirmed"
    some = _record(LORA_METRIC, profile)
    first = next(s for s in some["during"] if s["waiting"] > 0 and s["samples"]
                 and max(s["samples"], key=lambda x: x["value"])["labels"].get("running_lora_adapters"))
    max(first["samples"], key=lambda x: x["value"])["labels"]["waiting_lora_adapters"] = "mlp-c,attn-b"
    assert _verdict(LORA_METRIC, "waiting-named", some)["verdict"] == "inconclusive"


RUNTIME = "lora-runtime"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("status, verdict", [(200, "inconclusive"), (201, "inconclusive"), (None, "inconclusive"),
                                             (400, "confirmed"), (422, "confirmed"), (500, "refuted"),
                                             (503, "inconclusive")])
def test_only_a_refusal_of_the_rank_says_what_kind_of_error_it_is(profile, status, verdict):
    # 503 is no refusal the job expects (only 4xx and the worker's 500): a failed capture, so inconclusive.
    data = _record(RUNTIME, profile)
    data["steps"]["load_rank_32"]["status"] = status
    assert _verdict(RUNTIME, "rank-client-error", data)["verdict"] == verdict


@pytest.mark.parametrize("profile", PROFILES)
def test_a_client_error_about_something_else_is_not_the_ranks_refusal(profile):
    data = _record(RUNTIME, profile)
    data["steps"]["load_rank_32"].update(status=400, body={"error": {"message": "Bad request"}},
                                         body_text='{"error": {"message": "Bad request"}}')
    assert _verdict(RUNTIME, "rank-client-error", data)["verdict"] == "inconclusive"


WHITESPACE = "json-whitespace"


@pytest.mark.parametrize("profile", PROFILES)
def test_request_option_is_undecided_by_missing_or_cut_answers_and_refuted_by_whitespace(profile):
    from tests.test_falsifiable import request_option_honoured
    from verify.jobs.structured_outputs.json_whitespace import OPTION
    data = _record(WHITESPACE, profile)
    assert _verdict(WHITESPACE, "request-option", data)["verdict"] == "refuted"
    request_option_honoured(data)
    assert _verdict(WHITESPACE, "request-option", data)["verdict"] == "confirmed"
    samples = data["ways"][OPTION]["samples"]
    fewer = copy.deepcopy(data)
    fewer["ways"][OPTION]["samples"] = samples[:-1]
    assert _verdict(WHITESPACE, "request-option", fewer)["verdict"] == "inconclusive"
    cut = copy.deepcopy(data)
    cut["ways"][OPTION]["samples"][0].update(text='{"name":"Adalbertina', finish_reason="length")
    v = _verdict(WHITESPACE, "request-option", cut)
    assert v["verdict"] == "inconclusive" and "1 cut by max_tokens" in v["because"]
    spaced = copy.deepcopy(fewer)
    spaced["ways"][OPTION]["samples"][0]["text"] = '{"name": "Ada", "age": 36}'
    assert _verdict(WHITESPACE, "request-option", spaced)["verdict"] == "refuted"


MAX_LORAS = "lora-max-loras"


def _shift(sent: dict, by: float) -> None:
    for line in sent["stream"]["lines"]:
        line["t"] = round(line["t"] + by, 6)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_third_adapter_starts_once_both_of_the_pair_have_finished(profile):
    from verify.jobs.lora._together import span
    from verify.jobs.lora.lora_max_loras import AFTER_BOTH_S, third_waited_s
    data = _record(MAX_LORAS, profile)
    assert _verdict(MAX_LORAS, "two-at-a-time", data)["verdict"] == "confirmed"
    waited = [third_waited_s(t["three_adapters"]) for t in data["trials"]]
    assert all(w[0] - w[1] > 2 * AFTER_BOTH_S and w[1] >= 0 for w in waited)

    def third(trial):
        group = trial["three_adapters"]
        firsts = sorted(group, key=lambda s: span(s)[0])
        return firsts[-1]
    # Boundary: the third's first token just at AFTER_BOTH_S before the later end confirms; a little more
    # before (still long after the first of the pair finished) refutes "once both have finished".
    for before, verdict in ((AFTER_BOTH_S - 0.001, "confirmed"), (AFTER_BOTH_S + 0.01, "refuted")):
        edited = _record(MAX_LORAS, profile)
        for t, w in zip(edited["trials"], waited):
            _shift(third(t), -(w[1] + before))
        assert [third_waited_s(t["three_adapters"]) is not None for t in edited["trials"]] == [True] * 3
        assert _verdict(MAX_LORAS, "two-at-a-time", edited)["verdict"] == verdict
    # A pair that finished within twice the tolerance of each other cannot tell "after both" from "after one".
    close = _record(MAX_LORAS, profile)
    t = close["trials"][0]
    pair = [s for s in t["three_adapters"] if s is not third(t)]
    early, late = sorted(pair, key=lambda s: span(s)[1])
    last_text = [x for x in early["stream"]["lines"] if x["line"].startswith("data: {") and
                 json.loads(x["line"][6:]).get("choices") and
                 json.loads(x["line"][6:])["choices"][0].get("delta", {}).get("content")][-1]
    last_text["t"] = round(span(late)[1] - early["started_s"] - AFTER_BOTH_S, 6)
    v = _verdict(MAX_LORAS, "two-at-a-time", close)
    assert v["verdict"] == "inconclusive" and "cannot be told" in v["because"]


STRUCTURED = "structured-output"


def _finished(data: dict, reasons: list[str]) -> None:
    for s, reason in zip(data["constrained"]["samples"], reasons):
        s["finish_reason"] = reason


@pytest.mark.parametrize("profile", PROFILES)
def test_only_answers_that_ended_by_themselves_are_judged_and_enough_of_them_must(profile):
    from verify.jobs.sampling.structured_output import MIN_FINISHED, SAMPLES
    data = _record(STRUCTURED, profile)
    v = _verdict(STRUCTURED, "every-sample-valid", data)  # recorded before finish reasons were
    assert v["verdict"] == "inconclusive" and "8 not recorded" in v["because"]
    _finished(data, ["stop"] * SAMPLES)
    assert _verdict(STRUCTURED, "every-sample-valid", data)["verdict"] == "confirmed"
    # An answer cut by max_tokens inside a long name is unfinished JSON: not judged.
    cut = copy.deepcopy(data)
    cut["constrained"]["samples"][0].update(text='{"name": "Bartholomew Aloysius Fitzgerald-Montgomery',
                                            finish_reason="length")
    assert _verdict(STRUCTURED, "every-sample-valid", cut)["verdict"] == "confirmed"
    # One that ended by itself and does not match the schema refutes.
    bad = copy.deepcopy(data)
    bad["constrained"]["samples"][0]["text"] = '{"name": "Ada"}'
    assert _verdict(STRUCTURED, "every-sample-valid", bad)["verdict"] == "refuted"
    # Fewer than MIN_FINISHED ended by themselves: inconclusive.
    few = copy.deepcopy(data)
    _finished(few, ["stop"] * (MIN_FINISHED - 1) + ["length"] * (SAMPLES - MIN_FINISHED + 1))
    v = _verdict(STRUCTURED, "every-sample-valid", few)
    assert v["verdict"] == "inconclusive" and f"at least {MIN_FINISHED} finished" in v["because"]
    _finished(few, ["stop"] * MIN_FINISHED + ["length"] * (SAMPLES - MIN_FINISHED))
    assert _verdict(STRUCTURED, "every-sample-valid", few)["verdict"] == "confirmed"
