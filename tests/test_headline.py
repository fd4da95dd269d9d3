"""Headline figures, declared on each job (verify/headline.py) and read from the committed records:
every figure is there and finite, a record compared with itself moves nothing, a real move beyond the
tolerance is reported, and data that cannot give a figure fails loudly, naming the figure.
"""

from __future__ import annotations

import math
import random

import pytest

from tests.flips import copy_of
from verify import headline as headline_module
from verify.evidence.record import Record
from verify.headline import FigureMissing, Headline, moved
from verify.registry import all_jobs

HEADLINES = {j.id: j.headline for j in all_jobs().values() if j.headline}
JOBS = sorted(HEADLINES)
TIMED = [j for j in JOBS if HEADLINES[j].tolerance > 0]
EXACT = [j for j in JOBS if HEADLINES[j].tolerance == 0]


def _moved(job_id, before, after):
    return moved(HEADLINES[job_id], before, after)


def _data(job_id: str) -> dict:
    record = Record.load(job_id, "cpu")
    assert record is not None, f"{job_id} has no committed cpu record"
    return copy_of(record.data)


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


@pytest.mark.parametrize("profile", ["cpu", "cpu-oldest"])
@pytest.mark.parametrize("job_id", JOBS)
def test_every_job_gives_every_figure_from_its_committed_records(job_id, profile):
    record = Record.load(job_id, profile)
    assert record is not None, f"{job_id} has no committed {profile} record"
    found = HEADLINES[job_id].read(record.data)
    assert 2 <= len(found) <= 5
    assert all(isinstance(v, float) and math.isfinite(v) for v in found.values()), found
    assert list(found) == list(HEADLINES[job_id].names)


def test_the_jobs_with_headline_figures():
    """Twenty jobs declare figures; a job that lost its headline in a refactor fails here."""
    assert len(JOBS) == 20, JOBS


def _named_tolerances() -> dict[str, float]:
    """Every tolerance constant a figure may use: the module's own, and the jobs' thresholds it borrows."""
    from verify.jobs.latency import bench_definitions
    from verify.jobs.prefill_decode import bench_agreement
    return {"TIMING_TOLERANCE": headline_module.TIMING_TOLERANCE, "EXACT": headline_module.EXACT,
            "TTFT_AGREEMENT": bench_agreement.TTFT_AGREEMENT,
            "HARNESS_AGREEMENT": bench_definitions.HARNESS_AGREEMENT}


@pytest.mark.parametrize("job_id", JOBS)
def test_each_job_says_why_its_tolerance(job_id):
    """A tolerance is a named constant, and the reason given names it (or says the figures are exact):
    a number typed into one job's entry, or a reason that names another constant, fails here."""
    f = HEADLINES[job_id]
    assert 0 <= f.tolerance < 1
    named = [name for name, value in _named_tolerances().items() if value == f.tolerance]
    assert named, f"{job_id}: tolerance {f.tolerance} is no named constant"
    if f.tolerance == headline_module.EXACT:
        assert "exact" in f.why, f"{job_id}: an exact figure's reason does not say it is exact"
    else:
        assert any(name in f.why for name in named), f"{job_id}: the reason names none of {named}: {f.why!r}"


@pytest.mark.parametrize("job_id", JOBS)
def test_a_record_compared_with_itself_moves_nothing(job_id):
    data = _data(job_id)
    assert _moved(job_id, data, copy_of(data)) == []


@pytest.mark.parametrize("job_id", TIMED)
def test_measurements_scaled_beyond_the_tolerance_are_reported(job_id):
    before = _data(job_id)
    tolerance = HEADLINES[job_id].tolerance
    factor = 1 + 2 * tolerance
    after = _scale_measurements(before, factor)
    moves = _moved(job_id, before, after)
    assert moves, f"{job_id}: nothing moved with every measurement x{factor}"
    assert [m["name"] for m in moves] == sorted(m["name"] for m in moves)
    for m in moves:
        assert set(m) == {"name", "before", "after", "change", "tolerance", "unit"}
        assert abs(m["change"]) > tolerance
        assert m["tolerance"] == tolerance and m["unit"] == HEADLINES[job_id].unit
    # The other way round, the same figures move the other way.
    back = {m["name"]: m["change"] for m in _moved(job_id, after, before)}
    assert set(back) == {m["name"] for m in moves}
    assert all((back[m["name"]] > 0) != (m["change"] > 0) for m in moves)


@pytest.mark.parametrize("job_id", TIMED)
def test_measurements_within_the_tolerance_are_not_reported(job_id):
    before = _data(job_id)
    after = _scale_measurements(before, 1 + HEADLINES[job_id].tolerance / 4)
    assert _moved(job_id, before, after) == []


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
    after = copy_of(before)
    EXACT_EDITS[job_id](after)
    moves = _moved(job_id, before, after)
    assert moves and all(m["tolerance"] == 0 and m["before"] != m["after"] for m in moves)


