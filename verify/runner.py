"""`verify run`: run the jobs whose inputs changed, against one shared server start."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from verify import evidence, freeze
from verify.context import RunContext
from verify.errors import VerifyError
from verify.job import Job
from verify.profiles import Profile
from verify.provenance import machine_facts, server_facts, utc_now
from verify.registry import all_jobs, get_job


def select_jobs(ids: list[str] | None, profile: Profile) -> list[Job]:
    jobs = [get_job(i) for i in ids] if ids else list(all_jobs().values())
    return [j for j in jobs if profile.name in j.profiles]


def is_fresh(job: Job, profile: Profile, root: Path | None = None) -> bool:
    record = evidence.load(job.id, profile.name, root)
    return bool(record) and record.get("inputs_hash") == freeze.input_hash(job, profile)


def run(ids: list[str] | None, profile: Profile, run_all: bool = False, server_url: str | None = None,
        port: int | None = None, evidence_root: Path | None = None, progress=print) -> int:
    from verify.server import server_for  # the client stack is only needed when something runs

    jobs = select_jobs(ids, profile)
    todo = jobs if run_all else [j for j in jobs if not is_fresh(j, profile, evidence_root)]
    if not todo:
        progress(f"nothing to run: all {len(jobs)} records for profile {profile.name} are fresh "
                 "(use --all to run them anyway)")
        return 0
    progress(f"running {len(todo)} of {len(jobs)} jobs on profile {profile.name}: {', '.join(j.id for j in todo)}")
    t_run = time.monotonic()
    timings: list[tuple[str, float, str]] = []
    failures: list[str] = []
    with server_for(profile, server_url, port, progress) as server:
        sfacts = server_facts(server)
        mfacts = machine_facts()
        ctx = RunContext(server=server, progress=progress)
        try:
            for job in todo:
                progress(f"[{job.id}] {job.title}")
                t0 = time.monotonic()
                started = utc_now()
                ctx.proxies_used = set()
                try:
                    data = job.collect(ctx)
                    record = build_record(job, profile, data, sfacts, mfacts, started,
                                          time.monotonic() - t0, sorted(ctx.proxies_used))
                except (VerifyError, Exception) as e:  # noqa: BLE001 - one job's failure must not hide the others
                    msg = e.message if isinstance(e, VerifyError) else f"{type(e).__name__}: {e}"
                    failures.append(f"{job.id}: {msg}")
                    progress(f"[{job.id}] FAILED: {msg}; its previous record is kept")
                    if not isinstance(e, VerifyError):
                        progress(traceback.format_exc(limit=3))
                    timings.append((job.id, time.monotonic() - t0, "failed"))
                    continue
                evidence.save(record, evidence_root)
                write_artifacts(job, record, evidence_root)
                summary = ", ".join(f"{cid.split('.')[-1]}={v['verdict']}" for cid, v in record["claims"].items())
                timings.append((job.id, time.monotonic() - t0, summary))
                progress(f"[{job.id}] done in {time.monotonic() - t0:.1f} s: {summary}")
        finally:
            ctx.close()
    progress(f"\nwall time {time.monotonic() - t_run:.1f} s (server start {server.start_seconds or 0:.1f} s)")
    for job_id, seconds, summary in timings:
        progress(f"  {seconds:7.1f} s  {job_id:<28} {summary}")
    if failures:
        raise VerifyError(f"{len(failures)} job(s) failed: " + "; ".join(failures))
    return 0


def build_record(job: Job, profile: Profile, data: dict, sfacts: dict, mfacts: dict,
                 started: str, seconds: float, proxies: list[str]) -> dict:
    from verify.proxy import NGINX_DIR, SETUPS
    return {
        "job": job.id,
        "profile": profile.name,
        "title": job.title,
        "question": job.question,
        "inputs_hash": freeze.input_hash(job, profile),
        "claims": job.decide(data),
        "data": data,
        "provenance": {
            "date": started,
            "duration_s": round(seconds, 2),
            "server": sfacts,
            "proxies": {p: (NGINX_DIR / SETUPS[p][0]).relative_to(NGINX_DIR.parent.parent).as_posix()
                        for p in proxies},
            **mfacts,
        },
    }


def write_artifacts(job: Job, record: dict, root: Path | None = None) -> None:
    for name, render in job.artifacts.items():
        evidence.write_atomic(evidence.artifact_path(job.id, record["profile"], name, root), render(record))
    # Generated pages show the default profile, and only when writing the site's own evidence.
    if root is None:
        write_pages(job, record)


def write_pages(job: Job, record: dict) -> list[Path]:
    """Write the pages a job generates (for example the executed notebook) from its record."""
    from verify.paths import DOCS
    from verify.profiles import DEFAULT_PROFILE
    if record["profile"] != DEFAULT_PROFILE:
        return []
    written = []
    for rel, render in job.page_files.items():
        if evidence.write_atomic(DOCS / rel, render(record)):
            written.append(DOCS / rel)
    return written


def regenerate_pages() -> list[Path]:
    """Rewrite every generated page from the committed records (no server needed)."""
    from verify.profiles import DEFAULT_PROFILE
    written = []
    for job in all_jobs().values():
        record = evidence.load(job.id, DEFAULT_PROFILE) if job.page_files else None
        if record:
            written += write_pages(job, record)
    return written
