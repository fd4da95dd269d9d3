"""`verify check`: do the pages say what the evidence says?

Fails, naming the page, line and claim, when a claim's record is missing, stale
(naming the inputs that changed since it was recorded), or decided a different
verdict than the page asserts. Also fails when a job's claim appears on none of
the pages the job lists, so a claim cannot silently drop out of the prose, and when a claim
whose verdict differs between vLLM releases stands under a paragraph that names no release
(verify/verdicts/release_prose.py).
A timing claim decided otherwise on other hardware than its committed record's is
returned as a HardwareDifference, which the command reports without failing.
"""

from __future__ import annotations

import os
from pathlib import Path

from verify.job import VERDICTS
from verify.config.profiles import DEFAULT_PROFILE, Profile, runs_on
from verify.paths import DOCS
from verify.registry import all_claims, all_jobs
from verify.verdicts import agreement, release_prose, symptoms
from verify.verdicts.directives import page_claims


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
        if not runs_on(job.profiles, profile.name):
            continue
        state = agreement.claim_state(pc.claim_id, profile.name, evidence_root)
        if state.record is None and profile.name not in job.profiles:
            continue  # a release between runs only the jobs a bisection needed (verify releases)
        problem = state.problem(pc.expect)
        if problem:
            found.append(type(problem)(f"{where}: {problem}"))  # keeps the kind (a hardware difference stays one)
    stated_pairs = {(pc.page, pc.claim_id) for pc in stated}
    for job in all_jobs().values():
        for claim in job.claims:
            if not any((page, claim.id) in stated_pairs for page in job.pages):
                found.append(f"{', '.join(job.pages)}: claim {claim.id!r} of job {job.id} is stated on none of its pages")
    found += release_prose.problems(docs)
    if profile.name == DEFAULT_PROFILE and docs == DOCS:
        found += symptoms.problems(articles_checked=True)  # the index leans on the site's own profile
    return found


def write_job_summary(hardware: list[str]) -> None:
    """On GitHub Actions, the timing verdicts that differ on this runner's hardware, in the job summary."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary or not hardware:
        return
    with open(summary, "a", encoding="utf-8") as f:
        f.write("### Timing verdicts that differ on this hardware\n\n"
                "Reported, not failed: each is a timing claim measured on other hardware than the pages'.\n\n"
                + "".join(f"- {p}\n" for p in hardware) + "\n")
