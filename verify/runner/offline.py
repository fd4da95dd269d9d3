"""The offline engine: vllm.LLM in-process, in one child process per run that never outlives it.

Every offline job of a run runs in one child process (`python -m
verify.runner.offline OUT PROFILE MODEL T0 JOB...`) started in its own process
group, like the server: the parent waits with a bounded timeout per job, shows
progress, and stops the group on success, failure, Ctrl-C or its own death. The
child builds `vllm.LLM` with the profile's model and engine arguments once
(`ctx.llm()`) and hands the same engine to every job that asks for the same
configuration; a job that asks for another (a copy of the model, other
arguments) gets an engine of its own. After each job the child writes that job's
data, the files it used and the engines it used to OUT/<job>.json atomically, so
a crash in a later job loses nothing that finished. vLLM's engine start-up uses
the spawn method, so the child is a module run as __main__, never a fork of the
verify process.

The first engine the child builds is a start from a fresh process: its time from
the parent's launch of the child to a constructed vllm.LLM (imports included) is
the run's offline start-up figure, on the same clock as a server's launch to
healthy.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from verify.runner.context import BaseContext, tracking
from verify.errors import VerifyError
from verify.evidence.store import write_atomic
from verify.live import processes
from verify.config.profiles import Profile, get_profile
from verify.live.processes import log_tail
from verify.paths import ROOT

# Longest one job may take in the child (its engine's start included) before the run gives up.
JOB_TIMEOUT_S = 900.0
DONE_MARK = "VERIFY-OFFLINE-JOB-DONE"


@dataclass
class EngineCache:
    """The child's engines: one per configuration, shared by the jobs that ask for it."""
    launched_at: float  # the parent's time.monotonic() when it launched the child (one clock per machine)
    key: tuple | None = None
    llm: object = None
    built: list = field(default_factory=list)  # every engine built in this process, in order

    def get(self, model: str, args: dict, progress, for_job: str):
        from vllm import LLM
        key = (model, json.dumps(args, sort_keys=True))
        if self.llm is not None and self.key == key:
            return self.llm, self.built[-1], True
        self.close()
        progress(f"building vllm.LLM({', '.join(f'{k}={v!r}' for k, v in args.items())})")
        t0 = time.monotonic()
        self.llm = LLM(model=model, **args)
        now = time.monotonic()
        facts = {"args": args, "start_seconds": round(now - t0, 2), "built_for": for_job}
        if not self.built:
            # Nothing was built before in this process: this start is from a fresh process.
            facts["fresh_process_start_seconds"] = round(now - self.launched_at, 2)
        self.built.append(facts)
        self.key = key
        return self.llm, facts, False

    def close(self) -> None:
        import gc
        if self.llm is not None:
            # Stop the engine core process now, not whenever garbage collection gets to it.
            self.llm.llm_engine.engine_core.shutdown()
        self.llm, self.key = None, None
        gc.collect()


