"""The live sample: its verdicts against the committed records, and what rests on records.

`verify run --sample` measures a few jobs again whatever their freshness; their verdicts must
agree with the committed records, and the run says how many of the site's claims were measured
now and how many rest on committed records.
"""

from __future__ import annotations

from verify.config.profiles import Profile
from verify.evidence import store
from verify.job import Job
from verify.runner.run_log import RunLog
from verify.runner.selection import select_jobs


def what_rests_on_records(profile: Profile, evidence_root, log: RunLog) -> list[str]:
    """How many of the site's claims were measured now on this machine, and how many rest on committed
    records, with those records' dates and hardware."""
    from verify.verdicts.hardware import describe
    written = {job_id for job_id, _, _, outcome, _ in log.jobs if outcome not in ("failed", "not run")}
    remeasured, sampled = written - log.sample, written & log.sample
    jobs = select_jobs(None, profile)
    count = {j.id: len(j.claims) for j in jobs}
    resting: dict[str, list] = {}
    for job in jobs:
        if job.id in remeasured or job.id in sampled:
            continue
        record = store.load(job.id, profile.name, evidence_root)
        if record:
            hw = describe(record["provenance"].get("hardware", {}))
            resting.setdefault(hw, []).append((record["provenance"]["date"][:10], count[job.id]))
    total = sum(count.values())
    now = sum(count[j] for j in remeasured | sampled)
    lines = [f"claims on the site ({profile.name}): {total}",
             f"  measured now on this machine: {now}: {sum(count[j] for j in remeasured)} in {len(remeasured)} "
             f"job(s) whose inputs changed (their records written to the evidence), "
             f"{sum(count[j] for j in sampled)} in the {len(sampled)} job(s) of the live sample (compared with "
             "their committed records)"]
    rest = sum(n for rows in resting.values() for _, n in rows)
    lines.append(f"  resting on committed records: {rest}" + ("" if rest else " (none)"))
    for hw, rows in sorted(resting.items(), key=lambda kv: -sum(n for _, n in kv[1])):
        dates = sorted(d for d, _ in rows)
        span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
        lines.append(f"    {sum(n for _, n in rows)} claim(s) of {len(rows)} job(s), measured {span} on {hw}")
    return lines


def sample_disagreements(sampled: list[Job], profile: Profile, evidence_root, sample_root, log: RunLog,
                         progress) -> list[str]:
    """Each sampled claim whose verdict now differs from its committed record's, unless it is a timing
    verdict measured on other hardware than that record (reported as a note)."""
    from verify.verdicts.hardware import same
    from verify.config.timing import timing_claims
    failed = {f.split(":")[0] for f in log.failures}
    out, agreeing = [], 0
    for job in sampled:
        if job.id in failed:
            continue
        committed, now = store.load(job.id, profile.name, evidence_root), store.load(job.id, profile.name, sample_root)
        if not committed or not now:
            out.append(f"{job.id}: no committed record to compare with")
            continue
        other_hw = not same(now["provenance"].get("hardware", {}), committed["provenance"].get("hardware", {}))
        for cid, verdict in now["claims"].items():
            before = committed["claims"].get(cid, {}).get("verdict")
            if before == verdict["verdict"]:
                agreeing += 1
            elif cid in timing_claims(job) and other_hw:
                progress(f"note: {cid} is a timing claim: {before} in the committed record, {verdict['verdict']} "
                         "measured now on other hardware")
            else:
                out.append(f"{cid}: committed {before}, measured now {verdict['verdict']}")
    progress(f"live sample: {agreeing} claim(s) of {len(sampled)} job(s) measured now agree with their committed "
             f"records; {len(out)} disagree (this run's records are in {sample_root})")
    return out
