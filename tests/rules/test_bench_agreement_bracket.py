"""bench-agreement: the harness brackets the benchmark's run, and its median over both sides is what is compared.

Replays the committed records (captured from a live vLLM server), edited: harness requests dropped from one side
(a capture that did not bracket the run), the benchmark's result lost, or the harness's figures moved on one side.
"""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, decide, record
from verify.jobs.prefill_decode import bench_agreement as job

JOB = "bench-agreement"


def _set(d: dict, key: str, side: str, factor: float) -> None:
    """The harness's requests on one side measure `key` at this multiple of the benchmark's median."""
    ref = d["bench"]["result"][f"median_{key}_ms"] / 1000
    for r in d["harness"]:
        if r["side"] == side:
            r[key] = ref * factor


@pytest.mark.parametrize("profile", PROFILES)
def test_the_records_bracket_the_run_and_agree(profile):
    d = record(JOB, profile)
    assert [r["side"] for r in d["harness"]] == ["before"] * job.HARNESS_EACH_SIDE + ["after"] * job.HARNESS_EACH_SIDE
    assert job.bracket_gap(d) is None
    for claim in ("ttft-agrees", "itl-agrees", "same-seed-is-cached"):
        assert decide(JOB, claim, d)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("side", ["before", "after"])
def test_a_side_missing_is_inconclusive(profile, side):
    """Damage: the requests on one side lost (or one of them), so the harness no longer brackets the run."""
    d = record(JOB, profile)
    d["harness"] = [r for r in d["harness"] if r["side"] != side]
    for claim in ("ttft-agrees", "itl-agrees"):
        v = decide(JOB, claim, d)
        assert v["verdict"] == "inconclusive" and f"0 {side} it" in v["because"], v
    d = record(JOB, profile)
    d["harness"].remove(next(r for r in d["harness"] if r["side"] == side))
    assert decide(JOB, "itl-agrees", d)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_no_benchmark_result_is_inconclusive(profile):
    d = record(JOB, profile)
    d["bench"]["result"] = None
    for claim in ("ttft-agrees", "itl-agrees"):
        v = decide(JOB, claim, d)
        assert v["verdict"] == "inconclusive" and "saved no result" in v["because"], v


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("key, claim", [("ttft", "ttft-agrees"), ("itl", "itl-agrees")])
def test_both_sides_count(profile, key, claim):
    """Data: one side far off and the other on the benchmark's figure leaves the median of six halfway; far
    enough off on both sides, or on one side by twice the tolerance and more, refutes."""
    tol = job.TOLERANCES[key]
    d = record(JOB, profile)
    _set(d, key, "before", 1.0)
    _set(d, key, "after", 1 + 1.6 * tol)  # the median of six: 1 + 0.8 * tol
    assert decide(JOB, claim, d)["verdict"] == "confirmed"
    _set(d, key, "before", 1 + 1.6 * tol)
    assert decide(JOB, claim, d)["verdict"] == "refuted"
    _set(d, key, "before", 1.0)
    _set(d, key, "after", 1 + 2.4 * tol)  # the median of six: 1 + 1.2 * tol
    assert decide(JOB, claim, d)["verdict"] == "refuted"
    _set(d, key, "after", 1 - 2.4 * tol)
    assert decide(JOB, claim, d)["verdict"] == "refuted"