@dataclass
class OfflineContext(BaseContext):
    profile: Profile = None
    model_path: str = ""
    model_facts: dict = field(default_factory=dict)
    cache: EngineCache = None
    job_id: str = ""
    # Every engine the job used: its arguments, how long construction took, and whether
    # an earlier job of the run built it.
    engines: list = field(default_factory=list)
    # Every HTTP server the job started to compare with (see server()): its facts.
    servers: list = field(default_factory=list)
    # Seconds of the job spent starting engines and servers (the run counts them as starts).
    start_seconds: float = 0.0

    def llm(self, model: str | None = None, **overrides):
        """vllm.LLM with the profile's model (or a job's copy of it) and engine arguments (plus overrides, recorded)."""
        args = {**self.profile.offline_args(), **overrides}
        llm, facts, shared = self.cache.get(model or self.model_path, args, self.progress, self.job_id)
        if not shared:
            self.start_seconds += facts["start_seconds"]
        self.engines.append({**facts, "shared": shared,
                             **({"model": "a copy made by the job"} if model else {})})
        return llm

    @property
    def fresh_start(self) -> dict | None:
        """The first engine this process built: a start from a fresh process, with its arguments."""
        first = self.cache.built[0] if self.cache.built else None
        return first if first and "fresh_process_start_seconds" in first else None

    def close_llm(self) -> None:
        self.cache.close()

    @contextlib.contextmanager
    def server(self, variant: str = "default", model: str | None = None):
        """The profile's HTTP server on a job's own copy of the model, beside the offline engine's answers.

        The offline engine is shut down first: two cores cannot hold two engines. The
        server is a managed one (its own process group, stopped on exit and when this
        child dies), and its facts go into the record next to the offline engine's.
        A job that compares with the run's own server uses Job.server_phase instead.
        """
        from verify.evidence.provenance import server_facts
        from verify.live.server import managed_server
        self.close_llm()
        # The model folder the parent prepared (this child's environment may not be able to).
        facts = {**self.model_facts, "folder": "a copy made by the job"} if model else self.model_facts
        with managed_server(self.profile, progress=self.progress, variant=variant,
                            model_path=model or self.model_path, model_facts=facts) as srv:
            self.start_seconds += srv.start_seconds
            self.servers.append(server_facts(srv))
            yield srv

    @contextlib.contextmanager
    def launch(self, extra_flags: tuple[str, ...] = ()):
        """The profile's server, yielded the moment its process is spawned, for a job that watches the
        start-up, stops the engine or signals the server itself. Every process of it is stopped on
        exit, whatever state the job left it in (verify/live/processes.py). The job calls ready()
        once the server answers, since only it knows when that was."""
        from verify.live.server import managed_server
        self.close_llm()
        with managed_server(self.profile, progress=self.progress, model_path=self.model_path,
                            model_facts=self.model_facts, extra_flags=extra_flags, wait_ready=False) as srv:
            yield srv

    @contextlib.contextmanager
    def proxy(self, setup: str, upstream_port: int):
        """A proxy of the given set-up (verify/live/proxy.py) in front of a server the job launched; its
        configuration and the code that wraps it are inputs of the record."""
        from verify.live.proxy import SETUPS, config_path, managed_proxy
        if setup not in SETUPS:
            raise VerifyError(f"unknown proxy set-up {setup!r} (known: {', '.join(SETUPS)})")
        self.inputs.declare(config_path(setup))
        self.inputs.declare(ROOT / "verify" / "live" / "proxy.py")
        with managed_proxy(setup, upstream_port) as proxy:
            yield proxy

    def ready(self, srv, start_seconds: float) -> None:
        """A launched server answers: its facts (version, command) go into the record, and its start
        counts as the job's start time."""
        from verify.evidence.provenance import server_facts
        srv.start_seconds = round(start_seconds, 2)
        self.start_seconds += srv.start_seconds
        self.servers.append(server_facts(srv))


def offline_order(jobs: list) -> list:
    """Jobs that only use the shared engine first; jobs that start engines of their own last."""
    return sorted(jobs, key=lambda j: j.starts_own_engine)


