"""Headline figures, read from the committed cpu records: every job's figures are there and finite,
a record compared with itself moves nothing, a real move beyond the tolerance is reported, and a
failed or partial capture gives fewer figures, never an exception.
"""

from __future__ import annotations

import copy
import math
import random

import pytest

from verify.evidence import figures as figures_module
from verify.evidence.figures import FIGURES, Figures, figures_of, moved
from verify.evidence.record import Record
from verify.registry import all_jobs

JOBS = sorted(FIGURES)
TIMED = [j for j in JOBS if FIGURES[j].tolerance > 0]
EXACT = [j for j in JOBS if FIGURES[j].tolerance == 0]


def _data(job_id: str) -> dict:
    record = Record.load(job_id, "cpu")
    assert record is not None, f"{job_id} has no committed cpu record"
    return copy.deepcopy(record.data)


def _scale_measurements(node, factor: float):
    """Every measured value (a float that is not a whole number) times factor. Whole numbers are counts,
    lengths and limits: they stay, so the data still has the shape the job reads."""
    if isinstance(node, dict):
        return {k: _scale_measurements(v, factor) for k, v in node.items()}
    if isinstance(node, list):
        return [_scale_measurements(v, factor) for v in node]
    if isinstance(node, float) and not node.is_integer():
        return node * factor
    return node


@pytest.mark.parametrize("job_id", JOBS)
def test_every_job_gives_finite_figures_from_its_committed_record(job_id):
    found = figures_of(job_id, _data(job_id))
    assert found, f"{job_id}: no figures from the committed record"
    assert 2 <= len(found) <= 5
    assert all(isinstance(v, float) and math.isfinite(v) for v in found.values()), found
    # Every figure the job declares comes out of a complete record: a getter that fails on it (a typo'd
    # key, a renamed field) is named here, not silently dropped.
    assert set(found) == set(FIGURES[job_id].extract.names), set(FIGURES[job_id].extract.names) - set(found)


def test_every_job_with_figures_is_a_registered_job():
    assert set(FIGURES) <= set(all_jobs())


def _named_tolerances() -> dict[str, float]:
    """Every tolerance constant a figure may use: the module's own, and the jobs' thresholds it borrows."""
    from verify.jobs.prefill_decode import bench_agreement
    return {"TIMING_TOLERANCE": figures_module.TIMING_TOLERANCE, "EXACT": figures_module.EXACT,
            "TTFT_AGREEMENT": bench_agreement.TTFT_AGREEMENT}


@pytest.mark.parametrize("job_id", JOBS)
def test_each_job_says_why_its_tolerance(job_id):
    """A tolerance is a named constant, and the reason given names it (or says the figures are exact):
    a number typed into one job's entry, or a reason that names another constant, fails here."""
    f = FIGURES[job_id]
    assert 0 <= f.tolerance < 1
    named = [name for name, value in _named_tolerances().items() if value == f.tolerance]
    assert named, f"{job_id}: tolerance {f.tolerance} is no named constant"
    if f.tolerance == figures_module.EXACT:
        assert "exact" in f.why, f"{job_id}: an exact figure's reason does not say it is exact"
    else:
        assert any(name in f.why for name in named), f"{job_id}: the reason names none of {named}: {f.why!r}"


@pytest.mark.parametrize("job_id", JOBS)
def test_a_record_compared_with_itself_moves_nothing(job_id):
    data = _data(job_id)
    assert moved(job_id, data, copy.deepcopy(data)) == []


@pytest.mark.parametrize("job_id", TIMED)
def test_measurements_scaled_beyond_the_tolerance_are_reported(job_id):
    before = _data(job_id)
    tolerance = FIGURES[job_id].tolerance
    factor = 1 + 2 * tolerance
    after = _scale_measurements(before, factor)
    moves = moved(job_id, before, after)
    assert moves, f"{job_id}: nothing moved with every measurement x{factor}"
    assert [m["name"] for m in moves] == sorted(m["name"] for m in moves)
    for m in moves:
        assert set(m) == {"name", "before", "after", "change", "tolerance", "unit"}
        assert abs(m["change"]) > tolerance
        assert m["tolerance"] == tolerance and m["unit"] == FIGURES[job_id].unit
    # The other way round, the same figures move the other way.
    back = {m["name"]: m["change"] for m in moved(job_id, after, before)}
    assert set(back) == {m["name"] for m in moves}
    assert all((back[m["name"]] > 0) != (m["change"] > 0) for m in moves)


@pytest.mark.parametrize("job_id", TIMED)
def test_measurements_within_the_tolerance_are_not_reported(job_id):
    before = _data(job_id)
    after = _scale_measurements(before, 1 + FIGURES[job_id].tolerance / 4)
    assert moved(job_id, before, after) == []


# One real change per exact job: a count in the capture, changed by one step.
def _one_more_completion_token(d):
    d["completions_default"]["completion_tokens"] += 1


def _one_more_block(d):
    d["cache_config"]["num_gpu_blocks"] = str(int(d["cache_config"]["num_gpu_blocks"]) + 1)


def _twice_the_blocks(d):
    d["num_blocks"] *= 2  # the same usage readings now mean twice the blocks held


EXACT_EDITS = {"billing": _one_more_completion_token, "kv-sizing": _one_more_block,
               "kv-reservation": _twice_the_blocks}


def test_every_exact_job_has_an_edit():
    assert set(EXACT) == set(EXACT_EDITS)


