"""What a job gets to work with during a run, and the record of what it used.

Every file a job uses from snippets/ (a Python snippet, a shell script, a
notebook, an nginx config behind a proxy) goes through its context, which
records it, with its hash, as an input of the job's record. While a job
collects, an audit hook watches every file the process opens: a file under
snippets/ opened without going through the context fails the job, so a record
can never leave out an input it really used.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from verify.errors import VerifyError
from verify.evidence.inputs import file_hash, label_of
from verify.paths import ROOT, SNIPPETS

_SNIPPETS_PREFIX = str(SNIPPETS) + os.sep
# The tracker of each thread that runs a job (jobs that share a server run side by side).
_active: "dict[int, InputTracker]" = {}
_hook_installed = False


class InputTracker:
    """Files a job declared through its context, and files it opened without declaring them."""

    def __init__(self) -> None:
        self.declared: dict[str, str] = {}  # label -> sha256 when first used
        self.undeclared: list[str] = []

    def declare(self, path: Path) -> Path:
        path = path.resolve()
        label = label_of(path)
        if label not in self.declared:
            self.declared[label] = "being read"  # hashing opens the file: it is declared by then
            self.declared[label] = file_hash(path)
        return path

    def saw_open(self, raw_path: str) -> None:
        path = os.path.abspath(raw_path)
        if not path.startswith(_SNIPPETS_PREFIX):
            return
        p = Path(path)
        if p.parent.name == "__pycache__":  # a snippet's cached bytecode stands for its source
            p = p.parent.parent / (p.name.split(".")[0] + ".py")
        label = label_of(p)
        if label not in self.declared and label not in self.undeclared:
            self.undeclared.append(label)

    def check(self, job_id: str) -> None:
        if self.undeclared:
            raise VerifyError(f"job {job_id} opened {', '.join(self.undeclared)} without going through its context "
                              "(use ctx.snippet, ctx.snippet_path or ctx.proxy), so its record would leave out "
                              "an input it used")


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _active or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    trackers = list(_active.values())
    mine = _active.get(threading.get_ident())
    # A file opened by a thread of no job (a helper thread a job started) counts for the one
    # job running, and, while jobs run side by side, for every one of them: never for none.
    for tracker in [mine] if mine else trackers:
        tracker.saw_open(os.fsdecode(args[0]))


@contextlib.contextmanager
def tracking(tracker: InputTracker):
    """Watch the files opened while a job collects (in its thread, and in threads of no job)."""
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)  # audit hooks cannot be removed; it does nothing when no job runs
        _hook_installed = True
    me = threading.get_ident()
    _active[me] = tracker
    try:
        yield tracker
    finally:
        _active.pop(me, None)


@dataclass
class BaseContext:
    """What every kind of job can use: the snippets, declared as inputs."""
    progress: callable = print
    inputs: InputTracker = field(default_factory=InputTracker)

    def snippet_path(self, relative: str) -> Path:
        """The path of a file under snippets/ (a script, a notebook), declared as an input."""
        path = SNIPPETS / relative
        if not path.is_file():
            raise VerifyError(f"snippet {relative} does not exist")
        return self.inputs.declare(path)

    def snippet(self, relative: str) -> ModuleType:
        """Import a Python snippet file by its path under snippets/, exactly as the page shows it."""
        path = self.snippet_path(relative)
        name = "snippet_" + relative.replace("/", "_").replace("-", "_").removesuffix(".py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


@dataclass
class RunContext(BaseContext):
    """A job that talks to an HTTP server (started with the job's variant)."""
    server: object = None  # verify.live.server.Server
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _proxies: dict = field(default_factory=dict)
    proxies_used: dict = field(default_factory=dict)  # setup -> config file label
    # Every engine start the run made before this job (verify.runner.run_log.RunLog.starts), for
    # jobs whose figures are start-up times: they read these instead of starting engines.
    run_starts: list = field(default_factory=list)
    # Data one job measured that another job on the same server start reads as it is, within one run
    # (the concurrency sweep of verify/jobs/prefill_decode/_sweep.py); kept from job to job.
    shared: dict = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the server, ending in /v1."""
        return self.server.api

    def _declare_proxy(self, setup: str) -> None:
        from verify.live.proxy import SETUPS, config_path
        if setup not in SETUPS:
            raise VerifyError(f"unknown proxy set-up {setup!r} (known: {', '.join(SETUPS)})")
        conf = self.inputs.declare(config_path(setup))
        # How the snippet is wrapped into a runnable proxy config is an input too.
        self.inputs.declare(ROOT / "verify" / "live" / "proxy.py")
        self.proxies_used[setup] = label_of(conf)

    def proxy(self, setup: str):
        """A proxy (nginx, Caddy or HAProxy) of the given set-up in front of the server, shared by the jobs of a run."""
        from verify.live.proxy import managed_proxy
        self._declare_proxy(setup)
        if setup not in self._proxies:
            self._proxies[setup] = self._stack.enter_context(managed_proxy(setup, self.server.port))
        return self._proxies[setup]

    @contextlib.contextmanager
    def private_proxy(self, setup: str):
        """A proxy of the job's own, for experiments that stop it mid-stream."""
        from verify.live.proxy import managed_proxy
        self._declare_proxy(setup)
        with managed_proxy(setup, self.server.port) as proxy:
            yield proxy

    def for_next_job(self) -> None:
        """Shared proxies stay up; what the job used is tracked afresh."""
        self.inputs = InputTracker()
        self.proxies_used = {}

    def close(self) -> None:
        self._stack.close()
