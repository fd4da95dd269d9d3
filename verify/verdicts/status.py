"""Every claim's verdict per profile, its age and which inputs made it stale: the status page and `verify status`."""

from __future__ import annotations

from pathlib import Path

from verify.config.profiles import PROFILES
from verify.registry import all_jobs
from verify.verdicts import agreement


def status_rows(evidence_root: Path | None = None) -> list[dict]:
    from verify.verdicts.directives import page_claims
    agreement.forget()
    stated_on: dict[str, list[str]] = {}
    expected: dict[str, str] = {}
    for pc in page_claims():
        stated_on.setdefault(pc.claim_id, []).append(pc.page)
        expected[pc.claim_id] = pc.expect
    rows = []
    for job in all_jobs().values():
        for claim in job.claims:
            per_profile = {}
            for prof in (p for p in job.profiles if p in PROFILES):
                s = agreement.claim_state(claim.id, prof, evidence_root)
                if s.record is None:
                    per_profile[prof] = {"verdict": "missing", "stale": False, "changed": [], "date": None}
                    continue
                per_profile[prof] = {"verdict": s.verdict, "because": s.because, "stale": s.stale,
                                     "changed": list(s.changed), "date": s.record.date,
                                     "server_version": s.record.engine_version,
                                     "other_hardware": s.other_hardware is not None,
                                     "evidence": s.record.evidence_url()}
            rows.append({"job": job.id, "article": job.article, "runs_on": job.runs_on, "claim": claim.id,
                         "expect": expected.get(claim.id),
                         "text": claim.text, "anchor": claim.anchor,
                         "pages": sorted(set(stated_on.get(claim.id, []))), "profiles": per_profile})
    return rows
