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

import time
from pathlib import Path

from verify.config.profiles import Profile
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence.provenance import machine_facts
from verify.evidence.record import Record
from verify.job import Job
from verify.registry import get_job
from verify.runner.grouping import DEFAULT_GROUP, grouped, second_cpus, second_engine_groups
from verify.runner.live_sample import sample_disagreements, what_rests_on_records
from verify.runner.offline_group import run_offline_group
from verify.runner.progress import Progress
from verify.runner.run_log import RunLog
from verify.runner.selection import is_fresh, select_jobs
from verify.runner.server_groups import run_server_group


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
        progress(f"on a second engine (CPU {second_cpus()}), beside the default server's jobs that judge no timing: "
                 f"{'; '.join(second)}")
    for group, group_jobs in groups.items():
        if group in second:
            continue  # run beside the default server (verify/runner/grouping.py: second_engine_groups)
        if group == "offline engine":
            t_group = time.monotonic()
            try:
                run_offline_group(group_jobs, profile, mfacts, evidence_root, log, progress, eta, offline_parts)
            finally:
                log.offline_up_s += time.monotonic() - t_group
        else:
            phases = [j for j in phased if j.id in offline_parts] if group == DEFAULT_GROUP else []
            run_server_group(group_jobs, profile, server_url, port, mfacts, evidence_root, log, progress, eta,
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
    disagreements = sample_disagreements(sampled, profile, evidence_root, sample_root, log, progress) \
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
