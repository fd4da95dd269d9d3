"""All jobs, found by module: every verify/jobs/<article>/*.py that defines JOB.

Adding a file there adds a job everywhere: `verify list`, the CI matrix, the
status page. A job's id must match its module name (hyphens for underscores)
and be unique across articles; modules starting with an underscore are shared
builders, not jobs.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from verify.errors import VerifyError
from verify.job import OFFLINE, SERVER, Claim, Job
from verify.paths import JOBS


@lru_cache(maxsize=1)
def all_jobs() -> dict[str, Job]:
    from verify.config.profiles import get_variant
    jobs: dict[str, Job] = {}
    for path in sorted(JOBS.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        module = importlib.import_module(f"verify.jobs.{path.parent.name}.{path.stem}")
        job = getattr(module, "JOB", None)
        if not isinstance(job, Job):
            continue
        expected_id = path.stem.replace("_", "-")
        if job.id != expected_id:
            raise VerifyError(f"job in {path.relative_to(JOBS)} is named {job.id!r}; it must be {expected_id!r}")
        if job.id in jobs:
            raise VerifyError(f"job id {job.id!r} is defined twice ({jobs[job.id].module_file} and {path})")
        if job.engine not in (SERVER, OFFLINE):
            raise VerifyError(f"job {job.id}: engine must be {SERVER!r} or {OFFLINE!r}")
        get_variant(job.variant)
        for claim in job.claims:
            if claim.id != job.id and not claim.id.startswith(job.id + "."):
                raise VerifyError(f"claim {claim.id!r} of job {job.id!r} must be named {job.id}.<name>")
        object.__setattr__(job, "module_file", str(path))
        jobs[job.id] = job
    return jobs


def get_job(job_id: str) -> Job:
    jobs = all_jobs()
    if job_id not in jobs:
        raise VerifyError(f"unknown job {job_id!r} (see: verify list)")
    return jobs[job_id]


def all_claims() -> dict[str, tuple[Job, Claim]]:
    return {c.id: (job, c) for job in all_jobs().values() for c in job.claims}


def find_claim(claim_id: str) -> tuple[Job, Claim]:
    claims = all_claims()
    if claim_id not in claims:
        raise VerifyError(f"unknown claim {claim_id!r}")
    return claims[claim_id]
