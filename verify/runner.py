"""`verify run`: run the jobs whose inputs changed, one engine start per variant.

Jobs are grouped by what they need started: the server with a given variant,
or the offline engine. Each server variant is started once per run and stopped
before the next one starts (two cores cannot hold two engines); each offline
job builds its engine in a child process of its own. A job's record is written
only when the job finished and none of its captures failed; otherwise the last
good record is kept and the run fails, naming the job.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from verify.captures import failed_captures
from verify.context import RunContext, tracking
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence import store
from verify.evidence.provenance import machine_facts, server_facts, utc_now
from verify.evidence.record import Record
from verify.job import OFFLINE, Job
from verify.live.profiles import DEFAULT_VARIANT, Profile
from verify.registry import all_jobs, get_job


@dataclass
class RunLog:
    """What the run summary prints: each engine start and each job's time."""
    starts: list[tuple[str, float]] = field(default_factory=list)
    jobs: list[tuple[str, str, float, str]] = field(default_factory=list)  # id, group, seconds, outcome
    failures: list[str] = field(default_factory=list)
    # Each job's code and engine hashes, taken when the run started, from the code it runs:
    # a file edited while the run goes on then leaves the record stale, not falsely fresh.
    inputs_at_start: dict[str, dict[str, str]] = field(default_factory=dict)

    def summary(self, wall_s: float) -> list[str]:
        lines = [f"\nwall time {wall_s:.1f} s"]
        if self.starts:
            lines.append("engine starts:")
            lines += [f"  {s:7.1f} s  {name}" for name, s in self.starts]
        lines.append("jobs:")
        lines += [f"  {s:7.1f} s  {job_id:<28} [{group}] {outcome}" for job_id, group, s, outcome in self.jobs]
        # An offline job's time already includes its engine's start.
        floor = sum(s for name, s in self.starts if name.startswith("server")) + sum(s for _, _, s, _ in self.jobs)
        if floor:
            lines.append(f"floor (engine starts + job times) {floor:.1f} s; wall time is {wall_s / floor:.2f}x the floor")
        return lines


def select_jobs(ids: list[str] | None, profile: Profile) -> list[Job]:
    jobs = [get_job(i) for i in ids] if ids else list(all_jobs().values())
    return [j for j in jobs if profile.name in j.profiles]


def is_fresh(job: Job, profile: Profile, root: Path | None = None) -> bool:
    record = Record.load(job.id, profile.name, root)
    return bool(record) and record.is_fresh(job, profile)


def group_key(job: Job) -> str:
    return "offline engine" if job.engine == OFFLINE else f"server variant {job.variant}"


def grouped(jobs: list[Job]) -> dict[str, list[Job]]:
    """Jobs by what they need started: the default server first, then other variants, offline last."""
    groups: dict[str, list[Job]] = {}
    order = sorted(jobs, key=lambda j: (j.engine == OFFLINE, j.variant != DEFAULT_VARIANT, j.variant))
    for job in order:
        groups.setdefault(group_key(job), []).append(job)
    return groups


def run(ids: list[str] | None, profile: Profile, run_all: bool = False, server_url: str | None = None,
        port: int | None = None, evidence_root: Path | None = None, progress=print) -> int:
    jobs = select_jobs(ids, profile)
    todo = jobs if run_all else [j for j in jobs if not is_fresh(j, profile, evidence_root)]
    if not todo:
        progress(f"nothing to run: all {len(jobs)} records for profile {profile.name} are fresh "
                 "(use --all to run them anyway)")
        return 0
    groups = grouped(todo)
    progress(f"running {len(todo)} of {len(jobs)} jobs on profile {profile.name}, in {len(groups)} engine start(s): "
             + "; ".join(f"{g}: {', '.join(j.id for j in js)}" for g, js in groups.items()))
    t_run = time.monotonic()
    log = RunLog(inputs_at_start={j.id: input_hashes.static_inputs(j, profile) for j in todo})
    mfacts = machine_facts()
    for group, group_jobs in groups.items():
        if group_jobs[0].engine == OFFLINE:
            for job in group_jobs:
                _run_offline(job, profile, mfacts, evidence_root, log, progress)
        else:
            _run_server_group(group_jobs, profile, server_url, port, mfacts, evidence_root, log, progress)
    for line in log.summary(time.monotonic() - t_run):
        progress(line)
    if log.failures:
        raise VerifyError(f"{len(log.failures)} job(s) failed: " + "; ".join(log.failures))
    return 0