def test_a_figure_that_was_zero_moves_when_it_is_no_longer_zero():
    h = Headline({"a": lambda d: d["a"], "b": lambda d: d["b"]}, 0.3, "a test")
    assert moved(h, {"a": 0.0, "b": 2.0}, {"a": 1.0, "b": 2.1}) == [
        {"name": "a", "before": 0.0, "after": 1.0, "change": None, "tolerance": 0.3, "unit": ""}]
    assert moved(h, {"a": 0.0, "b": 1.0}, {"a": 0.0, "b": 1.0}) == []


def test_change_is_relative_and_signed():
    h = Headline({n: (lambda d, n=n: d[n]) for n in ("fell", "rose", "same")}, 0.25, "a test", "ms")
    got = moved(h, {"fell": 200.0, "rose": 100.0, "same": 5.0}, {"fell": 100.0, "rose": 130.0, "same": 5.0})
    assert got == [
        {"name": "fell", "before": 200.0, "after": 100.0, "change": -0.5, "tolerance": 0.25, "unit": "ms"},
        {"name": "rose", "before": 100.0, "after": 130.0, "change": 0.3, "tolerance": 0.25, "unit": "ms"}]


@pytest.mark.parametrize("job_id", JOBS)
@pytest.mark.parametrize("failed", [{}, None, [], "error", {"capture": "sse", "error": "ConnectError"}])
def test_data_that_is_no_record_fails_loudly(job_id, failed):
    with pytest.raises(FigureMissing, match="^figure "):
        HEADLINES[job_id].read(failed)


@pytest.mark.parametrize("job_id", JOBS)
def test_data_missing_a_part_names_the_figure_it_cannot_give(job_id):
    """Each part of the data a figure reads, removed or replaced by a failed capture, fails with that
    figure's name; a part no figure reads changes nothing."""
    data = _data(job_id)
    full = HEADLINES[job_id].read(data)
    used = 0
    for key in data:
        for broken in ({k: v for k, v in data.items() if k != key},
                       {**data, key: {"capture": "request", "error": "ReadTimeout"}}, {**data, key: None}):
            try:
                got = HEADLINES[job_id].read(broken)
            except FigureMissing as e:
                used += 1
                assert any(str(e).startswith(f"figure {name!r}") for name in full), e
                continue
            assert got == full, key
    assert used, f"{job_id}: no part of the data is read by any figure"


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
def test_damage_anywhere_gives_every_figure_or_names_a_missing_one(job_id):
    """Deleting or replacing any one value deep in the data (a capture cut short, a field an older
    release does not send, a reading of the wrong type) gives finite figures, all of them, or
    FigureMissing: never another exception, never a made-up or dropped figure."""
    data = _data(job_id)
    paths = [p for p in _paths(data) if p]
    rng = random.Random(job_id)
    names = set(HEADLINES[job_id].names)
    for path in rng.sample(paths, min(len(paths), 150)):
        damaged = copy_of(data)
        parent = damaged
        for step in path[:-1]:
            parent = parent[step]
        replacement = rng.choice([None, "", "x", [], {}, 0, -1.0, True])
        if isinstance(parent, dict) and rng.random() < 0.5:
            del parent[path[-1]]
        else:
            parent[path[-1]] = replacement
        try:
            got = HEADLINES[job_id].read(damaged)
        except FigureMissing:
            continue
        assert set(got) == names and all(math.isfinite(v) for v in got.values()), (path, got)


def test_the_module_names_its_tolerances():
    """Timings get a tolerance, counts none, and the jobs use both kinds."""
    assert 0 < headline_module.TIMING_TOLERANCE < 1 and headline_module.EXACT == 0
    assert TIMED and EXACT


@pytest.mark.parametrize("error", headline_module.FAILED)
def test_a_getter_that_fails_names_its_figure(error):
    def fails(_):
        raise error("damaged") if error is not StopIteration else error()
    h = Headline({"kept": lambda d: 2.0, "broken": fails}, 0.0, "exact")
    with pytest.raises(FigureMissing, match="figure 'broken'"):
        h.read({})
    with pytest.raises(FigureMissing, match="figure 'not finite'"):
        Headline({"not finite": lambda d: float("nan")}, 0.0, "exact").read({})
    with pytest.raises(FigureMissing, match="figure 'a flag'"):
        Headline({"a flag": lambda d: True}, 0.0, "exact").read({})


def test_a_batch_that_did_not_run_names_its_figure():
    data = _data("api-server-cpu")
    data["batches"] = [b for b in data["batches"] if b["concurrency"] == 1]
    with pytest.raises(FigureMissing, match="at once"):
        HEADLINES["api-server-cpu"].read(data)
