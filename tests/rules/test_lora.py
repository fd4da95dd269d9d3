"""LoRA article: its rules replay real records captured from a live vLLM server serving adapters, edited."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row
from tests.rules.flips_lora import waiting_label_names_the_queue

RUNTIME = "lora-runtime"
MAX_LORAS = "lora-max-loras"


# --- lora-metric: waiting-named reads only scrapes in which requests waited ----------------------------

def _newest(scrape: dict) -> dict:
    return max(scrape["samples"], key=lambda x: x["value"])


def another_adapter_named_while_nothing_waited(data: dict) -> None:
    """A waiting label naming another adapter in a scrape where nothing waited says nothing: still refuted
    (the old rule confirmed on any one such scrape)."""
    quiet = [s for s in data["during"] if s["waiting"] == 0 and s["samples"]
             and _newest(s)["labels"].get("running_lora_adapters")]
    assert quiet
    for s in quiet:
        newest = _newest(s)
        newest["labels"]["waiting_lora_adapters"] = "attn-a" if newest["labels"]["running_lora_adapters"] != "attn-a" \
            else "attn-b"


def no_scrape_caught_requests_waiting(data: dict) -> None:
    """No scrape caught requests waiting: inconclusive."""
    for s in data["during"]:
        s["waiting"] = 0.0


def only_one_waiting_scrape_names_the_queue(data: dict) -> None:
    """Only some waiting scrapes naming adapters that are not running: inconclusive."""
    first = next(s for s in data["during"] if s["waiting"] > 0 and s["samples"]
                 and _newest(s)["labels"].get("running_lora_adapters"))
    _newest(first)["labels"]["waiting_lora_adapters"] = "mlp-c,attn-b"


# --- lora-runtime ---------------------------------------------------------------------------------------

def client_error_about_something_else(data: dict) -> None:
    """A client error about something else is not the rank's refusal."""
    data["steps"]["load_rank_32"].update(status=400, body={"error": {"message": "Bad request"}},
                                         body_text='{"error": {"message": "Bad request"}}')


