"""Benchmark tools the latency jobs run, each installed once into a cached environment of its own.

A tool's dependencies need not agree with vLLM's, so it never goes into `.venv`: it is
installed into `.venvs/<tool>-<release>/` (beside the releases' environments) and run from
there. As with a release, the environment counts only once its marker file is written, and a
failed install is removed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from verify.config.releases import ENVS, MARKER, _shown
from verify.errors import VerifyError

# The release each job runs; a new release is a change of the job's inputs (its record goes stale).
GUIDELLM = ("guidellm", "0.8.1")
INSTALL_TIMEOUT_S = 1200
# The jobs that run each tool: `verify run` installs their tools before the first engine starts, so
# an install is never timed as part of a job.
USED_BY = {GUIDELLM: ("bench-definitions",)}


def facts_for(job_id: str) -> dict:
    """The tools a job runs, for its record's provenance: release and how each was installed."""
    return {name: {"version": release, "path": _shown(ENVS / f"{name}-{release}"),
                   "installed_by": f"PyPI {name}=={release}, into an environment of its own"}
            for (name, release), jobs in USED_BY.items() if job_id in jobs}


def prepare_for(job_ids, progress=print) -> float:
    """Install the tools the jobs run (those not installed yet); returns the seconds it took."""
    import time
    t0 = time.monotonic()
    for tool, jobs in USED_BY.items():
        if set(jobs) & set(job_ids):
            bin_dir(tool, progress)
    return time.monotonic() - t0


def bin_dir(tool: tuple[str, str], progress=print) -> Path:
    """The folder of the tool's commands, installing the tool first if its environment is not ready."""
    name, release = tool
    env = ENVS / f"{name}-{release}"
    if not (env / MARKER).is_file() or not (env / "bin" / name).is_file():
        _install(env, name, release, progress)
    return env / "bin"


def _install(env: Path, name: str, release: str, progress) -> None:
    shutil.rmtree(env, ignore_errors=True)
    ENVS.mkdir(parents=True, exist_ok=True)
    progress(f"installing {name}=={release} into {_shown(env)} (its own environment; a few minutes the first time)")
    try:
        for argv, what in (([sys.executable, "-m", "venv", str(env)], "create its environment"),
                           ([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--progress-bar", "off",
                             f"{name}=={release}"], "install it"),
                           ([str(env / "bin" / name), "--version"], "run it")):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
            if r.returncode != 0:
                lines = [ln for ln in (r.stderr + r.stdout).splitlines()
                         if ln.strip() and not ln.startswith("WARNING: Location 'file:")]
                reason = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), lines[-1] if lines else "")
                raise VerifyError(f"{name}=={release} could not {what}: {reason.strip()[:200]}")
        (env / MARKER).write_text(f"{name}=={release}\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    progress(f"{name}=={release} ready in {_shown(env)}")
