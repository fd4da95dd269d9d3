"""Running the offline group: every offline job in one child process (verify/runner/offline.py).

The child builds one engine per configuration and reports each job's result; here each result
becomes a record, or, for a job with a server phase, waits for the run's default server.
"""

from __future__ import annotations

from verify.config.profiles import Profile
from verify.errors import VerifyError
from verify.job import Job
from verify.runner.one_job import log_failure, run_one
from verify.runner.progress import Progress
from verify.runner.run_log import RunLog


def run_offline_group(jobs: list[Job], profile: Profile, mfacts, evidence_root, log: RunLog, progress,
                      eta: Progress, offline_parts: dict) -> None:
    """Every offline job in one child process, with one engine per configuration."""
    from verify.runner.offline import run_offline_jobs
    first = [True]

    def on_result(job: Job, result: dict) -> None:
        if first[0]:
            first[0] = False
            eta.started_engine()
        if "error" in result:
            log_failure(job, VerifyError(result["error"], detail=result.get("detail")), log, progress,
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
        run_one(job, profile, lambda: (result["data"], result["inputs"]), lambda: {"offline_engine": result["engine"]},
                mfacts, evidence_root, log, progress, eta, earlier_seconds=result["seconds"],
                start_inside=result["start_seconds"], announce=False)

    try:
        run_offline_jobs(jobs, profile, progress, on_result)
    except VerifyError as e:  # the child could not start at all (a release that does not install)
        for job in jobs:
            log.failures.append(f"{job.id}: {e.message}")
        raise
