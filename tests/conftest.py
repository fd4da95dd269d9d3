"""Shared fixtures: one live vLLM server for the whole session, and a leak check.

The end-to-end tests talk to a real server started here (the embedded CPU
profile), or to the one named by --server-url / $VERIFY_SERVER_URL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VERIFY = [sys.executable, "-m", "verify"]


def pytest_addoption(parser):
    parser.addoption("--server-url", default=os.environ.get("VERIFY_SERVER_URL"),
                     help="use this running vLLM server instead of starting one")


from verify.live.proxy import SETUPS as PROXY_SETUPS  # noqa: E402  (each proxy's temp dir is named after its set-up)


def our_processes() -> list[str]:
    """vLLM servers, proxy (nginx, Caddy, HAProxy) and Prometheus processes started from this checkout or its temp dirs."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()[1:]
    mine = str(os.getpid())
    found = []
    for line in out:
        pid, _, args = line.strip().partition(" ")
        if pid == mine:
            continue
        if "vllm.entrypoints.openai.api_server" in args or "VLLM::" in args or "verify.runner.offline" in args or \
           (any(kind in args for kind in ("nginx", "caddy", "haproxy"))
            and any(f"{setup}-" in args for setup in PROXY_SETUPS)) or \
           ("prometheus" in args and "/prometheus-" in args):  # verify/live/prometheus.py's temp dir
            found.append(line.strip())
    return found


@pytest.fixture(scope="session", autouse=True)
def no_leftover_processes():
    before = set(our_processes())
    yield
    import time
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        left = [p for p in our_processes() if p not in before]
        if not left:
            return
        time.sleep(0.5)
    pytest.fail("server or proxy processes outlived the test session:\n" + "\n".join(left))


@pytest.fixture(scope="session")
def live_server(request):
    """A healthy vLLM server (embedded CPU profile) shared by every live test."""
    from verify.config.profiles import get_profile
    from verify.live.server import server_for
    cm = server_for(get_profile("cpu"), request.config.getoption("--server-url"),
                    progress=lambda m: print(m, file=sys.stderr, flush=True))
    server = cm.__enter__()
    yield server
    cm.__exit__(None, None, None)


@pytest.fixture
def base_env(live_server):
    return {**os.environ, "BASE_URL": live_server.api}


@pytest.fixture
def checkout(tmp_path):
    """A copy of the checkout (verify/, docs/, snippets/ and the project files) to edit and run `verify` in."""
    for folder in ("verify", "docs", "snippets"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "mkdocs.yml"):
        shutil.copy(ROOT / f, tmp_path / f)
    return tmp_path


def run_verify(*args, env=None, timeout=600, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*VERIFY, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=env or os.environ.copy(), **kw)
