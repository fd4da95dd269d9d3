"""Does the evidence say what a page says? One answer, used by `verify check`, the status page and the build.

For a claim on a profile: the record that settles it, the verdict it holds, the
inputs that changed since it was recorded, and, when the page asserts a
verdict, whether they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from verify.evidence.record import Record
from verify.config.profiles import get_profile
from verify.registry import find_claim


class Contradiction(str):
    """A problem that is not about freshness: the page asserts a verdict its evidence does not hold.
    Every build fails on it, whatever its flags; stale or missing evidence only warns."""


class HardwareDifference(str):
    """A timing claim decided otherwise on other hardware than its committed record's: reported
    (verify check's notes, the job summary, the claim box), never failed, never a contradiction."""


@dataclass(frozen=True)
class ClaimState:
    claim_id: str
    job_id: str
    profile: str
    record: Record | None
    verdict: str  # confirmed / refuted / inconclusive / missing
    because: str
    changed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def stale(self) -> bool:
        return bool(self.changed)

    @property
    def other_hardware(self) -> dict | None:
        """For a timing claim whose record came from other hardware than the committed record the page
        was checked against: that committed record's hardware. None otherwise."""
        if self.record is None:
            return None
        from verify.registry import get_job
        from verify.config.timing import timing_claims
        from verify.verdicts import hardware
        if self.claim_id not in timing_claims(get_job(self.job_id)):
            return None
        return hardware.other_than_committed(self.record.provenance.get("hardware", {}), self.job_id, self.profile)

    def problem(self, expect: str | None) -> str | None:
        """What is wrong for a page that asserts `expect`, or None when page and fresh evidence agree."""
        if self.record is None:
            return f"claim {self.claim_id!r} has no {self.profile} evidence (run: verify run {self.job_id})"
        if self.stale:
            return (f"claim {self.claim_id!r}: the {self.profile} evidence of job {self.job_id} is stale; changed: "
                    f"{', '.join(self.changed)} (run: verify run {self.job_id})")
        if expect is not None and self.verdict != expect and self.other_hardware:
            from verify.verdicts.hardware import describe
            return HardwareDifference(
                f"claim {self.claim_id!r} is a timing claim: the page says {expect}, the {self.profile} evidence "
                f"measured on {describe(self.record.provenance.get('hardware', {}))} says {self.verdict}; the "
                f"committed record the page was checked against came from {describe(self.other_hardware)}: "
                f"a hardware difference, not a contradicted sentence")
        if expect is not None and self.verdict != expect:
            from verify.config.profiles import DEFAULT_PROFILE
            fix = ("correct the prose" if self.profile == DEFAULT_PROFILE else
                   f"the pages describe the {DEFAULT_PROFILE} profile; say if this release differs")
            return Contradiction(f"page says claim {self.claim_id!r} is {expect}, but the {self.profile} evidence "
                                 f"says {self.verdict}: {self.because} -- {fix}")
        return None


@lru_cache(maxsize=None)
def _record(job_id: str, profile: str, root: Path | None) -> Record | None:
    return Record.load(job_id, profile, root)


@lru_cache(maxsize=None)
def _changed(job_id: str, profile: str, root: Path | None) -> tuple[str, ...]:
    from verify.registry import get_job
    rec = _record(job_id, profile, root)
    return tuple(rec.changed_inputs(get_job(job_id), get_profile(profile))) if rec else ()


def claim_state(claim_id: str, profile: str, root: Path | None = None) -> ClaimState:
    job, _ = find_claim(claim_id)
    return job_claim_state(job.id, claim_id, profile, root)


def job_claim_state(job_id: str, claim_id: str, profile: str, root: Path | None = None) -> ClaimState:
    """claim_state for a claim whose job is already found: one look-up for a claim read on many profiles."""
    rec = _record(job_id, profile, root)
    if rec is None:
        return ClaimState(claim_id, job_id, profile, None, "missing", "no evidence recorded yet")
    got = rec.verdict(claim_id)
    return ClaimState(claim_id, job_id, profile, rec, got["verdict"], got.get("because", ""),
                      _changed(job_id, profile, root))


def forget() -> None:
    """Drop what was read, after records or inputs changed in this process."""
    _record.cache_clear()
    _changed.cache_clear()
