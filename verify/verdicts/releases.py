"""Claims and figures across vLLM releases: the same hardware and model, one profile per release.

Profiles that differ only in their release (`cpu`, `cpu-oldest` and every `cpu-<release>`
between, verify/config/profiles.py) answer "since which version?". Every job runs on the oldest
and the newest; `verify releases` (verify/runner/bisect.py) runs the jobs of a claim that
differs on the releases between, by bisection, until the release where it changed is found.
A claim box says in one line where its verdict holds ("confirmed since 0.29.0 (refuted on
0.27.0-0.28.0)"; "changed between X and Y" where a release in between gave nothing to decide
on), with every release's verdict one click away; the page "What changed between releases"
lists every claim whose verdict differs and every headline figure (declared on its job,
verify/headline.py) that moved beyond its job's tolerance, with a timeline of each changed
claim over every release and links to each record. A range names the releases measured at its
ends; a release inside a range that was not measured is inferred by the bisection (one
change between the ends, as `git bisect` assumes), and the per-release list says so.
Profiles on other hardware (t4) are not compared here: a difference there says nothing about
the release.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from verify import headline
from verify.captures import failed_captures
from verify.job import INCONCLUSIVE
from verify.evidence.record import Record
from verify.config.profiles import DEFAULT_PROFILE, PROFILES, Profile
from verify.registry import all_jobs
from verify.verdicts import agreement, hardware


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


def verdicts_across(claim_id: str, decisive: bool = True) -> list[ReleaseVerdict]:
    """The claim's verdict on every release that has a fresh record for it, oldest first.

    decisive: leave out inconclusive verdicts (a failed capture says nothing about the release;
    the bisection does not decide on one either); the per-release rows show them."""
    return across(release_states(claim_id), decisive)


def release_states(claim_id: str) -> list[agreement.ClaimState]:
    """The claim's state on every release of the default profile's set-up, oldest first."""
    return [agreement.claim_state(claim_id, p.name) for p in release_profiles()]


def across(states: list[agreement.ClaimState], decisive: bool = True) -> list[ReleaseVerdict]:
    """verdicts_across from states already read, one per release profile, oldest first."""
    out = []
    for s in states:
        if s.record is not None and not s.stale and not (decisive and s.verdict == INCONCLUSIVE):
            out.append(ReleaseVerdict(PROFILES[s.profile].release, s.profile, s.verdict, s.because, s.record))
    return out


def ends_differ(rvs: list[ReleaseVerdict], releases: list[str] | None = None) -> bool:
    """Whether the oldest and the newest release checked both decided the claim, differently: what the
    releases page lists and `verify releases` bisects."""
    releases = releases or releases_checked()
    by = {r.release: r.verdict for r in rvs}
    return releases[0] in by and releases[-1] in by and by[releases[0]] != by[releases[-1]]


def releases_checked() -> list[str]:
    """Every release of the default profile's set-up, oldest first (measured or not)."""
    return [p.release for p in release_profiles()]


def _span(a: str, b: str) -> str:
    return a if a == b else f"{a}-{b}"


def _runs(rvs: list[ReleaseVerdict]) -> list[tuple[str, str, str]]:
    """Consecutive measured releases with one verdict: (verdict, first release, last release)."""
    out: list[list[str]] = []
    for r in rvs:
        if out and out[-1][0] == r.verdict:
            out[-1][2] = r.release
        else:
            out.append([r.verdict, r.release, r.release])
    return [tuple(x) for x in out]


def since(rvs: list[ReleaseVerdict], releases: list[str] | None = None) -> str | None:
    """One line: where the verdict holds across releases. None for a single release measured.

    "confirmed on every release checked (0.27.0-0.32.0)" when each was measured;
    "confirmed on 0.27.0-0.32.0 (2 of 7 releases measured)" when only some were (the ends agree,
    so nothing between needed a run); "confirmed since 0.29.0 (refuted on 0.27.0-0.28.0)" when
    the change was placed at one release; "... changed between 0.28.0 and 0.31.0" when releases
    between the last old and the first new answer gave nothing to decide on.
    """
    if len(rvs) < 2:
        return None
    releases = releases or releases_checked()
    runs = _runs(rvs)
    newest = runs[-1]
    if len(runs) == 1:
        if len(rvs) == len(releases):
            return f"{newest[0]} on every release checked ({_span(releases[0], releases[-1])})"
        # The releases between agree by bisection (they were not run because the ends agree).
        return f"{newest[0]} on {_span(rvs[0].release, rvs[-1].release)} ({len(rvs)} of {len(releases)} releases measured)"
    before = "; ".join(f"{v} on {_span(a, b)}" for v, a, b in runs[:-1])
    last_old = runs[-2][2]
    adjacent = releases.index(newest[1]) - releases.index(last_old) == 1
    if adjacent:
        return f"{newest[0]} since {newest[1]} ({before})"
    return f"{newest[0]} on {_span(newest[1], newest[2])} ({before}): changed between {last_old} and {newest[1]}"


@dataclass(frozen=True)
class ReleaseRow:
    """One release in a claim's timeline: its verdict where measured, else why it is not."""
    release: str
    profile: str
    measured: ReleaseVerdict | None
    inferred: str  # for a release not measured: why, and what the bisection infers
    guess: str = ""  # the verdict the bisection infers for it, where the releases around it agree