@pytest.mark.parametrize("job_id", EXACT)
def test_any_change_of_an_exact_figure_is_reported(job_id):
    before = _data(job_id)
    after = copy.deepcopy(before)
    EXACT_EDITS[job_id](after)
    moves = moved(job_id, before, after)
    assert moves and all(m["tolerance"] == 0 and m["before"] != m["after"] for m in moves)


def test_a_figure_that_was_zero_moves_when_it_is_no_longer_zero(monkeypatch):
    monkeypatch.setitem(FIGURES, "fake-job", Figures(lambda d: d, 0.3, "a test"))
    assert moved("fake-job", {"a": 0.0, "b": 2.0}, {"a": 1.0, "b": 2.1}) == [
        {"name": "a", "before": 0.0, "after": 1.0, "change": None, "tolerance": 0.3, "unit": ""}]
    assert moved("fake-job", {"a": 0.0}, {"a": 0.0}) == []


def test_change_is_relative_signed_and_only_for_figures_in_both(monkeypatch):
    monkeypatch.setitem(FIGURES, "fake-job", Figures(lambda d: d, 0.25, "a test", "ms"))
    got = moved("fake-job", {"fell": 200.0, "rose": 100.0, "only before": 1.0, "same": 5.0},
                {"fell": 100.0, "rose": 130.0, "only after": 9.0, "same": 5.0})
    assert got == [
        {"name": "fell", "before": 200.0, "after": 100.0, "change": -0.5, "tolerance": 0.25, "unit": "ms"},
        {"name": "rose", "before": 100.0, "after": 130.0, "change": 0.3, "tolerance": 0.25, "unit": "ms"}]


def test_unknown_job_has_no_figures():
    assert figures_of("no-such-job", {"a": 1}) == {}
    assert moved("no-such-job", {"a": 1}, {"a": 2}) == []


@pytest.mark.parametrize("job_id", JOBS)
@pytest.mark.parametrize("failed", [{}, None, [], "error", {"capture": "sse", "error": "ConnectError"}])
def test_a_failed_capture_gives_no_figures(job_id, failed):
    assert figures_of(job_id, failed) == {}
    assert moved(job_id, failed, _data(job_id)) == []


@pytest.mark.parametrize("job_id", JOBS)
def test_data_missing_a_part_gives_fewer_figures_without_raising(job_id):
    data = _data(job_id)
    full = figures_of(job_id, data)
    for key in data:
        for broken in ({k: v for k, v in data.items() if k != key},
                       {**data, key: {"capture": "request", "error": "ReadTimeout"}}, {**data, key: None}):
            got = figures_of(job_id, broken)
            assert set(got) <= set(full)
            assert all(got[n] == full[n] for n in got), key


def _paths(node, path=()):
    """Every path into the data; of a long list, its first three and last two items."""
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        indexes = range(len(node)) if len(node) <= 5 else (0, 1, 2, -2, -1)
        for i in indexes:
            yield from _paths(node[i], path + (i,))


@pytest.mark.parametrize("job_id", JOBS)
def test_damage_anywhere_in_a_capture_never_raises(job_id):
    """Deleting or replacing any one value deep in the data (a capture cut short, a field an older
    release does not send, a reading of the wrong type) leaves figures_of returning a dict."""
    data = _data(job_id)
    paths = [p for p in _paths(data) if p]
    rng = random.Random(job_id)
    for path in rng.sample(paths, min(len(paths), 150)):
        damaged = copy.deepcopy(data)
        parent = damaged
        for step in path[:-1]:
            parent = parent[step]
        replacement = rng.choice([None, "", "x", [], {}, 0, -1.0, True])
        if isinstance(parent, dict) and rng.random() < 0.5:
            del parent[path[-1]]
        else:
            parent[path[-1]] = replacement
        got = figures_of(job_id, damaged)
        assert isinstance(got, dict) and all(math.isfinite(v) for v in got.values()), (path, got)
        # Damage never makes up a figure the job does not declare.
        assert set(got) <= set(FIGURES[job_id].extract.names), (path, got)


def test_the_module_names_its_tolerances():
    """Timings get a tolerance, counts none, and the jobs use both kinds."""
    assert 0 < figures_module.TIMING_TOLERANCE < 1 and figures_module.EXACT == 0
    assert TIMED and EXACT


@pytest.mark.parametrize("error", figures_module._FAILED)
def test_a_figure_that_cannot_be_read_is_left_out_and_the_rest_kept(error, monkeypatch):
    """The guards themselves: a getter that fails drops its own figure, an extractor that fails gives {}."""
    def fails(_):
        raise error("damaged") if error is not StopIteration else error()
    extract = figures_module._each({"kept": lambda d: 2.0, "dropped": fails, "not finite": lambda d: float("nan")})
    assert extract({}) == {"kept": 2.0}
    monkeypatch.setitem(FIGURES, "billing", Figures(fails, 0.0, "exact"))
    assert figures_of("billing", {}) == {}


def test_a_batch_that_did_not_run_loses_only_its_own_figure():
    data = _data("api-server-cpu")
    data["batches"] = [b for b in data["batches"] if b["concurrency"] == 1]
    got = figures_of("api-server-cpu", data)
    assert got and all("at a time" in name for name in got)
    assert len(got) == len(figures_of("api-server-cpu", _data("api-server-cpu"))) - 1