def _run_server_group(jobs: list[Job], profile: Profile, server_url, port, mfacts, evidence_root, log: RunLog,
                      progress) -> None:
    from verify.live.server import SERVER_URL_ENV, server_for
    variant = jobs[0].variant
    external = server_url or os.environ.get(SERVER_URL_ENV)
    if external and variant != DEFAULT_VARIANT:
        for job in jobs:
            log.failures.append(f"{job.id}: needs server variant {variant}, which a server given by URL cannot provide")
            log.jobs.append((job.id, group_key(job), 0.0, "not run"))
        progress(f"skipping {', '.join(j.id for j in jobs)}: they need server variant {variant}, "
                 "and a server given by URL is started however its owner started it")
        return
    try:
        cm = server_for(profile, server_url, port, progress, variant=variant)
        server = cm.__enter__()
    except VerifyError as e:
        for job in jobs:
            log.failures.append(f"{job.id}: {e.message}")
        raise
    try:
        if server.start_seconds is not None:
            log.starts.append((f"server variant {variant}", server.start_seconds))
        sfacts = server_facts(server)
        ctx = RunContext(server=server, progress=progress)
        try:
            for job in jobs:
                ctx.for_next_job()
                _run_one(job, profile, lambda: _collect_on_server(job, ctx), lambda: {
                    "server": sfacts, "proxies": dict(ctx.proxies_used)}, mfacts, evidence_root, log, progress,
                    alive=server.alive)
        finally:
            ctx.close()
    finally:
        cm.__exit__(None, None, None)


def _collect_on_server(job: Job, ctx: RunContext) -> tuple[dict, dict]:
    with tracking(ctx.inputs):
        data = job.collect(ctx)
    ctx.inputs.check(job.id)
    return data, dict(ctx.inputs.declared)


def _run_offline(job: Job, profile: Profile, mfacts, evidence_root, log: RunLog, progress) -> None:
    from verify.live.offline import run_offline_job
    result = {}

    def collect():
        result.update(run_offline_job(job, profile, progress))
        for engine in result["engine"]["engines"]:
            log.starts.append((f"offline engine ({job.id}; part of its job time)", engine["start_seconds"]))
        for srv in result["engine"].get("servers", []):
            log.starts.append((f"its server ({job.id}; part of its job time)", srv["start_seconds"]))
        return result["data"], result["inputs"]
    _run_one(job, profile, collect, lambda: {"offline_engine": result["engine"]}, mfacts, evidence_root, log,
             progress)


def _run_one(job: Job, profile: Profile, collect, engine_facts, mfacts, evidence_root, log: RunLog, progress,
             alive=lambda: True) -> None:
    progress(f"[{job.id}] {job.title}")
    t0 = time.monotonic()
    started = utc_now()
    try:
        data, opened = collect()
        failed = failed_captures(data)
        if failed:
            raise VerifyError("a capture failed (" + "; ".join(failed[:3]) + ")")
        if not alive():
            raise VerifyError("the server was no longer healthy when the job ended")
        record = build_record(job, profile, data, opened, engine_facts(), mfacts, started, time.monotonic() - t0,
                              log.inputs_at_start.get(job.id))
    except Exception as e:  # noqa: BLE001 - one job's failure must not hide the others
        msg = e.message if isinstance(e, VerifyError) else f"{type(e).__name__}: {e}"
        log.failures.append(f"{job.id}: {msg}")
        progress(f"[{job.id}] FAILED: {msg}; its previous record is kept")
        if not isinstance(e, VerifyError):
            progress(traceback.format_exc(limit=3))
        log.jobs.append((job.id, group_key(job), time.monotonic() - t0, "failed"))
        return
    store.save(record, evidence_root)
    write_artifacts(job, record, evidence_root)
    summary = ", ".join(f"{cid.split('.')[-1]}={v['verdict']}" for cid, v in record["claims"].items())
    log.jobs.append((job.id, group_key(job), time.monotonic() - t0, summary))
    progress(f"[{job.id}] done in {time.monotonic() - t0:.1f} s: {summary}")


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


def write_artifacts(job: Job, record: dict, root: Path | None = None) -> None:
    for name, render in job.artifacts.items():
        store.write_atomic(store.artifact_path(job.id, record["profile"], name, root), render(record))
    # Generated pages show the default profile, and only when writing the site's own evidence.
    if root is None:
        write_pages(job, record)


def write_pages(job: Job, record: dict) -> list[Path]:
    """Write the pages a job generates (for example the executed notebook) from its record."""
    from verify.live.profiles import DEFAULT_PROFILE
    from verify.paths import DOCS
    if record["profile"] != DEFAULT_PROFILE:
        return []
    written = []
    for rel, render in job.page_files.items():
        if store.write_atomic(DOCS / rel, render(record)):
            written.append(DOCS / rel)
    return written


def regenerate_pages() -> list[Path]:
    """Rewrite every generated page from the committed records (no server needed)."""
    from verify.live.profiles import DEFAULT_PROFILE
    written = []
    for job in all_jobs().values():
        record = store.load(job.id, DEFAULT_PROFILE) if job.page_files else None
        if record:
            written += write_pages(job, record)
    return written