def timeline(claim_id: str) -> list[ReleaseRow]:
    """The claim on every release checked, oldest first: measured (an inconclusive verdict included),
    inferred between two measured releases that agree, or unknown between two that differ."""
    return timeline_of(release_states(claim_id))


def timeline_of(states: list[agreement.ClaimState]) -> list[ReleaseRow]:
    """timeline from states already read, one per release profile, oldest first."""
    decided = {r.release: r for r in across(states)}
    shown = {r.release: r for r in across(states, decisive=False)}
    rows = []
    profiles = [PROFILES[s.profile] for s in states]
    measured = [p.release for p in profiles if p.release in decided]
    for p in profiles:
        if p.release in shown:
            rows.append(ReleaseRow(p.release, p.name, shown[p.release], ""))
            continue
        older = [r for r in measured if Version(r) < Version(p.release)]
        newer = [r for r in measured if Version(r) > Version(p.release)]
        guess = ""
        if not older or not newer:
            why = "not measured"
        elif decided[older[-1]].verdict == decided[newer[0]].verdict:
            guess = decided[older[-1]].verdict
            why = (f"not measured; inferred {guess}: the releases measured on either side ({older[-1]} and "
                   f"{newer[0]}) agree, and one change at most is assumed between them")
        else:
            why = f"not measured: the change lies between {older[-1]} and {newer[0]}"
        rows.append(ReleaseRow(p.release, p.name, None, why, guess))
    return rows


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
        """Timings compare across releases only if both records ran on the same hardware: the same
        fingerprint (CPU model, cores, vector extensions) where both have one, else CPU model and cores."""
        return hardware.same(self.older.provenance.get("hardware", {}), self.newer.provenance.get("hardware", {}))

    @property
    def machine_note(self) -> str:
        """Whether a timing compares like with like: the same fingerprint, only the same CPU model and
        cores (a record made before records carried the CPU's flags), or different hardware."""
        a, b = (r.provenance.get("hardware", {}) for r in (self.older, self.newer))
        if not self.same_machine:
            return f"different hardware: {hardware.describe(a)} (older) / {hardware.describe(b)} (newer)"
        if a.get("fingerprint") and b.get("fingerprint"):
            return f"same hardware: {a['fingerprint']}"
        return f"same CPU model and cores ({hardware.describe(a)}); its flags are not on both records"


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


def figure_timelines(moved: list[Change]) -> list[tuple[str, str, list[tuple[str, float | None, Record | None]]]]:
    """Each exact figure that moved (a count, size or limit: tolerance 0), on every release measured.
    Timings are left out: one run per release does not tell a release from drift."""
    out = []
    for c in moved:
        job = all_jobs()[c.job_id]
        if job.headline.tolerance != headline.EXACT:
            continue
        values = []
        for p in release_profiles():
            s = agreement.claim_state(job.claims[0].id, p.name)
            try:
                value = None if s.record is None or s.stale or failed_captures(s.record.data) else \
                    job.headline.read(s.record.data)[c.figure["name"]]
            except headline.FigureMissing:
                value = None
            values.append((p.release, value, s.record if value is not None else None))
        out.append((c.job_id, c.figure["name"], values))
    return out


def tolerances() -> list[list[str]]:
    """One row per job with headline figures: its tolerance, why, and the figures (names from its record)."""
    rows = []
    for job in sorted(all_jobs().values(), key=lambda j: j.id):
        if job.headline:
            f = job.headline
            rows.append([job.id, f"{f.tolerance * 100:.0f} %", f.why, "; ".join(sorted(f.names))])
    return rows


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def span_of(claim_id: str, verdict: str) -> tuple[str, str]:
    """The releases on which the claim has `verdict`, as prose writes a range, and the first of them.

    One rendering for every range a page states (the `releases` directive), so that it always says which
    releases in it were measured and which the bisection infers between them, and moves when a record
    does: "vLLM 0.29.0 to 0.32.0 (0.29.0, 0.31.0 and 0.32.0 measured; 0.30.0 inferred)". The releases must
    be consecutive in the timeline: a range with another verdict, an inconclusive or an unknown release
    inside it is not one range, and the page must say it otherwise."""
    from verify.errors import VerifyError
    rows = timeline(claim_id)
    holds = [i for i, r in enumerate(rows)
             if (r.measured.verdict if r.measured else r.guess) == verdict]
    if not holds:
        raise VerifyError(f"claim {claim_id!r} is {verdict} on no release checked")
    if holds != list(range(holds[0], holds[-1] + 1)):
        raise VerifyError(f"claim {claim_id!r} is {verdict} on releases that are not one range: "
                          f"{', '.join(rows[i].release for i in holds)}")
    inside = rows[holds[0]:holds[-1] + 1]
    measured = [r.release for r in inside if r.measured]
    inferred = [r.release for r in inside if not r.measured]
    ends = inside[0].release if len(inside) == 1 else f"{inside[0].release} to {inside[-1].release}"
    if not inferred:
        note = "measured" if len(inside) == 1 else "each measured"
    else:
        note = f"{_listed(measured)} measured; {_listed(inferred)} inferred"
    return f"vLLM {ends} ({note})", inside[0].release
