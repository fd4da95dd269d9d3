"""structured-output: the unconstrained samples stop once the rest could not move the cost verdict.

Replays the committed records (captured from a live vLLM server), cut back to fewer samples or edited.
"""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, decide, record
from verify.jobs.sampling import structured_output as job

JOB = "structured-output"


def _cut(d: dict, constrained: int, unconstrained: int) -> dict:
    d["constrained"]["samples"] = d["constrained"]["samples"][:constrained]
    d["unconstrained"]["samples"] = d["unconstrained"]["samples"][:unconstrained]
    return d


@pytest.mark.parametrize("profile", PROFILES)
def test_the_records_settle_at_their_samples_with_the_same_verdict(profile):
    full = record(JOB, profile)
    cs, us = full["constrained"]["samples"], full["unconstrained"]["samples"]
    n = len(us)  # the unconstrained samples taken: fewer than SAMPLES once the rest could not change the verdict
    v = decide(JOB, "small-cost", full)
    assert v["verdict"] == "confirmed" and len(cs) == job.SAMPLES
    assert ("samples of up to" in v["because"]) == (n < job.SAMPLES), v
    assert decide(JOB, "every-sample-valid", full)["verdict"] == "confirmed"
    for k in range(1, 5):  # the median of eight is not bounded by fewer than five
        assert not job.cost_settled(cs[:k], us[:k])["settled"]
    # As collect() checks it after each pair: settled at the pairs the record stopped at (or all were taken),
    # and not before where collect() wrote the record.
    if "stopped" in full:
        assert {k: full["stopped"][k] for k in ("settled", "why")} == job.cost_settled(cs[:n], us[:n])
        assert full["stopped"]["unconstrained"] == n
        for k in range(5, n):
            assert not job.cost_settled(cs[:k], us[:k])["settled"], k
    assert job.cost_settled(cs[:n], us[:n])["settled"] or n == job.SAMPLES
    # As the job records it then: every constrained sample, k unconstrained. Where the k settle the ratio,
    # the verdict is the full record's; where they do not, inconclusive.
    for k in range(5, n + 1):
        cut = _cut(record(JOB, profile), job.SAMPLES, k)
        v = decide(JOB, "small-cost", cut)
        if not job.cost_settled(cut["constrained"]["samples"], cut["unconstrained"]["samples"])["settled"]:
            assert v["verdict"] == "inconclusive" and f"{k} unconstrained samples of up to 8" in v["because"], v
            continue
        assert v["verdict"] == "confirmed", (k, v)
        assert (f"{k} unconstrained samples of up to 8" in v["because"]) == (k < job.SAMPLES), v
        assert decide(JOB, "every-sample-valid", cut)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
def test_five_pairs_that_agree_settle_a_confirmation(profile):
    # Five pairs, each sample timed at its side's recorded median time per token: the three pairs to come
    # could move neither median far enough to cross the factor.
    d = _cut(record(JOB, profile), 5, 5)
    for side in ("constrained", "unconstrained"):
        per_token = job._per_token(record(JOB, profile)[side]["samples"])
        for s in d[side]["samples"]:
            s["seconds"] = s["tokens"] * per_token
    stop = job.cost_settled(d["constrained"]["samples"], d["unconstrained"]["samples"])
    assert stop["settled"] and stop["why"].endswith("within 1.5x whatever the rest measure"), stop
    v = decide(JOB, "small-cost", d)
    assert v["verdict"] == "confirmed" and "5 constrained and 5 unconstrained samples of up to 8" in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
def test_too_few_unconstrained_samples_are_inconclusive(profile):
    for n in (1, 4):
        v = decide(JOB, "small-cost", _cut(record(JOB, profile), job.SAMPLES, n))
        assert v["verdict"] == "inconclusive" and f"{n} unconstrained samples of up to" in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
def test_a_cost_near_the_factor_stays_open_and_a_far_one_settles_a_refutation(profile):
    d = _cut(record(JOB, profile), job.SAMPLES, 5)
    u = sorted(s["seconds"] / s["tokens"] for s in d["unconstrained"]["samples"])
    # Constrained answers at 1.5x the middle unconstrained time per token: the three missing samples decide.
    for s in d["constrained"]["samples"]:
        s["seconds"] = s["tokens"] * u[2] * job.COST_FACTOR
    assert decide(JOB, "small-cost", d)["verdict"] == "inconclusive"
    # Four times slower: over the factor whatever the missing samples measure.
    for s in d["constrained"]["samples"]:
        s["seconds"] = s["tokens"] * u[-1] * 4
    assert job.cost_settled(d["constrained"]["samples"], d["unconstrained"]["samples"])["why"].endswith(
        "over 1.5x whatever the rest measure")
    assert decide(JOB, "small-cost", d)["verdict"] == "refuted"
