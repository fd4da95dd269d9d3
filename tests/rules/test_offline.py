"""Offline inference article: its rules replay real records captured from a live vLLM engine and server, edited."""

from __future__ import annotations

import math

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, every_verdict, exactly, record, row
from verify.jobs.offline import offline_vs_server

# --- offline-chat -------------------------------------------------------------------------------------


def template_ids_read_from_a_batch_encoding(data: dict) -> None:
    """A chat template that gave no token ids (a BatchEncoding read as a list) is inconclusive."""
    data["template_token_ids"] = ["input_ids", "attention_mask"]


def template_added_nothing(data: dict) -> None:
    """The template's token ids are generate()'s prompt: the template added nothing."""
    data["template_token_ids"] = data["generate"]["prompt_token_ids"]


def chat_returned_no_tokens(data: dict) -> None:
    """An empty chat answer is a failed capture, not a different answer: chat() returned no tokens at all."""
    data["chat"].update(text="", events=0)


# --- offline-generation-defaults ------------------------------------------------------------------------

def new_sampling_params_kept_a_model_default(data: dict) -> None:
    """A new SamplingParams whose answers ran to the model's max_new_tokens kept a model default."""
    for out in data["ways"]["SamplingParams(temperature=0)"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = data["model_defaults"]["max_new_tokens"]


def changed_defaults_lost_max_new_tokens(data: dict) -> None:
    """A changed copy of the defaults that lost the model's max_new_tokens."""
    for out in data["ways"]["model defaults, temperature=0"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = 16


def server_ignored_max_new_tokens(data: dict) -> None:
    """A server that ignored the model's max_new_tokens: answers run past it."""
    for answer in data["server"]["temperature only"]["answers"]:
        answer["tokens"] = 40


def every_answer_ended_on_its_own(data: dict) -> None:
    """Answers that all ended on their own cannot show where the length limit was."""
    for out in data["ways"]["no SamplingParams"]["outputs"]:
        out["finish_reason"] = "stop"


def a_failed_server_request(data: dict) -> None:
    """A failed server request makes generation-defaults inconclusive."""
    data["server"]["temperature only"]["answers"][0].update(status=500, events=0)


# --- offline-vs-server -----------------------------------------------------------------------------------

def server_ran_the_whole_batch_at_once(data: dict) -> None:
    """A server that ran the whole batch at once caps nothing."""
    for trial in data["server"]["trials"]:
        trial.update(peak_running=data["prompts"], peak_waiting=0)


def requests_waiting_for_a_full_kv_cache(data: dict) -> None:
    """Requests waiting because the whole batch would not fit in the KV cache: a memory limit."""
    data["server"]["trials"][0]["peak_kv_usage"] = 0.95


def offline_twice_as_slow(data: dict) -> None:
    """An offline engine twice as slow as the server."""
    fastest_server = min(t["seconds"] for t in data["server"]["trials"])
    for trial in data["offline"]["trials"]:
        trial["seconds"] = fastest_server * 2


def one_answer_changed_through_the_server(data: dict) -> None:
    """One answer that came out differently through the server."""
    data["server"]["trials"][1]["texts"][0] += " (changed)"


def offline_starts_in_half_the_time(data: dict) -> None:
    """Start-up: markedly sooner only when the offline start beats the fastest server start by over 25 %."""
    data["offline"]["starts_s"] = [min(data["server"]["starts_s"]) * 0.5]


def offline_start_ahead_within_the_noise(data: dict) -> None:
    """A lead within the noise: the offline start at 90 % of the fastest server start."""
    data["offline"]["starts_s"] = [min(data["server"]["starts_s"]) * 0.9]


def offline_start_not_timed(data: dict) -> None:
    """A run whose offline engine was not started from a fresh process: start-up needs a timed start of each."""
    data["offline"]["starts_s"] = []


def a_failed_server_batch(data: dict) -> None:
    """A failed server batch makes offline-vs-server inconclusive."""
    data["server"]["trials"][0].update(error="APIConnectionError: Connection error.", events=0, texts=[])


GENERATION_DEFAULTS = ("no-params-follow-model", "explicit-replaces-all", "start-from-defaults", "server-fills-gaps")
VS_SERVER = ("server-caps-running", "larger-limits", "throughput", "same-outputs")

# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    row("offline-chat.template-applied", None, "confirmed"),
    row("offline-chat.template-applied", template_ids_read_from_a_batch_encoding, "inconclusive"),
    row("offline-chat.template-applied", template_added_nothing, "refuted"),
    row("offline-chat.answers-differ", None, "confirmed"),
    *[row(f"offline-generation-defaults.{claim}", None, "confirmed") for claim in GENERATION_DEFAULTS],
    row("offline-generation-defaults.explicit-replaces-all", new_sampling_params_kept_a_model_default, "refuted"),
    row("offline-generation-defaults.start-from-defaults", changed_defaults_lost_max_new_tokens, "refuted"),
    row("offline-generation-defaults.server-fills-gaps", server_ignored_max_new_tokens, "refuted"),
    row("offline-generation-defaults.no-params-follow-model", every_answer_ended_on_its_own, "inconclusive"),
    *[row(f"offline-vs-server.{claim}", None, "confirmed") for claim in VS_SERVER],
    row("offline-vs-server.server-caps-running", server_ran_the_whole_batch_at_once, "refuted"),
    row("offline-vs-server.larger-limits", server_ran_the_whole_batch_at_once, "refuted"),
    row("offline-vs-server.server-caps-running", requests_waiting_for_a_full_kv_cache, "refuted"),
    row("offline-vs-server.throughput", offline_twice_as_slow, "refuted"),
    row("offline-vs-server.same-outputs", one_answer_changed_through_the_server, "refuted"),
    row("offline-vs-server.starts-sooner", offline_starts_in_half_the_time, "confirmed"),
    row("offline-vs-server.starts-sooner", offline_start_ahead_within_the_noise, "refuted"),
    row("offline-vs-server.starts-sooner", offline_start_not_timed, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("job_id, edit", [
    ("offline-generation-defaults", a_failed_server_request),
    ("offline-vs-server", a_failed_server_batch),
    ("offline-chat", chat_returned_no_tokens),
], ids=["offline-generation-defaults", "offline-vs-server", "offline-chat"])
def test_a_failed_capture_makes_every_claim_of_the_job_inconclusive(job_id, edit):
    data = record(job_id)
    edit(data)
    assert every_verdict(job_id, data) == {"inconclusive"}


# --- offline-vs-server at its thresholds: the stopping rule, the server's cap, start-up --------------------------


def _server_throughputs(data: dict) -> list[float]:
    return [offline_vs_server.throughput(t, data) for t in data["server"]["trials"]]


def _offline_at(data: dict, rate: float) -> None:
    """Every offline trial re-timed to `rate` tokens/s, to the last bit."""
    seconds = exactly(lambda s: offline_vs_server.throughput({"seconds": s}, data), rate,
                       data["prompts"] * data["max_tokens"] / rate)
    for trial in data["offline"]["trials"]:
        trial["seconds"] = seconds


EDGE = 1 - offline_vs_server.THROUGHPUT_TOLERANCE


def offline_exactly_at_the_tolerance_below_the_fastest_server_trial(data: dict) -> None:
    """The offline trials re-timed to exactly 90 % of the fastest server trial's throughput: no third server
    trial can lift the server's median above that, so "at least matches (within 10 %)" holds already."""
    _offline_at(data, max(_server_throughputs(data)) * EDGE)


def offline_between_the_tolerances_of_the_two_server_trials(data: dict) -> None:
    """The offline trials re-timed to the middle of 90 % of the two server trials' throughputs: a third server
    trial decides whether the offline median is within 10 % of the server's."""
    low, high = sorted(_server_throughputs(data))
    _offline_at(data, (low + high) / 2 * EDGE)


def offline_exactly_at_the_tolerance_below_the_slowest_server_trial(data: dict) -> None:
    """The offline trials re-timed to exactly 90 % of the slowest server trial's throughput: a third server trial
    as slow would keep it within 10 %, so the verdict is still open."""
    _offline_at(data, min(_server_throughputs(data)) * EDGE)


def offline_just_under_the_tolerance_below_the_slowest_server_trial(data: dict) -> None:
    """One bit under 90 % of the slowest server trial's throughput: no third server trial can save it."""
    _offline_at(data, math.nextafter(min(_server_throughputs(data)) * EDGE, 0))


# Each edit of the committed cpu record (three offline trials and two server trials, which settled it) and what
# the stopping rule says of the throughput claim: open, holds or fails.
THROUGHPUT_SIDES = [
    (None, "holds"),
    (offline_twice_as_slow, "fails"),
    (offline_exactly_at_the_tolerance_below_the_fastest_server_trial, "holds"),
    (offline_between_the_tolerances_of_the_two_server_trials, "open"),
    (offline_exactly_at_the_tolerance_below_the_slowest_server_trial, "open"),
    (offline_just_under_the_tolerance_below_the_slowest_server_trial, "fails"),
]


@pytest.mark.parametrize("edit, side", THROUGHPUT_SIDES, ids=[e.__name__ if e else "as-recorded" for e, _ in THROUGHPUT_SIDES])
def test_server_trials_stop_only_where_a_third_could_not_change_the_verdict(edit, side):
    data = record("offline-vs-server")
    if edit is not None:
        edit(data)
    stop = offline_vs_server.settled(data)
    assert stop["trials"] == 2 and stop["max_trials"] == offline_vs_server.TRIALS, stop
    assert stop["settled"] == (side != "open"), stop
    assert stop["why"].endswith(f" tokens/s: {side}"), stop
    v = decide("offline-vs-server", "throughput", data)
    assert v["verdict"] == {"open": "inconclusive", "holds": "confirmed", "fails": "refuted"}[side], v


@pytest.mark.parametrize("profile", PROFILES)
def test_one_server_trial_bounds_no_median(profile):
    """One server trial of up to three: the other two could put the median anywhere."""
    data = record("offline-vs-server", profile)
    data["server"]["trials"] = data["server"]["trials"][:1]
    assert offline_vs_server.settled(data) == {"trials": 1, "max_trials": 3, "settled": False,
                                               "why": "too few trials to bound a median"}


def _peaks(**peaks):
    def edit(data: dict) -> None:
        for trial in data["server"]["trials"]:
            trial.update(peaks)
    return edit


def no_request_ran(data: dict) -> None:
    """A server whose /metrics never showed a request running: no KV-cache use per request to scale."""
    _peaks(peak_running=0.0)(data)


def one_request_ran_in_a_small_cache_share(data: dict) -> None:
    """At most one request running at once, with 0.5 % of the KV cache: all 160 would take 80 %, so the cap
    is the sequence limit."""
    _peaks(peak_running=1.0, peak_kv_usage=0.005)(data)


def batch_would_fill_the_kv_cache_exactly(data: dict) -> None:
    """Peak KV-cache use 80 % with 128 running: all 160 would take exactly 100 %, which is not under it."""
    _peaks(peak_kv_usage=0.8)(data)
    assert 0.8 * data["prompts"] / 128.0 == 1.0


def batch_would_just_fit_the_kv_cache(data: dict) -> None:
    """Peak KV-cache use 79 % with 128 running: all 160 would take under 100 %."""
    _peaks(peak_kv_usage=0.79)(data)


def whole_batch_running_at_one_peak(data: dict) -> None:
    """One trial's peak ran all 160 at once (the other still made 32 wait): the server did not cap the batch."""
    data["server"]["trials"][0]["peak_running"] = float(data["prompts"])


def nothing_waited(data: dict) -> None:
    """No request ever waited: nothing shows a cap."""
    _peaks(peak_waiting=0.0)(data)


def one_request_waited(data: dict) -> None:
    """The least wait there is: one request queued."""
    _peaks(peak_waiting=1.0)(data)


def offline_start_exactly_a_quarter_sooner(data: dict) -> None:
    """The offline start at exactly 75 % of the fastest server start: 25 % sooner, not above it. The fastest
    start is first moved down to a quarter second, where some float is exactly 75 % of it (for many a
    recorded start none is)."""
    starts = data["server"]["starts_s"]
    i = starts.index(min(starts))
    starts[i] = fastest = math.floor(starts[i] * 4) / 4
    data["offline"]["starts_s"] = [exactly(lambda s: 1 - s / fastest, offline_vs_server.STARTS_SOONER_BY,
                                            fastest * 0.75)]


def _server_starts(n: int):
    def edit(data: dict) -> None:
        data["server"]["starts"] = data["server"]["starts"][:n]
        data["server"]["starts_s"] = data["server"]["starts_s"][:n]
    return edit


def one_server_start(data: dict) -> None:
    """A run that timed one server start (its first) before this job."""
    _server_starts(1)(data)


def two_server_starts(data: dict) -> None:
    """A run that timed two server starts (its first two) before this job."""
    _server_starts(2)(data)


def server_start_not_timed(data: dict) -> None:
    """A run with no server start timed from a fresh process before this job."""
    _server_starts(0)(data)


CAP, STARTS = "offline-vs-server.server-caps-running", "offline-vs-server.starts-sooner"
EDGES = [
    row(CAP, no_request_ran, "refuted", contains="would take about 11315%)"),
    row(CAP, one_request_ran_in_a_small_cache_share, "confirmed", contains="would take about 80%)"),
    row(CAP, batch_would_fill_the_kv_cache_exactly, "refuted", contains="would take about 100%)"),
    row(CAP, batch_would_just_fit_the_kv_cache, "confirmed"),
    row(CAP, whole_batch_running_at_one_peak, "refuted"),
    row(CAP, nothing_waited, "refuted"),
    row(CAP, one_request_waited, "confirmed"),
    row(STARTS, offline_start_not_timed, "inconclusive", contains="the run timed 0 offline and "),
    row(STARTS, server_start_not_timed, "inconclusive",
        because="the run timed 1 offline and 0 server start(s) from a fresh process; both are needed"),
    row(STARTS, offline_start_exactly_a_quarter_sooner, "refuted", contains="+25% against the fastest"),
    # The names of the starts are whichever the run made first: the counts are what the edits fix.
    row(STARTS, one_server_start, "refuted", contains="s (1 start: server "),
    row(STARTS, two_server_starts, "refuted", contains="s (2 starts: server "),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDGES))
def test_an_edit_to_a_threshold_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)
