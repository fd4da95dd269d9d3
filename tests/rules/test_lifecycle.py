"""Request lifecycle article: its rules replay real records captured from a live vLLM server, edited at their thresholds."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide, decide_edited, every_verdict, record, row
from verify.captures import iter_captures

# --- request-endings(-quiet): decide_abort ------------------------------------------------------------

ABORTED = 'vllm:request_success_total{finished_reason="abort"}'
TTFT = "vllm:time_to_first_token_seconds_count"
GENERATED = "vllm:generation_tokens_total"


def _moved(data: dict) -> dict:
    """What the aborted request moved in the server's counters."""
    return data["endings"]["abort"]["metrics_delta"]


def one_count_under_abort(data: dict) -> None:
    """Exactly {abort: 1.0}: the one shape that confirms, with its fixed reason."""
    _moved(data)[ABORTED] = 1.0


def two_counts_under_abort(data: dict) -> None:
    """Boundary 1.0 vs 2.0: a counter that moved by two cannot be this one request; it decides nothing."""
    _moved(data)[ABORTED] = 2.0


def a_count_under_another_reason(data: dict) -> None:
    """"Counter unchanged" clause alone false (the request was seen running): a count elsewhere refutes nothing."""
    _moved(data)['vllm:request_success_total{finished_reason="stop"}'] = 1.0


def no_first_token_observation(data: dict) -> None:
    """The first-token half of "seen running" alone false (tokens still generated): a scrape that missed it."""
    del _moved(data)[TTFT]


def two_first_token_observations(data: dict) -> None:
    """Boundary ttft == 1: with two observations the scrape saw another request too."""
    _moved(data)[TTFT] = 2.0


def no_generated_tokens_counter(data: dict) -> None:
    """The generated-tokens half of "seen running" alone false: the counter absent."""
    _moved(data).pop(GENERATED)


def generated_tokens_moved_by_zero(data: dict) -> None:
    """The generated-tokens half of "seen running" alone false: the counter moved by 0."""
    _moved(data).update({GENERATED: 0.0})


def a_single_generated_token(data: dict) -> None:
    """Boundary generated == 1 (> 0): one token generated and one first token observed make the refutation."""
    _moved(data)[GENERATED] = 1.0


# --- server-processes: _roles and the rules that read it ----------------------------------------------

def _spawned(api: dict) -> str:
    """A spawned child's command line, as ps shows it before the child names itself: no role in it."""
    return api["cmdline"].split(" -m ")[0] + " -c from multiprocessing.spawn import spawn_main; spawn_main()"


def _by_name(processes: list[dict], name: str) -> dict:
    return next(p for p in processes if p["name"] == name)


def no_multiprocessing_helper(data: dict) -> None:
    """Index boundary: the processes after the first are all looked at, the second one included (without the
    multiprocessing helper, the engine is listed second)."""
    data["after"] = [p for p in data["after"] if "multiprocessing" not in p["cmdline"]]
    assert data["after"][1]["name"] == "VLLM::EngineCore"


def api_server_listed_last(data: dict) -> None:
    """First vs another element: listed after its children, the listener is no longer taken as the API server."""
    data["after"] = data["after"][1:] + data["after"][:1]


def engine_core_larger_than_the_worker(data: dict) -> None:
    """The largest process must be the worker found by _roles, not merely some process."""
    worker = _by_name(data["after"], "VLLM::Worker")
    _by_name(data["after"], "VLLM::EngineCore")["rss_mib"] = worker["rss_mib"] + 1


# --- ttft-clocks ----------------------------------------------------------------------------------------

def queue_histogram_did_not_move(data: dict) -> None:
    """A histogram that did not move is not a 0 s queue or prefill."""
    for trial in data["trials"]:
        del trial["histograms"]["vllm:request_queue_time_seconds_count"]
        trial["histograms"].pop("vllm:request_queue_time_seconds_sum", None)


def two_first_tokens_in_one_trial(data: dict) -> None:
    """Two time-to-first-token observations in a trial of one request."""
    data["trials"][0]["histograms"]["vllm:time_to_first_token_seconds_count"] = 2.0


ENDINGS = ("request-endings.abort-counted", "request-endings-quiet.abort-counted")

# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    row("ttft-clocks.covers-queue-and-prefill", queue_histogram_did_not_move, "inconclusive"),
    row("ttft-clocks.server-shorter", two_first_tokens_in_one_trial, "inconclusive"),
]

