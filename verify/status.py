"""Every claim's verdict per profile, its age and whether it is stale: the status page and `verify status`."""

from __future__ import annotations

from pathlib import Path

from verify import evidence, freeze
from verify.profiles import PROFILES
from verify.registry import all_jobs


def status_rows(evidence_root: Path | None = None) -> list[dict]:
    from verify.pages import page_claims
    stated_on: dict[str, list[str]] = {}
    for pc in page_claims():
        stated_on.setdefault(pc.claim_id, []).append(pc.page)
    rows = []
    for job in all_jobs().values():
        records = {p: evidence.load(job.id, p, evidence_root) for p in job.profiles if p in PROFILES}
        hashes = {p: freeze.input_hash(job, PROFILES[p]) for p in records}
        for claim in job.claims:
            per_profile = {}
            for prof, rec in records.items():
                if rec is None:
                    per_profile[prof] = {"verdict": "missing", "stale": False, "date": None}
                    continue
                got = rec["claims"].get(claim.id, {"verdict": "missing", "because": ""})
                per_profile[prof] = {"verdict": got["verdict"], "because": got.get("because", ""),
                                     "stale": rec.get("inputs_hash") != hashes[prof],
                                     "date": rec["provenance"]["date"],
                                     "server_version": rec["provenance"]["server"].get("version"),
                                     "evidence": f"evidence/{job.id}/{prof}.json"}
            rows.append({"job": job.id, "claim": claim.id, "text": claim.text, "anchor": claim.anchor,
                         "pages": sorted(set(stated_on.get(claim.id, []))), "profiles": per_profile})
    return rows
