"""Which jobs a run takes: the jobs that run on the profile, and whether a job's record is fresh."""

from __future__ import annotations

from pathlib import Path

from verify.config.profiles import Profile, runs_on
from verify.evidence.record import Record
from verify.job import Job
from verify.registry import all_jobs, get_job


def select_jobs(ids: list[str] | None, profile: Profile) -> list[Job]:
    jobs = [get_job(i) for i in ids] if ids else list(all_jobs().values())
    return [j for j in jobs if runs_on(j.profiles, profile.name)]


def is_fresh(job: Job, profile: Profile, root: Path | None = None) -> bool:
    record = Record.load(job.id, profile.name, root)
    return bool(record) and record.is_fresh(job, profile)