# Each a claim, an edit of its committed record (None: as recorded) and the verdict it must give, on the
# records of both CPU profiles.
BOUNDARIES = [
    row("lora-metric.waiting-named", None, "refuted"),
    row("lora-metric.waiting-named", another_adapter_named_while_nothing_waited, "refuted"),
    row("lora-metric.waiting-named", no_scrape_caught_requests_waiting, "inconclusive", contains="0 of"),
    # Every waiting scrape naming adapters that are not running: confirmed.
    row("lora-metric.waiting-named", waiting_label_names_the_queue, "confirmed"),
    row("lora-metric.waiting-named", only_one_waiting_scrape_names_the_queue, "inconclusive"),
    row("lora-runtime.rank-client-error", client_error_about_something_else, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("status, verdict", [(200, "inconclusive"), (201, "inconclusive"), (None, "inconclusive"),
                                             (400, "confirmed"), (422, "confirmed"), (500, "refuted"),
                                             (503, "inconclusive")])
def test_only_a_refusal_of_the_rank_says_what_kind_of_error_it_is(profile, status, verdict):
    # 503 is no refusal the job expects (only 4xx and the worker's 500): a failed capture, so inconclusive.
    data = record(RUNTIME, profile)
    data["steps"]["load_rank_32"]["status"] = status
    assert decide(RUNTIME, "rank-client-error", data)["verdict"] == verdict


# --- lora-max-loras ---------------------------------------------------------------------------------------

def _shift(sent: dict, by: float) -> None:
    for line in sent["stream"]["lines"]:
        line["t"] = round(line["t"] + by, 6)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_third_adapter_starts_once_both_of_the_pair_have_finished(profile):
    from verify.jobs.lora._together import span
    from verify.jobs.lora.lora_max_loras import AFTER_BOTH_S, third_waited_s
    data = record(MAX_LORAS, profile)
    assert decide(MAX_LORAS, "two-at-a-time", data)["verdict"] == "confirmed"
    waited = [third_waited_s(t["three_adapters"]) for t in data["trials"]]
    from verify.jobs.lora.lora_max_loras import TELLING_TRIALS
    assert all(w[1] >= 0 for w in waited)
    assert sum(w[0] - w[1] > 2 * AFTER_BOTH_S for w in waited) >= TELLING_TRIALS

    def third(trial):
        group = trial["three_adapters"]
        firsts = sorted(group, key=lambda s: span(s)[0])
        return firsts[-1]
    # Boundary: the third's first token just at AFTER_BOTH_S before the later end confirms; a little more
    # before (still long after the first of the pair finished) refutes "once both have finished".
    for before, verdict in ((AFTER_BOTH_S - 0.001, "confirmed"), (AFTER_BOTH_S + 0.01, "refuted")):
        edited = record(MAX_LORAS, profile)
        for t, w in zip(edited["trials"], waited):
            _shift(third(t), -(w[1] + before))
        assert [third_waited_s(t["three_adapters"]) is not None for t in edited["trials"]] == [True] * 3
        assert decide(MAX_LORAS, "two-at-a-time", edited)["verdict"] == verdict
    # Two of the three sent after the first had finished (a busy machine once sent them a second late): the
    # order of service then says nothing about slots.
    apart = record(MAX_LORAS, profile)
    for sent in apart["trials"][0]["three_adapters"][1:]:
        sent["started_s"] = round(sent["started_s"] + 10.0, 4)
    v = decide(MAX_LORAS, "two-at-a-time", apart)
    assert v["verdict"] == "inconclusive" and "not all sent before the first of them finished" in v["because"]
    # A pair that finished within twice the tolerance of each other cannot tell "after both" from "after one".
    # With too few trials whose pair finished apart, the verdict cannot be given.
    close = record(MAX_LORAS, profile)
    for t in close["trials"][:2]:
        pair = [s for s in t["three_adapters"] if s is not third(t)]
        early, late = sorted(pair, key=lambda s: span(s)[1])
        last_text = [x for x in early["stream"]["lines"] if x["line"].startswith("data: {") and
                     json.loads(x["line"][6:]).get("choices") and
                     json.loads(x["line"][6:])["choices"][0].get("delta", {}).get("content")][-1]
        last_text["t"] = round(span(late)[1] - early["started_s"] - AFTER_BOTH_S, 6)
    v = decide(MAX_LORAS, "two-at-a-time", close)
    assert v["verdict"] == "inconclusive" and "cannot be told" in v["because"]


# --- lora-metric: old-series-stay: old series stay; only the newest is the current state ------------------

METRIC_JOB = "lora-metric"


def _old_named(data: dict) -> list[dict]:
    """The series after the requests that name an adapter, oldest first (the newest is the idle one)."""
    return sorted((s for s in data["after"]["samples"] if s["labels"]["running_lora_adapters"]
                   or s["labels"]["waiting_lora_adapters"]), key=lambda s: s["value"])


def _stay(series: int, named: int, newest: str = "none") -> str:
    return (f"after every request had answered: {series} series, {named} still naming adapters; "
            f"the newest names {newest}")


def newest_series_names_a_running_adapter(data: dict) -> None:
    """The newest series still names an adapter running: it is not idle."""
    _newest(data["after"])["labels"]["running_lora_adapters"] = "attn-a"


def newest_series_names_a_waiting_adapter(data: dict) -> None:
    """The newest series names an adapter waiting, none running: not idle either."""
    _newest(data["after"])["labels"]["waiting_lora_adapters"] = "attn-a"


def old_series_gone(data: dict) -> None:
    """Only the newest, idle series is left after the requests: the old ones did not stay."""
    data["after"]["samples"] = [_newest(data["after"])]


def one_old_series_stays(data: dict) -> None:
    """One old series naming an adapter stays beside the newest: enough."""
    data["after"]["samples"] = [_newest(data["after"]), _old_named(data)[0]]


def old_series_name_only_a_waiting_adapter(data: dict) -> None:
    """The old series name their adapter as waiting only: they still name adapters."""
    for s in _old_named(data):
        s["labels"]["running_lora_adapters"] = ""


def old_series_name_only_a_running_adapter(data: dict) -> None:
    """The old series name their adapter as running only: they still name adapters."""
    for s in _old_named(data):
        s["labels"]["waiting_lora_adapters"] = ""


def one_old_series_names_all_three_adapters(data: dict) -> None:
    """An old series waiting on all three of the job's adapters is still one of this job's series."""
    from verify.jobs.lora.lora_metric import ADAPTERS
    _old_named(data)[0]["labels"]["waiting_lora_adapters"] = ",".join(ADAPTERS)


def newest_series_of_another_jobs_adapter(data: dict) -> None:
    """The series with the largest value names an adapter of another job (running, none waiting): not this
    job's, so the newest of this job's series is still the idle one."""
    old = _old_named(data)[0]
    old["labels"].update(running_lora_adapters="sql-lora", waiting_lora_adapters="")
    old["value"] = _newest(data["after"])["value"] + 1


def no_sample_after_the_requests(data: dict) -> None:
    """The scrape after the requests held no series of the metric."""
    data["after"]["samples"] = []


@pytest.mark.parametrize("profile", PROFILES)
def test_old_series_stay_and_only_the_newest_is_idle(profile):
    data = record(METRIC_JOB, profile)
    n, named = len(data["after"]["samples"]), len(_old_named(data))
    assert named >= 2

    def verdict(edit):
        edited = record(METRIC_JOB, profile)
        edit(edited)
        return decide(METRIC_JOB, "old-series-stay", edited), edited

    check(decide(METRIC_JOB, "old-series-stay", data), "confirmed", because=_stay(n, named))
    v, edited = verdict(newest_series_names_a_running_adapter)
    check(v, "refuted", because=_stay(n, named + 1, str(_newest(edited["after"])["labels"])))
    v, edited = verdict(newest_series_names_a_waiting_adapter)
    check(v, "refuted", because=_stay(n, named + 1, str(_newest(edited["after"])["labels"])))
    check(verdict(old_series_gone)[0], "refuted", because=_stay(1, 0))
    check(verdict(one_old_series_stays)[0], "confirmed", because=_stay(2, 1))
    check(verdict(old_series_name_only_a_waiting_adapter)[0], "confirmed", because=_stay(n, named))
    check(verdict(old_series_name_only_a_running_adapter)[0], "confirmed", because=_stay(n, named))
    check(verdict(one_old_series_names_all_three_adapters)[0], "confirmed", because=_stay(n, named))
    check(verdict(newest_series_of_another_jobs_adapter)[0], "confirmed", because=_stay(n - 1, named - 1))
    check(verdict(no_sample_after_the_requests)[0], "inconclusive",
          because="no vllm:lora_requests_info sample after the requests")


# --- lora-max-loras: two-at-a-time, what its reason reports ---------------------------------------------

def _two_at_a_time(d: dict) -> str:
    """The reason two-at-a-time gives, from the module's own reading of the streams."""
    from verify.jobs.lora.lora_max_loras import AFTER_BOTH_S, pairs_together, third_waited_s
    waited = [third_waited_s(t["three_adapters"]) for t in d["trials"]]
    return (f"three different adapters sent at once: pairs that decoded together in each trial "
            f"{[pairs_together(t['three_adapters']) for t in d['trials']]} of 3; the third's first token after the "
            "first and the last of the pair finished: " +
            ", ".join("n/a" if w is None else f"{w[0] * 1000:+.0f} ms and {w[1] * 1000:+.0f} ms" for w in waited) +
            f" (no earlier than {AFTER_BOTH_S * 1000:.0f} ms before the last required); two different adapters sent "
            f"at once: {[pairs_together(t['two_adapters']) for t in d['trials']]} of 1 pair decoded together")


def _the_third(trial: dict) -> dict:
    from verify.jobs.lora._together import span
    return max(trial["three_adapters"], key=lambda s: span(s)[0])


def third_decoded_with_the_pair(data: dict) -> None:
    """In the first trial the third adapter's stream starts with the pair's: three decode at once."""
    from verify.jobs.lora._together import span
    t = data["trials"][0]
    third = _the_third(t)
    first = min(span(s)[0] for s in t["three_adapters"])
    third["started_s"] = round(third["started_s"] - (span(third)[0] - first), 4)


def two_adapters_one_after_the_other(data: dict) -> None:
    """In the first trial, the second of the two adapters is sent 10 s later: they did not decode together."""
    data["trials"][0]["two_adapters"][1]["started_s"] += 10.0


def one_trial_missing(data: dict) -> None:
    """The last trial was not recorded: fewer trials than the job runs."""
    data["trials"].pop()


@pytest.mark.parametrize("profile", PROFILES)
def test_two_at_a_time_reports_each_trial(profile):
    from verify.jobs.lora.lora_max_loras import third_waited_s
    data = record(MAX_LORAS, profile)
    n = len(data["trials"])
    check(decide(MAX_LORAS, "two-at-a-time", data), "confirmed",
          because=_two_at_a_time(data) + f"; {n} of {n} trials tell both from one")

    three = record(MAX_LORAS, profile)
    third_decoded_with_the_pair(three)
    assert third_waited_s(three["trials"][0]["three_adapters"]) is None
    check(decide(MAX_LORAS, "two-at-a-time", three), "refuted", because=_two_at_a_time(three),
          contains=("trial [3, 1, 1] of 3", "finished: n/a, +"))

    two = record(MAX_LORAS, profile)
    two_adapters_one_after_the_other(two)
    check(decide(MAX_LORAS, "two-at-a-time", two), "refuted", because=_two_at_a_time(two),
          contains="at once: [0, 1, 1] of 1 pair")

    failed = record(MAX_LORAS, profile)
    one_trial_missing(failed)
    check(decide(MAX_LORAS, "two-at-a-time", failed), "inconclusive",
          because="a capture failed (an error status or a stream without text)")


# --- lora-max-loras: two-at-a-time at its thresholds ------------------------------------------------------

def _third_starts_before_the_last_end_by(data: dict, seconds: float) -> None:
    """In every trial, the third adapter's first token comes `seconds` before the last of the pair finished."""
    from verify.jobs.lora._together import span
    from verify.jobs.lora.lora_max_loras import third_waited_s
    for t in data["trials"]:
        _, after_last = third_waited_s(t["three_adapters"])
        _the_third(t)["started_s"] -= after_last + seconds
        assert abs(third_waited_s(t["three_adapters"])[1] + seconds) < 1e-6, span(_the_third(t))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("before, verdict", [(0.049, "confirmed"), (0.051, "refuted")])
def test_the_third_may_start_at_most_50_ms_before_the_last_of_the_pair_ends(profile, before, verdict):
    data = record(MAX_LORAS, profile)
    _third_starts_before_the_last_end_by(data, before)
    assert decide(MAX_LORAS, "two-at-a-time", data)["verdict"] == verdict


def _pair_ends_close(t: dict, apart: float) -> None:
    """The pair of trial t finishes `apart` seconds apart: the first of them to end is sent later."""
    from verify.jobs.lora._together import span
    from verify.jobs.lora.lora_max_loras import third_waited_s
    after_first, after_last = third_waited_s(t["three_adapters"])
    third = _the_third(t)
    first_to_end = min((s for s in t["three_adapters"] if s is not third), key=lambda s: span(s)[1])
    first_to_end["started_s"] += (after_first - after_last) - apart


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("apart, verdict", [(0.09, "inconclusive"), (0.11, "confirmed")])
def test_a_trial_tells_one_from_both_only_with_the_pair_100_ms_apart(profile, apart, verdict):
    """Every trial but one has its pair finish `apart` s apart; two telling trials are needed."""
    from verify.jobs.lora.lora_max_loras import TELLING_TRIALS, third_waited_s
    data = record(MAX_LORAS, profile)
    for t in data["trials"][1:]:
        _pair_ends_close(t, apart)
        w = third_waited_s(t["three_adapters"])
        assert w is not None and abs((w[0] - w[1]) - apart) < 1e-6
    v = decide(MAX_LORAS, "two-at-a-time", data)
    assert v["verdict"] == verdict, v
    if verdict == "inconclusive":
        assert "only 1 trial(s) had the pair finish more than 100 ms apart" in v["because"]
        assert f"({TELLING_TRIALS} needed)" in v["because"]


@pytest.mark.parametrize("profile", PROFILES)
def test_three_not_all_sent_before_the_first_finished_is_inconclusive(profile):
    from verify.jobs.lora._together import span
    data = record(MAX_LORAS, profile)
    t = data["trials"][0]
    first_end = min(span(s)[1] for s in t["three_adapters"])
    third = _the_third(t)
    third["started_s"] = first_end + 0.001
    v = decide(MAX_LORAS, "two-at-a-time", data)
    assert v["verdict"] == "inconclusive" and "were not all sent before the first of them finished" in v["because"], v
