"""Claims and figures across vLLM releases: the same hardware and model, one profile per release.

Profiles that differ only in their release (`cpu` and `cpu-oldest`) answer
"since which version?": a claim box lists the verdict on each release, and the
page "What changed between releases" lists every claim whose verdict differs
and every headline figure (declared on its job, verify/headline.py) that moved beyond its
job's tolerance, with links to both records. Profiles on other hardware (t4)
are not compared here: a difference there says nothing about the release.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from verify import headline
from verify.captures import failed_captures
from verify.evidence.record import Record
from verify.config.profiles import DEFAULT_PROFILE, PROFILES, Profile
from verify.registry import all_jobs
from verify.site import agreement


def release_profiles(profile: str = DEFAULT_PROFILE) -> list[Profile]:
    """Profiles with the same hardware, model and flags as `profile`, oldest release first."""
    base = PROFILES[profile]
    same = [p for p in PROFILES.values()
            if (p.hardware, p.model_source, p.flags, p.distribution) ==
               (base.hardware, base.model_source, base.flags, base.distribution)]
    return sorted(same, key=lambda p: Version(p.release))


@dataclass(frozen=True)
class ReleaseVerdict:
    release: str
    profile: str
    verdict: str
    because: str
    record: Record


def verdicts_across(claim_id: str) -> list[ReleaseVerdict]:
    """The claim's verdict on every release that has a fresh record for it, oldest first."""
    out = []
    for p in release_profiles():
        s = agreement.claim_state(claim_id, p.name)
        if s.record is not None and not s.stale:
            out.append(ReleaseVerdict(p.release, p.name, s.verdict, s.because, s.record))
    return out


def since(rvs: list[ReleaseVerdict]) -> str | None:
    """One line: the verdict on every release, or since which release it holds. None for a single release."""
    if len(rvs) < 2:
        return None
    newest = rvs[-1].verdict
    if all(r.verdict == newest for r in rvs):
        return f"{newest} on every release checked ({', '.join(r.release for r in rvs)})"
    first = len(rvs) - 1
    while first > 0 and rvs[first - 1].verdict == newest:
        first -= 1
    before = "; ".join(f"{r.verdict} on {r.release}" for r in rvs[:first])
    return f"{newest} since {rvs[first].release} ({before})"


@dataclass(frozen=True)
class Change:
    job_id: str
    older: Record
    newer: Record
    claim_id: str = ""
    claim_text: str = ""
    figure: dict | None = None  # headline.moved() entry

    @property
    def same_machine(self) -> bool:
        """Timings compare across releases only if both records ran on the same kind of CPU."""
        cpu = lambda r: r.provenance.get("hardware", {}).get("cpu")  # noqa: E731
        return cpu(self.older) == cpu(self.newer)


def changes(older: str, newer: str = DEFAULT_PROFILE) -> tuple[list[Change], list[Change], int]:
    """Claims whose verdict differs between the two profiles' fresh records, figures that moved,
    and how many jobs have fresh records on both (the others are not compared)."""
    verdicts, moved, compared = [], [], 0
    for job in all_jobs().values():
        a = agreement.claim_state(job.claims[0].id, older)
        b = agreement.claim_state(job.claims[0].id, newer)
        if a.record is None or b.record is None or a.stale or b.stale:
            continue
        compared += 1
        for claim in job.claims:
            if a.record.verdict(claim.id)["verdict"] != b.record.verdict(claim.id)["verdict"]:
                verdicts.append(Change(job.id, a.record, b.record, claim.id, claim.text))
        # A record whose capture failed has no figures to compare; any other must give them all.
        if job.headline and not failed_captures(a.record.data) and not failed_captures(b.record.data):
            for entry in headline.moved(job.headline, a.record.data, b.record.data):
                moved.append(Change(job.id, a.record, b.record, figure=entry))
    return verdicts, moved, compared


def tolerances() -> list[list[str]]:
    """One row per job with headline figures: its tolerance, why, and the figures (names from its record)."""
    rows = []
    for job in sorted(all_jobs().values(), key=lambda j: j.id):
        if job.headline:
            f = job.headline
            rows.append([job.id, f"{f.tolerance * 100:.0f} %", f.why, "; ".join(sorted(f.names))])
    return rows
