"""Running a group of jobs on one server start.

The server is started once for the group. Jobs that need a server that has served nothing go
first; jobs that only read what the API answers run side by side; the others run in turn, then
the server phases of offline jobs. The default server may run its jobs that judge no timing
while a second engine serves other groups (second_engine_groups in verify/runner/grouping.py).
"""

from __future__ import annotations

import os
import time

from verify.config.profiles import DEFAULT_VARIANT, Profile, combined_variant, get_variant
from verify.errors import VerifyError
from verify.evidence.provenance import server_facts
from verify.job import Job
from verify.runner.context import RunContext, tracking
from verify.runner.grouping import DEFAULT_GROUP, group_key, second_cpus
from verify.runner.one_job import run_one
from verify.runner.progress import Progress
from verify.runner.run_log import RunLog


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
                run_server_group(group_jobs, profile, None, None, mfacts, evidence_root, log,
                                 lambda m: progress(f"(second engine) {m}"), eta, beside_of=DEFAULT_GROUP)
            except BaseException as e:  # noqa: BLE001 - raised in the run's own thread after the join
                errors.append(e)
                return
    facts = {"two_engines": {"this_engine": "vLLM's own core binding",
                             "other_engines": list(second), "other_engines_bound_to_cpus": second_cpus()}}
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


def run_server_group(jobs: list[Job], profile: Profile, server_url, port, mfacts, evidence_root, log: RunLog,
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
    run_env = {"VLLM_CPU_OMP_THREADS_BIND": second_cpus()} if beside_of else None
    extra = {"two_engines": {"this_engine_bound_to_cpus": second_cpus(),
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
            run_one(job, profile, lambda: _collect_on_server(job, ctx), lambda: {
                "server": sfacts, "proxies": dict(ctx.proxies_used), **(extra_facts or {})}, mfacts, evidence_root,
                log, progress, eta, alive=server.alive, engine=engine)
        for job in phases:
            ctx.for_next_job()
            ctx.run_starts = log.quiet_starts()
            part = offline_parts.pop(job.id)
            run_one(job, profile, lambda: _server_phase(job, ctx, part), lambda: {
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
            run_one(job, profile, lambda: _collect_on_server(job, ctx), lambda: {
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
