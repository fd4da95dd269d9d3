"""`verify releases`: find the exact vLLM release where a claim's verdict or an exact figure changed.

Every release in CPU_RELEASES is a profile (verify/config/profiles.py). Running every job on
every release would take a full run per release; instead:

1. every job runs on the oldest and the newest release (only the jobs whose records are stale
   there; a fresh record is already that release's answer);
2. each claim whose verdict differs between the two, and each exact headline figure
   (tolerance 0: token counts, sizes, limits) that differs, is a *target*;
3. for each target only its job runs, on the release halfway between the nearest releases
   known to give the old and the new answer, until the two are adjacent: the newer one is
   where it changed. Targets that need the same release in the same round share one start.

Bisection assumes one change between the ends, as `git bisect` does; a release in between
that gives a third answer, or cannot be measured (its install or its capture failed, or the
verdict is inconclusive), ends that target as "changed between X and Y". A timing claim
(verify/config/timing.py) is bisected only with both ends measured on this machine:
an end recorded elsewhere runs again here first, so that a release difference is not a
machine difference. Timing figures (a tolerance above 0) are not bisected: one run of each
release does not tell a release from run-to-run drift.

Every run's records are the evidence; the site reads the verdict on each measured release
from them (verify/verdicts/releases.py), so nothing else is written.
"""

from __future__ import annotations

import shutil
import time
from functools import lru_cache
from dataclasses import dataclass, field

from verify import headline
from verify.captures import failed_captures
from verify.config.profiles import CPU_RELEASES, PROFILES, release_profile_name
from verify.config.releases import env_dir
from verify.errors import VerifyError
from verify.evidence.provenance import hardware
from verify.evidence.record import Record
from verify.registry import all_jobs, get_job
from verify.verdicts import hardware as hw_compare
from verify.config.timing import timing_claims

UNMEASURED = None


@dataclass
class Target:
    job_id: str
    name: str  # a claim id, or a headline figure's name
    kind: str  # "claim" or "figure"
    lo: int  # index into CPU_RELEASES of the newest release known to give the old answer
    hi: int  # ... and of the oldest known to give the new answer
    old: object = None
    new: object = None
    seen: dict[str, object] = field(default_factory=dict)  # release -> answer, as measured
    outcome: str = ""  # set when the target is settled

    @property
    def open(self) -> bool:
        return not self.outcome

    def describe(self) -> str:
        return f"{self.kind} {self.name!r} ({self.job_id})"


def profile_of(release: str):
    return PROFILES[release_profile_name(release)]


@lru_cache(maxsize=1)
def _here() -> dict:
    return hardware()


def _timing(target: Target) -> bool:
    return target.kind == "claim" and target.name in timing_claims(get_job(target.job_id))


def answer(target: Target, release: str, root=None):
    """What the release's fresh record says for the target: a verdict, a figure, or None (no fresh record,
    a failed capture, an inconclusive verdict, or, for a timing claim, a record made on other hardware
    than this machine: nothing to bisect on, so the release runs again)."""
    job, profile = get_job(target.job_id), profile_of(release)
    record = Record.load(job.id, profile.name, root)
    if record is None or not record.is_fresh(job, profile) or failed_captures(record.data):
        return UNMEASURED
    if _timing(target) and not hw_compare.same(record.provenance.get("hardware") or {}, _here()):
        return UNMEASURED
    if target.kind == "claim":
        verdict = record.verdict(target.name)["verdict"]
        return UNMEASURED if verdict == "inconclusive" else verdict
    try:
        return job.headline.read(record.data)[target.name]
    except headline.FigureMissing:
        return UNMEASURED


def find_targets(root=None, say=print) -> list[Target]:
    """Claims whose verdict, and exact figures whose value, differ between the oldest and newest releases."""
    first, last = CPU_RELEASES[0], CPU_RELEASES[-1]
    out: list[Target] = []
    timings: list[str] = []
    undecided: list[str] = []
    for job in all_jobs().values():
        a, b = (Record.load(job.id, profile_of(r).name, root) for r in (first, last))
        if a is None or b is None:
            continue
        names = [("claim", c.id) for c in job.claims]
        if job.headline and job.headline.tolerance == headline.EXACT:
            names += [("figure", n) for n in job.headline.names]
        elif job.headline:
            timings.append(job.id)
        for kind, name in names:
            t = Target(job.id, name, kind, 0, len(CPU_RELEASES) - 1)
            t.old, t.new = answer(t, first, root), answer(t, last, root)
            if (t.old is UNMEASURED) != (t.new is UNMEASURED) and not _timing(t):
                undecided.append(f"{name} ({first if t.old is UNMEASURED else last} gave nothing to decide on)")
            if t.old is UNMEASURED or t.new is UNMEASURED or t.old == t.new:
                continue
            t.seen = {first: t.old, last: t.new}
            out.append(t)
    if undecided:
        say(f"  not bisected, one end undecided (run that end again): {'; '.join(undecided)}")
    if timings:
        say(f"  not bisected: the figures of {len(timings)} jobs are timings ({', '.join(timings)}); "
            "one run per release does not tell a release from drift")
    return out


def _measured_here(job_id: str, release: str, root=None) -> bool:
    record = Record.load(job_id, profile_of(release).name, root)
    return record is not None and hw_compare.same(record.provenance.get("hardware") or {}, _here())


