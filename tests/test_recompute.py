"""Every committed record's verdicts, and the reasons given with them, follow from its recorded data.

Each record was captured from a real vLLM server by `verify run`; replaying its data through the
job's rules today must give exactly the verdicts and explanations it holds, on every profile that
has records. A rule changed since (a threshold, a comparison, the wording of its reason) fails here
until the record is made again.
"""

from __future__ import annotations

import pytest

from verify.evidence import store
from verify.config.profiles import PROFILES
from verify.registry import all_jobs

RECORDED = [(job_id, profile) for job_id in sorted(all_jobs()) for profile in sorted(PROFILES)
            if store.record_path(job_id, profile).is_file()]


def test_the_default_profile_has_a_record_of_every_job():
    assert {job_id for job_id, profile in RECORDED if profile == "cpu"} == set(all_jobs())


@pytest.mark.parametrize("job_id, profile", RECORDED, ids=[f"{j}@{p}" for j, p in RECORDED])
def test_committed_verdicts_are_recomputed_from_the_recorded_data(job_id, profile):
    record = store.load(job_id, profile)
    assert all_jobs()[job_id].decide(record["data"]) == record["claims"]
