"""wire-format: the rounds of curl runs stop once the rest could not move a median spread across BURST_S.

Replays the committed records (captured from a live vLLM server), cut back to fewer rounds or edited; the
job's collect() is run with its curl runs replayed from a record.
"""

from __future__ import annotations

import copy

import pytest

from tests.rules._records import PROFILES, decide, record
from tests.rules.flips_streaming import HAND_FLIPS
from verify.jobs.streaming import wire_format as job

JOB = "wire-format"
CLAIMS = ("no-n-pipe-burst", "no-n-terminal-burst")


def _cut(d: dict, rounds: int) -> dict:
    for key in d["runs"]:
        d["runs"][key] = d["runs"][key][:rounds]
    return d


def _replaying(d: dict):
    """A stand-in for wire_format._run that hands back the record's runs in the order collect() asks for them."""
    queues = {key: list(runs) for key, runs in d["runs"].items()}
    calls = []

    def run(ctx, script, terminal, drop_n=False):
        if script == job.SNIPPETS[1]:
            return copy.deepcopy(d["completions"])
        if (terminal, drop_n) == (False, False) and not calls:
            calls.append("chat")
            return copy.deepcopy(d["chat"])
        key = next(k for k, t, n in job.VARIANTS if (t, n) == (terminal, drop_n))
        calls.append(key)
        return copy.deepcopy(queues[key].pop(0))
    return run, calls


class _Ctx:
    def snippet_path(self, name):  # not reached: _run is replaced
        raise AssertionError(name)


def _all_rounds(d: dict) -> dict:
    """The record with TRIALS runs of each way of running curl. A record whose modes stopped early (the rest
    could not change their verdicts) lacks the last rounds: each missing run is a deep copy of that way's first
    recorded run (a real capture, edited by the test where it needs another spread)."""
    for runs in d["runs"].values():
        while len(runs) < job.TRIALS:
            runs.append(copy.deepcopy(runs[0]))
    return d


def _mode_runs(d: dict, mode: str) -> int:
    return min(len(d["runs"][f"with_n_{mode}"]), len(d["runs"][f"without_n_{mode}"]))


def _settled_because(d: dict, mode: str) -> str:
    """How a settled verdict's reason counts the runs it rests on (collect() skips the runs with -N once
    those without -N fix the verdict, so the two counts can differ)."""
    n_without, n_with = len(d["runs"][f"without_n_{mode}"]), len(d["runs"][f"with_n_{mode}"])
    if min(n_without, n_with) >= job.TRIALS:
        return "(3 interleaved runs each;"
    if n_without == n_with:
        return f"({n_without} interleaved runs each, of up to 3: the rest could not have changed the verdict"
    return (f"({n_without} interleaved runs without -N and {n_with} with -N, of up to 3 each: the rest could not "
            "have changed the verdict")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_records_settle_at_their_rounds_with_the_same_verdicts(profile):
    full = record(JOB, profile)
    if "stopped" in full:  # written by collect(): its report is the rules' on the runs it kept
        assert full["stopped"] == {"rounds": max(len(r) for r in full["runs"].values()), "max_rounds": job.TRIALS,
                                   "why": "; ".join(f"{m}: {job._side(full, m) or 'open'}" for m in job.MODES)}
    one = _cut(record(JOB, profile), 1)
    for claim in CLAIMS:
        v = decide(JOB, claim, one)
        assert v["verdict"] == "inconclusive" and "1 of up to 3 interleaved runs" in v["because"], v
    for claim in CLAIMS:
        mode = claim.split("-")[2]
        n = _mode_runs(full, mode)  # fewer than TRIALS once the rest could not change the mode's verdict
        rounds = max(len(full["runs"][f"{way}_{mode}"]) for way in ("with_n", "without_n"))
        v_full = decide(JOB, claim, full)
        assert v_full["verdict"] == "refuted", v_full
        assert job._side(full, mode) is not None or n == job.TRIALS
        assert _settled_because(full, mode) in v_full["because"], v_full
        # Cut back to any number of its rounds: inconclusive where they leave the medians open, else the
        # full record's verdict.
        for k in range(2, rounds + 1):
            cut = _cut(record(JOB, profile), k)
            side, v = job._side(cut, mode), decide(JOB, claim, cut)
            if "stopped" in full and k < rounds:  # collect() would have stopped the mode at k rounds otherwise
                assert side is None, (k, side)
            if side is None and _mode_runs(cut, mode) < job.TRIALS:
                assert v["verdict"] == "inconclusive" and f"{_mode_runs(cut, mode)} of up to 3 interleaved runs" \
                    in v["because"], v
                continue
            assert v["verdict"] == "refuted", (k, v)
            assert _settled_because(cut, mode) in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
