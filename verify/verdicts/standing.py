"""A claim's standing on a page: everything its claim box shows, decided in one place.

The claim is found once and each of its records read once: on the page's profile, on every release
of the same set-up (the line across releases and the timeline under it) and on other hardware (such
as t4), shown in full beside the page's own. The site draws a claim box from one `Standing`
(verify/site/html.py, `claim_box`) and decides nothing of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verify.config.profiles import DEFAULT_PROFILE, PROFILES
from verify.job import Claim
from verify.registry import find_claim
from verify.verdicts import releases
from verify.verdicts.agreement import ClaimState, HardwareDifference, job_claim_state


@dataclass(frozen=True)
class Standing:
    claim: Claim
    expect: str  # the verdict the page states
    on_page: ClaimState  # the record of the page's profile, its verdict and staleness
    shown: tuple[ClaimState, ...]  # shown in full: the page's profile first, then other hardware
    problem: str | None  # what is wrong with the page's statement (ClaimState.problem), kind kept
    across: str | None  # where the verdict holds across releases, in one line (releases.since)
    changed_between: bool  # the oldest and the newest release decided it differently (releases.ends_differ)
    timeline: tuple[releases.ReleaseRow, ...]  # every release checked, oldest first (releases.timeline)

    @property
    def other_hardware(self) -> bool:
        """The page's verdict differs only as a timing claim measured on other hardware: a note, not an error."""
        return isinstance(self.problem, HardwareDifference)


def standing(claim_id: str, expect: str, page_profile: str = DEFAULT_PROFILE, root: Path | None = None) -> Standing:
    """How a claim the page states as `expect` stands against its records (root: another evidence folder)."""
    job, claim = find_claim(claim_id)
    same_setup = releases.release_profiles(page_profile)
    by_release = [job_claim_state(job.id, claim_id, p.name, root) for p in same_setup]  # oldest first
    on_page = next(s for s in by_release if s.profile == page_profile)  # a profile is of its own set-up
    # Other hardware is shown in full; the other releases of the same set-up fold under one line.
    other_hardware = [job_claim_state(job.id, claim_id, p, root) for p in job.profiles
                      if p in PROFILES and p not in {s.name for s in same_setup}]
    checked = [p.release for p in same_setup]
    decided = releases.across(by_release)
    return Standing(
        claim=claim, expect=expect, on_page=on_page, shown=(on_page, *other_hardware),
        problem=on_page.problem(expect) if page_profile in job.profiles else None,
        across=releases.since(decided, checked),
        changed_between=releases.ends_differ(decided, checked),
        timeline=tuple(releases.timeline_of(by_release)))
