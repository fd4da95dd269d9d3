"""A real vLLM OpenAI-compatible server, started for a run and always stopped after it.

`managed_server(profile)` binds 127.0.0.1 on a free port, waits for /health with
a bounded timeout and yields a `Server`. On a failed start it raises a one-line
VerifyError with the tail of the server's log. `external_server(url)` wraps a
server someone else runs, so the same jobs can point at it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx

from verify.live import processes
from verify.live.processes import log_tail
from verify.errors import VerifyError
from verify.config.adapters import in_records
from verify.config.profiles import DEFAULT_VARIANT, Profile, get_variant

SERVER_URL_ENV = "VERIFY_SERVER_URL"


@dataclass
class Server:
    url: str  # base URL without /v1, e.g. http://127.0.0.1:8000
    profile: Profile
    managed: bool
    log_path: Path | None = None
    argv: list[str] = field(default_factory=list)
    model_facts: dict = field(default_factory=dict)
    start_seconds: float | None = None
    pgid: int | None = None  # process group of a managed server (for memory readings)
    variant: str = DEFAULT_VARIANT
    process: object = None  # the managed server's Popen, to tell whether it is still alive
    # Environment the run set beyond the profile's and the variant's (the second engine's core binding).
    run_env: dict = field(default_factory=dict)

    def alive(self) -> bool:
        """The managed process has not exited and /health answers 200."""
        if self.process is not None and self.process.poll() is not None:
            return False
        try:
            return httpx.get(self.url + "/health", timeout=5.0).status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def api_key(self) -> str:
        """The bearer token the server was started with (--api-key), or "EMPTY" for a server without one:
        a variant that shares a start with the bearer-token variant sends it (never recorded)."""
        return self.argv[self.argv.index("--api-key") + 1] if "--api-key" in self.argv else "EMPTY"

    @property
    def port(self) -> int:
        return httpx.URL(self.url).port or 80

    @property
    def api(self) -> str:
        return self.url + "/v1"

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path and self.log_path.exists() else 0

    def log_capture(self, offset: int) -> tuple[dict, list[str]]:
        """The log lines written after offset, and a capture of the read that counts every line read.

        A managed server's log always has lines while it serves (uvicorn logs each request),
        so a read that found none, or a log that is not there, is a failed capture: an unread
        log can then never pass for a quiet one.
        """
        readable = bool(self.log_path and self.log_path.exists())
        lines = self.log_since(offset) if readable else []
        return {"capture": "server-log", "events": len(lines), "lines_read": len(lines),
                "error": None if readable else "the server's log is not readable here"}, lines

    def log_since(self, offset: int) -> list[str]:
        """Server log lines written after byte offset (empty for an external server)."""
        if not self.log_path or not self.log_path.exists():
            return []
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace").splitlines()


def model_for(profile: Profile, progress=print) -> tuple[str, dict]:
    """The model a profile serves: the local folder of the embedded model, or a hub id; and its facts."""
    if profile.model_source == "embedded":
        from verify.live.model import prepare_embedded_model
        folder, facts = prepare_embedded_model(progress)
        return str(folder), facts
    return profile.model_source, {"hub_id": profile.model_source}


def _with_adapters(argv: list[str], progress) -> list[str]:
    """The command line with each LoRA adapter it names built (or taken from the cache) and put in by
    path. (The server's recorded argv keeps `<adapters>/<name>-<key>`: the cache folder varies by machine.)"""
    from verify.config.adapters import adapters_named, substitute
    names = adapters_named(argv)
    if not names:
        return argv
    from verify.live.adapters import prepare_adapters
    folders = prepare_adapters(tuple(names), progress)
    return substitute(argv, lambda recipe: folders[recipe.name])


@contextlib.contextmanager
def managed_server(profile: Profile, port: int | None = None, progress=print,
                   variant: str = DEFAULT_VARIANT, extra_flags: tuple[str, ...] = (),
                   model_path: str | None = None, model_facts: dict | None = None,
                   wait_ready: bool = True, run_env: dict[str, str] | None = None) -> Iterator[Server]:
    """wait_ready=False yields as soon as the process is spawned (start_seconds stays None), for jobs
    that watch the start-up itself; the server is stopped on exit either way. run_env: environment
    the run adds (it is recorded with the server's facts)."""
    get_variant(variant)
    python = profile.python(progress)  # the profile's release: this environment's, or its own
    if port is not None and processes.port_in_use(port):
        raise VerifyError(f"port {port} on 127.0.0.1 is already in use; pick another with --port or stop what holds it")
    port = port or processes.free_port()
    if model_path:  # a folder the caller prepared, or a job's own copy of the model
        model, facts = model_path, model_facts or {"folder": "a copy made by the job"}
    else:
        model, facts = model_for(profile, progress)
    workdir = Path(tempfile.mkdtemp(prefix="vllm-server-"))
    log_path = workdir / "server.log"
    argv = profile.argv(model, port, variant, python) + list(extra_flags)  # extra flags: start-up failure tests
    run_argv = _with_adapters(argv, progress)
    env = {**os.environ, **profile.env, **dict(get_variant(variant).env), **(run_env or {}), "PYTHONUNBUFFERED": "1"}
    progress(f"starting vLLM {profile.release} ({profile.name} profile, variant {variant}) on 127.0.0.1:{port}; log: {log_path}")
    t0 = time.monotonic()
    proc = processes.spawn(run_argv, log_path, env=env)
    try:
        server = Server(url=f"http://127.0.0.1:{port}", profile=profile, managed=True,
                        log_path=log_path, argv=in_records(argv), model_facts=facts, pgid=proc.pid,
                        variant=variant, process=proc, run_env=dict(run_env or {}))
        if wait_ready:
            _wait_healthy(server, proc, profile.start_timeout_s, t0, progress)
            server.start_seconds = round(time.monotonic() - t0, 2)
            progress(f"server healthy after {server.start_seconds:.1f} s")
        yield server
    finally:
        processes.stop_group(proc)


def _wait_healthy(server: Server, proc, timeout_s: float, t0: float, progress) -> None:
    with httpx.Client(timeout=2.0) as client:
        def healthy() -> bool:
            try:
                return client.get(server.url + "/health").status_code == 200
            except httpx.HTTPError:
                return False
        try:
            processes.wait_until(proc, healthy, timeout_s - (time.monotonic() - t0), progress, "/health",
                                 server.log_path)
        except processes.Exited as e:
            raise VerifyError(f"vLLM {server.profile.release} server exited with code {e.code} during start-up",
                              detail=log_tail(server.log_path)) from None
        except processes.TimedOut:
            raise VerifyError(f"vLLM {server.profile.release} server not healthy after {timeout_s:.0f} s",
                              detail=log_tail(server.log_path)) from None


@contextlib.contextmanager
def external_server(url: str, profile: Profile, variant: str = DEFAULT_VARIANT) -> Iterator[Server]:
    url = url.rstrip("/")
    if url.endswith("/v1"):
        url = url[:-3]
    try:
        ok = httpx.get(url + "/health", timeout=5.0).status_code == 200
    except httpx.HTTPError as e:
        raise VerifyError(f"no healthy vLLM server at {url}: {type(e).__name__}") from None
    if not ok:
        raise VerifyError(f"server at {url} answered /health with an error")
    yield Server(url=url, profile=profile, managed=False, variant=variant)


def server_for(profile: Profile, server_url: str | None = None, port: int | None = None,
               progress=print, variant: str = DEFAULT_VARIANT, run_env: dict[str, str] | None = None):
    """The server a run uses: the one at server_url (or $VERIFY_SERVER_URL) if given, else a managed one."""
    url = server_url or os.environ.get(SERVER_URL_ENV)
    if url:
        # Someone else's server is started however they started it: it can only stand in for
        # the default variant, and jobs needing another variant are refused by the runner.
        return external_server(url, profile, variant)
    return managed_server(profile, port=port, progress=progress, variant=variant, run_env=run_env)