def run_offline_jobs(jobs: list, profile: Profile, progress=print, on_result=None) -> dict[str, dict]:
    """Run a run's offline jobs in one child process; returns job id -> what the child wrote for it.

    on_result(job, result) is called as each job's result arrives. A job the child did
    not finish gets {"error": ...} with the reason and the log's tail.
    """
    from verify.live.server import model_for
    python = profile.python(progress)  # first: a release that cannot be installed fails before anything else
    workdir = Path(tempfile.mkdtemp(prefix="vllm-offline-"))
    log_path, model_file = workdir / "offline.log", workdir / "model.json"
    # The model is prepared here, in this environment: a release's own environment has
    # only vLLM, not the model package or the converter.
    model_path, model_facts = model_for(profile, progress)
    model_file.write_text(json.dumps({"path": model_path, "facts": model_facts}), encoding="utf-8")
    # The child runs on the profile's release; this checkout is put on its path, since
    # a release's own environment does not have the verify package installed.
    env = {**os.environ, **profile.env, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    ordered = offline_order(jobs)
    progress(f"starting the offline engine ({profile.name} profile) in a child process for "
             f"{', '.join(j.id for j in ordered)}; log: {log_path}")
    t0 = time.monotonic()
    argv = [python, "-m", "verify.runner.offline", str(workdir), profile.name, str(model_file), repr(t0),
            *(j.id for j in ordered)]
    proc = processes.spawn(argv, log_path, env=env)
    results: dict[str, dict] = {}
    pending = list(ordered)
    try:
        while pending:
            job = pending[0]
            out = workdir / f"{job.id}.json"
            try:
                # Each job gets its own time limit, counted from the previous job's result.
                processes.wait_until(proc, out.is_file, JOB_TIMEOUT_S, progress,
                                     f"the offline engine working on {job.id}", log_path, poll_s=0.2)
            except processes.Exited:
                break
            except processes.TimedOut:
                results[job.id] = {"error": f"offline job {job.id} did not finish within {JOB_TIMEOUT_S:.0f} s",
                                   "detail": log_tail(log_path)}
                pending.pop(0)
                if on_result:
                    on_result(job, results[job.id])
                break
            results[job.id] = json.loads(out.read_text(encoding="utf-8"))
            pending.pop(0)
            if on_result:
                on_result(job, results[job.id])
    finally:
        processes.stop_group(proc)
    for job in pending:
        if job.id not in results:
            results[job.id] = {"error": f"offline job {job.id} did not run: the child exited with code "
                                        f"{proc.returncode} before it finished", "detail": log_tail(log_path)}
            if on_result:
                on_result(job, results[job.id])
    return results


def _child(workdir: str, profile_name: str, model_file: str, launched_at: str, *job_ids: str) -> int:
    from verify.registry import get_job
    profile = get_profile(profile_name)
    model = json.loads(Path(model_file).read_text(encoding="utf-8"))
    processes.unwind_on_signals()  # SIGTERM from the parent unwinds, so a server a job started stops too
    cache = EngineCache(launched_at=float(launched_at))
    version = None
    try:
        for job_id in job_ids:
            job = get_job(job_id)
            print(f"[{job_id}] {job.title}", flush=True)
            ctx = OfflineContext(profile=profile, model_path=model["path"], model_facts=model["facts"],
                                 cache=cache, job_id=job_id, progress=lambda m: print(m, flush=True))
            t0 = time.monotonic()
            try:
                with tracking(ctx.inputs):
                    data = job.collect(ctx)
                ctx.inputs.check(job_id)
            except Exception as e:  # noqa: BLE001 - one job's failure must not stop the others
                msg = e.message if isinstance(e, VerifyError) else f"{type(e).__name__}: {e}"
                traceback.print_exc()
                result = {"error": msg, "detail": traceback.format_exc(limit=3)}
            else:
                if version is None:
                    import vllm
                    version = vllm.__version__
                result = {"data": data, "inputs": ctx.inputs.declared, "seconds": round(time.monotonic() - t0, 2),
                          "start_seconds": round(ctx.start_seconds, 2),
                          "engine": {"kind": "offline", "version": version, "profile": profile.as_record(),
                                     "model_facts": model["facts"], "engines": ctx.engines, "servers": ctx.servers,
                                     "ran_in": f"one child process with the run's other offline jobs ({', '.join(job_ids)})"}}
            write_atomic(Path(workdir) / f"{job_id}.json", json.dumps(result))
            print(f"{DONE_MARK} {job_id}", flush=True)
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_child(*sys.argv[1:]))
    except VerifyError as e:
        print(f"verify: error: {e.message}", file=sys.stderr)
        sys.exit(1)