# The same, pinned at a threshold, a list position or one clause of a compound condition, on the records
# of both CPU profiles.
BOUNDARIES = [
    *[r for claim in ENDINGS for r in (
        row(claim, one_count_under_abort, "confirmed",
            because="the disconnected request added 1 to finished_reason=abort"),
        row(claim, two_counts_under_abort, "inconclusive", contains='{finished_reason="abort"}\': 2.0}'),
        row(claim, a_count_under_another_reason, "inconclusive", contains='finished_reason="stop"'),
        row(claim, no_first_token_observation, "inconclusive",
            contains="time-to-first-token observations +0; generated tokens +9"),
        row(claim, two_first_token_observations, "inconclusive"),
        row(claim, no_generated_tokens_counter, "inconclusive",
            contains="time-to-first-token observations +1; generated tokens +0"),
        row(claim, generated_tokens_moved_by_zero, "inconclusive",
            contains="time-to-first-token observations +1; generated tokens +0"),
        row(claim, a_single_generated_token, "refuted",
            contains="request_success_total unchanged under every finished_reason"))],
    row("server-processes.three-processes", no_multiprocessing_helper, "confirmed"),
    row("server-processes.busy-cores", no_multiprocessing_helper, "confirmed"),
    row("server-processes.three-processes", api_server_listed_last, "refuted"),
    row("server-processes.worker-holds-model", engine_core_larger_than_the_worker, "refuted"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS) + cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


def test_an_unread_server_log_is_a_failed_capture():
    data = record("request-endings")
    reads = [c for _, c in iter_captures(data) if c["capture"] == "server-log"]
    assert reads, "request-endings records no log read"
    for c in reads:
        c.update(events=0, lines_read=0)
    assert every_verdict("request-endings", data) == {"inconclusive"}


# --- max-num-seqs-queue: _tokens and the timings it feeds ---------------------------------------------

def _edit_chunk(request: dict, index: int, edit) -> None:
    """Apply edit(chunk) to the index-th JSON chunk of a recorded stream, keeping its arrival time."""
    items = [i for i in request["lines"] if i["line"].startswith("data: {")]
    chunk = json.loads(items[index]["line"][6:])
    edit(chunk)
    items[index]["line"] = compact(chunk)


def role_chunk_without_its_role(request: dict) -> None:
    """The role clause alone: the first chunk (content "") counts once it no longer carries the role."""
    _edit_chunk(request, 0, lambda c: c["choices"][0]["delta"].pop("role"))


def role_chunk_with_null_content(request: dict) -> None:
    """The content clause alone false on the role chunk."""
    _edit_chunk(request, 0, lambda c: c["choices"][0]["delta"].update(content=None))


def text_chunk_with_null_content(request: dict) -> None:
    """content None is not text, while content "" would be: the `is not None` boundary."""
    _edit_chunk(request, 5, lambda c: c["choices"][0]["delta"].update(content=None))


def choice_without_a_delta(request: dict) -> None:
    """A choice with no delta at all (a bare finish chunk) reads as no content, not as an error."""
    _edit_chunk(request, -1, lambda c: c["choices"][0].pop("delta"))


def usage_chunks_without_choices(request: dict) -> None:
    """A chunk with "choices": [] (the usage chunk of include_usage) or none at all adds nothing."""
    done = next(i for i, x in enumerate(request["lines"]) if x["line"] == "data: [DONE]")
    t = request["lines"][done]["t"]
    request["lines"][done:done] = [{"t": t, "line": compact({"choices": [], "usage": {"completion_tokens": 40}})},
                                   {"t": t, "line": compact({"usage": {"completion_tokens": 40}})}]


@pytest.mark.parametrize("profile", PROFILES)
def test_each_queued_answer_counts_exactly_its_max_tokens_text_chunks(profile):
    # The helper's exact count for real streams: 41 chunks, the role chunk not counted, 40 = max_tokens.
    from verify.jobs.lifecycle.max_num_seqs_queue import MAX_TOKENS, _tokens
    data = record("max-num-seqs-queue", profile)
    assert [_tokens(r) for r in data["requests"]] == [MAX_TOKENS] * 3 == [40] * 3


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("request_index, edit, tokens", [
    (0, role_chunk_without_its_role, 41),
    (0, role_chunk_with_null_content, 40),
    (1, text_chunk_with_null_content, 39),
    (2, choice_without_a_delta, 39),
    (0, usage_chunks_without_choices, 40),
], ids=lambda x: x.__name__ if callable(x) else None)
def test_tokens_counts_the_text_chunks_of_a_queued_answer(profile, request_index, edit, tokens):
    from verify.jobs.lifecycle.max_num_seqs_queue import _tokens
    request = record("max-num-seqs-queue", profile)["requests"][request_index]
    edit(request)
    assert _tokens(request) == tokens


@pytest.mark.parametrize("profile", PROFILES)
def test_each_request_timing_carries_its_token_count(profile):
    # The timings table's "text chunks" column: the count rides along with each request, sorted by first text.
    from verify.jobs.lifecycle.max_num_seqs_queue import request_timings
    timings = request_timings(record("max-num-seqs-queue", profile))
    assert [t["tokens"] for t in timings] == [40, 40, 40]
    assert [t["ttft"] for t in timings] == sorted(t["ttft"] for t in timings)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_first_text_is_the_first_chunk_with_content_not_the_role_chunk(profile):
    # First vs second chunk: the role chunk (content "") arriving earlier must not count as the first text.
    from verify.jobs.lifecycle.max_num_seqs_queue import request_timings
    data = record("max-num-seqs-queue", profile)
    before = [t["ttft"] for t in request_timings(data)]
    for request in data["requests"]:
        role = next(i for i in request["lines"] if i["line"].startswith("data: {"))
        role["t"] = 0.0
    assert [t["ttft"] for t in request_timings(data)] == before
    text = next(i for i in data["requests"][0]["lines"] if '"content":"Once"' in i["line"])
    assert text["t"] in before


# --- server-processes: _roles -------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", PROFILES)
def test_roles_name_the_listener_the_engine_core_and_the_worker_by_pid(profile):
    # The helper's exact return for a real process list: first process, EngineCore, Worker; no helper role.
    from verify.jobs.lifecycle.server_processes import process_roles
    after = record("server-processes", profile)["after"]
    roles = process_roles(after)
    assert {role: p["pid"] for role, p in roles.items()} == {
        "api server": after[0]["pid"], "engine core": _by_name(after, "VLLM::EngineCore")["pid"],
        "worker": _by_name(after, "VLLM::Worker")["pid"]}
    assert after[1]["pid"] not in {p["pid"] for p in roles.values()}  # the resource tracker


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name, role, known_by, claims", [
    ("VLLM::EngineCore", "engine core", "name", ("three-processes",)),
    ("VLLM::EngineCore", "engine core", "cmdline", ("three-processes",)),
    ("VLLM::Worker", "worker", "name", ("three-processes", "worker-holds-model")),
    ("VLLM::Worker", "worker", "cmdline", ("worker-holds-model",)),
], ids=["engine-core-by-name", "engine-core-by-cmdline", "worker-by-name", "worker-by-cmdline"])
def test_a_child_known_by_only_one_of_its_name_and_command_line_is_found(profile, name, role, known_by, claims):
    # Each half of the role test alone true: the name (its command line names no role), or the command line
    # (the process name is the interpreter's).
    from verify.jobs.lifecycle.server_processes import process_roles
    data = record("server-processes", profile)
    child = _by_name(data["after"], name)
    if known_by == "name":
        child["cmdline"] = _spawned(data["after"][0])
    else:
        child["name"] = data["after"][0]["name"]
    assert process_roles(data["after"])[role]["pid"] == child["pid"]
    for claim in claims:
        assert decide("server-processes", claim, data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name, role", [("VLLM::EngineCore", "engine core"), ("VLLM::Worker", "worker")],
                         ids=["engine-core", "worker"])
def test_a_child_that_names_no_role_anywhere_leaves_its_role_empty(profile, name, role):
    # Both halves false: neither name nor command line says what the process is, so no role is guessed.
    from verify.jobs.lifecycle.server_processes import process_roles
    data = record("server-processes", profile)
    child = _by_name(data["after"], name)
    child["name"], child["cmdline"] = data["after"][0]["name"], _spawned(data["after"][0])
    assert role not in process_roles(data["after"])
    assert decide("server-processes", "three-processes", data)["verdict"] == "refuted"
    assert decide("server-processes", "busy-cores", data)["verdict"] == "refuted"


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
    data = record("server-processes", profile)
    _busy_at(data, engine, worker, api)
    assert decide("server-processes", "busy-cores", data)["verdict"] == verdict
