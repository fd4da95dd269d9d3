"""The offline engine: vllm.LLM in-process, in a child process that never outlives the run.

An offline job's `collect(ctx)` runs in a child process (`python -m
verify.live.offline JOB PROFILE OUT`) started in its own process group, like the
server: the parent waits with a bounded timeout, shows progress, and stops the
group on success, failure, Ctrl-C or its own death. The child builds
`vllm.LLM` with the profile's model and engine arguments (`ctx.llm()`), runs the
job, and writes its data, the files it used and the engine's facts to OUT
atomically. vLLM's engine start-up uses the spawn method, so the child is a
module run as __main__, never a fork of the verify process.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from verify.context import BaseContext, tracking
from verify.errors import VerifyError
from verify.live import processes
from verify.live.profiles import Profile, get_profile
from verify.paths import ROOT

RESULT_TIMEOUT_S = 900.0


@dataclass
class OfflineContext(BaseContext):
    profile: Profile = None
    model_path: str = ""
    model_facts: dict = field(default_factory=dict)
    # Every engine the job built: its arguments and how long construction took.
    engines: list = field(default_factory=list)
    # Every HTTP server the job started to compare with (see server()): its facts.
    servers: list = field(default_factory=list)
    _llm: object = None

    def llm(self, model: str | None = None, **overrides):
        """vllm.LLM with the profile's model (or a job's copy of it) and engine arguments (plus overrides, recorded)."""
        from vllm import LLM
        if self._llm is not None:
            self.close_llm()
        args = {**self.profile.offline_args(), **overrides}
        self.progress(f"building vllm.LLM({', '.join(f'{k}={v!r}' for k, v in args.items())})")
        t0 = time.monotonic()
        self._llm = LLM(model=model or self.model_path, **args)
        self.engines.append({"args": args, "start_seconds": round(time.monotonic() - t0, 2),
                             **({"model": "a copy made by the job"} if model else {})})
        return self._llm

    def close_llm(self) -> None:
        import gc
        if self._llm is not None:
            # Stop the engine core process now, not whenever garbage collection gets to it.
            self._llm.llm_engine.engine_core.shutdown()
        self._llm = None
        gc.collect()

    @contextlib.contextmanager
    def server(self, variant: str = "default", model: str | None = None):
        """The profile's HTTP server, for a job that runs the same work through both engines.

        The offline engine is shut down first: two cores cannot hold two engines. The
        server is a managed one (its own process group, stopped on exit and when this
        child dies), and its facts go into the record next to the offline engine's.
        """
        from verify.evidence.provenance import server_facts
        from verify.live.server import managed_server
        self.close_llm()
        # The model folder the parent prepared (this child's environment may not be able to).
        facts = {**self.model_facts, "folder": "a copy made by the job"} if model else self.model_facts
        with managed_server(self.profile, progress=self.progress, variant=variant,
                            model_path=model or self.model_path, model_facts=facts) as srv:
            self.servers.append(server_facts(srv))
            yield srv


def run_offline_job(job, profile: Profile, progress=print) -> dict:
    """Run an offline job in its child process; returns what the child wrote."""
    from verify.live.server import model_for
    python = profile.python(progress)  # first: a release that cannot be installed fails before anything else
    workdir = Path(tempfile.mkdtemp(prefix="vllm-offline-"))
    log_path, out_path, model_file = workdir / "offline.log", workdir / "result.json", workdir / "model.json"
    # The model is prepared here, in this environment: a release's own environment has
    # only vLLM, not the model package or the converter.
    model_path, model_facts = model_for(profile, progress)
    model_file.write_text(json.dumps({"path": model_path, "facts": model_facts}), encoding="utf-8")
    # The child runs on the profile's release; this checkout is put on its path, since
    # a release's own environment does not have the verify package installed.
    env = {**os.environ, **profile.env, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    argv = [python, "-m", "verify.live.offline", job.id, profile.name, str(out_path),
            str(model_file)]
    progress(f"[{job.id}] starting the offline engine ({profile.name} profile) in a child process; log: {log_path}")
    t0 = time.monotonic()
    proc = processes.spawn(argv, log_path, env=env)
    last_note = t0
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if now - t0 > RESULT_TIMEOUT_S:
                raise VerifyError(f"offline job {job.id} did not finish within {RESULT_TIMEOUT_S:.0f} s",
                                  detail=_tail(log_path))
            if now - last_note >= 10:
                last_note = now
                progress(f"  ... offline engine working ({now - t0:.0f} s; {_tail(log_path, 1)[:100]})")
            time.sleep(0.2)
    finally:
        processes.stop_group(proc)
    if proc.returncode != 0 or not out_path.is_file():
        raise VerifyError(f"offline job {job.id} failed (child exited with code {proc.returncode})",
                          detail=_tail(log_path))
    result = json.loads(out_path.read_text(encoding="utf-8"))
    result["seconds"] = round(time.monotonic() - t0, 2)
    return result


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])
    except OSError:
        return ""


def _child(job_id: str, profile_name: str, out: str, model_file: str) -> int:
    from verify.registry import get_job
    job, profile = get_job(job_id), get_profile(profile_name)
    model = json.loads(Path(model_file).read_text(encoding="utf-8"))
    model_path, model_facts = model["path"], model["facts"]
    processes.unwind_on_signals()  # SIGTERM from the parent unwinds, so a server this job started stops too
    ctx = OfflineContext(profile=profile, model_path=model_path, model_facts=model_facts, progress=lambda m: print(m, flush=True))
    with tracking(ctx.inputs):
        data = job.collect(ctx)
    ctx.inputs.check(job.id)
    import vllm
    result = {"data": data, "inputs": ctx.inputs.declared,
              "engine": {"kind": "offline", "version": vllm.__version__, "profile": profile.as_record(),
                         "model_facts": model_facts, "engines": ctx.engines, "servers": ctx.servers}}
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, out)
    ctx.close_llm()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_child(*sys.argv[1:5]))
    except VerifyError as e:
        print(f"verify: error: {e.message}", file=sys.stderr)
        sys.exit(1)