def _timing_differs_at_ends(root=None) -> list[str]:
    """Jobs with a timing claim decided differently at the two ends, whatever hardware each end ran on:
    their ends must both be measured here before the difference can be bisected."""
    out = []
    for job in all_jobs().values():
        timing = timing_claims(job)
        records = [Record.load(job.id, profile_of(r).name, root) for r in (CPU_RELEASES[0], CPU_RELEASES[-1])]
        if not timing or any(r is None or not r.is_fresh(job, profile_of(rel))
                             for r, rel in zip(records, (CPU_RELEASES[0], CPU_RELEASES[-1]))):
            continue
        a, b = records
        if any(a.verdict(c)["verdict"] != b.verdict(c)["verdict"] for c in timing):
            out.append(job.id)
    return out


def narrow(target: Target, root=None) -> int | None:
    """Move the target's bounds over every release already measured; the release to run next, or None
    when the target is settled (its outcome then says how)."""
    while target.hi - target.lo > 1:
        mid = (target.lo + target.hi + 1) // 2  # the upper middle: a change is likelier recent
        release = CPU_RELEASES[mid]
        got = answer(target, release, root)
        if got is UNMEASURED:
            return mid
        target.seen[release] = got
        if got == target.new:
            target.hi = mid
        elif got == target.old:
            target.lo = mid
        else:
            target.outcome = (f"a third answer on {release} ({got}): changed more than once between "
                              f"{CPU_RELEASES[target.lo]} and {CPU_RELEASES[target.hi]}")
            return None
    target.outcome = f"changed in {CPU_RELEASES[target.hi]} ({target.old} on {CPU_RELEASES[target.lo]}, " \
                     f"{target.new} from {CPU_RELEASES[target.hi]})"
    return None


def bisect(run_jobs, root=None, say=print, remove_environments: bool = False) -> list[Target]:
    """run_jobs(job_ids, profile, run_all) runs jobs and writes their records (verify.runner.run).

    remove_environments: delete a release's own environment (3.4 GB) once its runs are done, for a
    runner with less disk than every release needs at once; the ends' environments are kept.
    """
    t0 = time.monotonic()
    ran: list[tuple[str, list[str], str]] = []

    def run(ids, release, why, run_all=False):
        say(f"\n==> {release}: {', '.join(ids) if ids else 'every stale job'} ({why})")
        t = time.monotonic()
        try:
            run_jobs(ids, profile_of(release), run_all)
            ok = "done"
        except VerifyError as e:
            ok = f"failed: {e.message}"
            say(f"  {ok}")
        ran.append((release, ids or ["(stale jobs)"], f"{why}; {ok}; {time.monotonic() - t:.0f} s"))
        if remove_environments and release not in (CPU_RELEASES[0], CPU_RELEASES[-1]):
            profile = profile_of(release)
            shutil.rmtree(env_dir(profile.distribution, profile.release), ignore_errors=True)

    for release in (CPU_RELEASES[-1], CPU_RELEASES[0]):
        run(None, release, "the ends are measured in full")
    say("\nwhat differs between the oldest and the newest release:")
    targets = find_targets(root, say)
    again: dict[str, list[str]] = {}
    for job_id in _timing_differs_at_ends(root):
        for release in (CPU_RELEASES[0], CPU_RELEASES[-1]):
            if not _measured_here(job_id, release, root):
                again.setdefault(release, []).append(job_id)
    for release, ids in again.items():
        run(ids, release, "timing claim: its end was measured on other hardware, measured here again", True)
    if again:
        targets = find_targets(root, say)
    for t in targets:
        say(f"  {t.describe()}: {t.old} on {CPU_RELEASES[0]}, {t.new} on {CPU_RELEASES[-1]}")
    if not targets:
        say("  nothing: no release in between needs a run")
    while True:
        wanted: dict[int, list[Target]] = {}
        for t in targets:
            if t.open:
                mid = narrow(t, root)
                if mid is not None:
                    wanted.setdefault(mid, []).append(t)
        if not wanted:
            break
        for mid, ts in sorted(wanted.items()):
            release = CPU_RELEASES[mid]
            ids = sorted({t.job_id for t in ts})
            why = "; ".join(f"{t.name}: between {CPU_RELEASES[t.lo]} and {CPU_RELEASES[t.hi]}" for t in ts)
            run(ids, release, why, True)
            for t in ts:
                if answer(t, release, root) is UNMEASURED:
                    t.outcome = (f"changed between {CPU_RELEASES[t.lo]} and {CPU_RELEASES[t.hi]} "
                                 f"({release} gave nothing to decide on)")
    wall = time.monotonic() - t0
    say("\nruns:")
    for release, ids, why in ran:
        say(f"  {release}: {', '.join(ids)}: {why}")
    say("\nwhere each difference came in:")
    for t in targets:
        say(f"  {t.describe()}: {t.outcome}")
    say(f"\nverify releases: {len(ran)} run(s) in {wall / 60:.1f} min; {full_run_estimate(root)}")
    return targets


def full_run_estimate(root=None) -> str:
    """What running every job on every release would take, from the job times the two ends recorded."""
    totals = []
    for release in (CPU_RELEASES[0], CPU_RELEASES[-1]):
        records = [Record.load(j.id, profile_of(release).name, root) for j in all_jobs().values()]
        totals.append(sum(float(r.provenance.get("duration_s") or 0) for r in records if r))
    per_release = sum(totals) / len(totals)
    return (f"a full run on all {len(CPU_RELEASES)} releases would take about "
            f"{per_release * len(CPU_RELEASES) / 60:.0f} min of job time "
            f"({per_release / 60:.0f} min per release, the mean of the two ends' records, engine starts not counted)")