def test_two_rounds_that_agree_settle_a_refutation(profile):
    # The second round a deep copy of the recorded first: the medians are fixed whatever a third measures.
    two = _cut(record(JOB, profile), 1)
    for runs in two["runs"].values():
        runs.append(copy.deepcopy(runs[0]))
    for claim in CLAIMS:
        assert job._side(two, claim.split("-")[2]) == "no burst"
        v = decide(JOB, claim, two)
        assert v["verdict"] == "refuted" and "2 interleaved runs each, of up to 3" in v["because"], v


@pytest.mark.parametrize("claim", CLAIMS)
def test_a_burst_without_n_settles_a_confirmation_in_two_rounds(claim):
    d = record(JOB)
    HAND_FLIPS[f"{JOB}.{claim}"](d)
    assert decide(JOB, claim, d)["verdict"] == "confirmed"
    assert decide(JOB, claim, _cut(copy.deepcopy(d), 2))["verdict"] == "confirmed"
    # One run of two a burst, the other not: the third round decides.
    mode = claim.split("-")[2]
    two = _cut(copy.deepcopy(d), 2)
    two["runs"][f"without_n_{mode}"][1] = copy.deepcopy(record(JOB)["runs"][f"without_n_{mode}"][1])
    assert job._side(two, mode) is None
    assert decide(JOB, claim, two)["verdict"] == "inconclusive"


def test_collect_stops_after_the_rounds_that_settle_both_modes(monkeypatch):
    d = record(JOB)
    run, calls = _replaying(d)
    monkeypatch.setattr(job, "_run", run)
    got = job.collect(_Ctx())
    # The transcript is the first run with -N into a pipe; in the second round the runs without -N settle
    # both modes ("no burst" whatever runs with -N would measure), so none with -N is run.
    assert calls == ["chat", "without_n_pipe", "without_n_terminal", "with_n_terminal",
                     "without_n_pipe", "without_n_terminal"]
    assert got["runs"]["with_n_pipe"] == [d["chat"]]
    assert {k: len(v) for k, v in got["runs"].items()} == {"with_n_pipe": 1, "without_n_pipe": 2,
                                                           "with_n_terminal": 1, "without_n_terminal": 2}
    assert got["stopped"] == {"rounds": 2, "max_rounds": 3, "why": "pipe: no burst; terminal: no burst"}
    for claim in CLAIMS:
        v = decide(JOB, claim, got)
        assert v["verdict"] == "refuted" and "2 interleaved runs without -N and 1 with -N, of up to 3 each" \
            in v["because"], v


def test_collect_runs_a_mode_on_while_it_is_open(monkeypatch):
    d = _all_rounds(record(JOB))
    # The second terminal run without -N a burst, the first not: terminal stays open after two rounds.
    # (The third round's runs, where the record stopped after two, are copies of its first, see _all_rounds.)
    HAND_FLIPS[f"{JOB}.no-n-terminal-burst"](d)
    d["runs"]["without_n_terminal"][0] = copy.deepcopy(record(JOB)["runs"]["without_n_terminal"][0])
    run, calls = _replaying(d)
    monkeypatch.setattr(job, "_run", run)
    got = job.collect(_Ctx())
    # Third round: the third run without -N (a burst) settles the median, and the two with -N already
    # measured fix theirs above BURST_S, so no third run with -N is needed.
    assert calls[1:] == ["without_n_pipe", "without_n_terminal", "with_n_terminal",
                         "without_n_pipe", "without_n_terminal", "with_n_terminal",
                         "without_n_terminal"]
    assert {k: len(v) for k, v in got["runs"].items()} == {"with_n_pipe": 1, "without_n_pipe": 2,
                                                           "with_n_terminal": 2, "without_n_terminal": 3}
    assert got["stopped"]["rounds"] == 3
    assert decide(JOB, "no-n-terminal-burst", got)["verdict"] == "confirmed"
    assert decide(JOB, "no-n-pipe-burst", got)["verdict"] == "refuted"
