"""`verify check`: do the pages say what the evidence says?

Fails, naming the page, line and claim, when a claim's record is missing, stale
(naming the inputs that changed since it was recorded), or decided a different
verdict than the page asserts. Also fails when a job's claim appears on none of
the pages the job lists, so a claim cannot silently drop out of the prose.
"""

from __future__ import annotations

from pathlib import Path

from verify.job import VERDICTS
from verify.config.profiles import Profile
from verify.paths import DOCS
from verify.registry import all_claims, all_jobs
from verify.site import agreement
from verify.site.directives import page_claims


def problems(profile: Profile, docs: Path = DOCS, evidence_root: Path | None = None) -> list[str]:
    agreement.forget()
    found: list[str] = []
    claims = all_claims()
    stated = page_claims(docs)
    for pc in stated:
        where = f"{pc.page}:{pc.line}"
        if pc.claim_id not in claims:
            found.append(f"{where}: claim {pc.claim_id!r} is not defined by any job")
            continue
        if pc.expect not in VERDICTS:
            found.append(f"{where}: claim {pc.claim_id!r} expects {pc.expect!r}; use one of {', '.join(VERDICTS)}")
            continue
        job, _ = claims[pc.claim_id]
        if profile.name not in job.profiles:
            continue
        problem = agreement.claim_state(pc.claim_id, profile.name, evidence_root).problem(pc.expect)
        if problem:
            found.append(f"{where}: {problem}")
    stated_pairs = {(pc.page, pc.claim_id) for pc in stated}
    for job in all_jobs().values():
        for claim in job.claims:
            if not any((page, claim.id) in stated_pairs for page in job.pages):
                found.append(f"{', '.join(job.pages)}: claim {claim.id!r} of job {job.id} is stated on none of its pages")
    return found
