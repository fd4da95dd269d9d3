"""Running one job: take what it collected, check it, decide its claims and write its record.

A record is written only when the job finished, ran only the programs it declares and none of
its captures failed; otherwise the failure is logged, the last good record is kept and the run
goes on with the other jobs.
"""

from __future__ import annotations

import os
import time
import traceback

from verify.captures import failed_captures
from verify.config.profiles import Profile
from verify.errors import VerifyError
from verify.evidence import store
from verify.evidence.provenance import utc_now
from verify.job import Job
from verify.runner.grouping import group_key
from verify.runner.progress import Progress
from verify.runner.record import build_record, programs_ran
from verify.runner.run_log import RunLog


def _keep_failed(job: Job, profile, data) -> str:
    """The failed run's data, outside the evidence folder (the last good record stays), for inspection."""
    import json
    import tempfile
    fd, path = tempfile.mkstemp(prefix=f"verify-failed-{job.id}-{profile.name}-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, default=str)
    return path


def log_failure(job: Job, e: Exception, log: RunLog, progress, seconds: float) -> None:
    msg = e.message if isinstance(e, VerifyError) else f"{type(e).__name__}: {e}"
    log.failures.append(f"{job.id}: {msg}")
    progress(f"[{job.id}] FAILED: {msg}; its previous record is kept")
    detail = getattr(e, "detail", None)
    if detail:
        progress(detail)
    elif not isinstance(e, VerifyError):
        progress(traceback.format_exc(limit=3))
    log.jobs.append((job.id, group_key(job), seconds, "failed", 0.0))


def run_one(job: Job, profile: Profile, collect, engine_facts, mfacts, evidence_root, log: RunLog, progress,
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
        record = build_record(job, profile, data, opened, {**engine_facts(), **programs_ran(job)}, mfacts, started,
                              seconds, log.inputs_at_start.get(job.id))
    except Exception as e:  # noqa: BLE001 - one job's failure must not hide the others
        log_failure(job, e, log, progress, earlier_seconds + time.monotonic() - t0)
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
