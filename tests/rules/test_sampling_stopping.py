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
def test_the_records_settle_after_five_pairs_with_the_same_verdict(profile):
    full = record(JOB, profile)
    for n in range(1, 5):  # the median of eight is not bounded by fewer than five
        d = record(JOB, profile)
        assert not job.cost_settled(d["constrained"]["samples"][:n], d["unconstrained"]["samples"][:n])["settled"]
    d = record(JOB, profile)
    assert job.cost_settled(d["constrained"]["samples"][:5], d["unconstrained"]["samples"][:5])["settled"]
    # As the job records it then: every constrained sample, five unconstrained.
    cut = _cut(record(JOB, profile), job.SAMPLES, 5)
    v = decide(JOB, "small-cost", cut)
    assert v["verdict"] == decide(JOB, "small-cost", full)["verdict"] == "confirmed"
    assert "5 unconstrained samples of up to 8" in v["because"]
    assert "samples of up to" not in decide(JOB, "small-cost", full)["because"]
    assert decide(JOB, "every-sample-valid", cut)["verdict"] == "confirmed"


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
