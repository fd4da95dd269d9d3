"""Shared fixtures: one live vLLM server for the whole session, a leak check, and the tiers' checks.

The end-to-end tests talk to a real server started here (the embedded CPU
profile), or to the one named by --server-url / $VERIFY_SERVER_URL. What each
test may start is declared by its markers and checked (tests/tiers.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests import tiers
from tests.tier_guard import sitecustomize as tier_guard

ROOT = Path(__file__).resolve().parent.parent
VERIFY = [sys.executable, "-m", "verify"]
pytest_plugins = ["tests.floor"]  # --floor-report: the live and engine tiers' floor (tests/floor.py)


# Starts the running test's markers do not allow, seen in this process (children write to the tier log).
_VIOLATIONS: list[str] = []


def pytest_configure(config):
    for name, meaning in tiers.TIERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    config.addinivalue_line("markers", f"{tiers.FAST}: starts nothing heavy (given to every test without a tier)")
    # Python children of a test (`python -m verify run ...`) load the guard as sitecustomize.
    guard_dir = str(Path(tier_guard.__file__).parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [guard_dir, os.environ.get("PYTHONPATH")]))
    tier_guard.install(_VIOLATIONS.append)
    fd, config._tier_log = tempfile.mkstemp(prefix="tier-guard-", suffix=".log")
    os.close(fd)


def pytest_itemcollected(item):
    tiers.group(item)


# The test that stops the shared server runs after every other test that needs it.
STOPS_LIVE_SERVER = "stops_the_live_server"


def pytest_collection_modifyitems(config, items):
    tiers.check(items)
    items.sort(key=lambda item: STOPS_LIVE_SERVER in item.name)  # stable: the order is kept otherwise


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A live test that fails because the shared server is gone says so in one line, and the run stops
    there: every test after it would fail the same way, burying the cause under tracebacks."""
    outcome = yield
    report = outcome.get_result()
    server = item.funcargs.get("live_server") if hasattr(item, "funcargs") else None
    if report.failed and server is not None and STOPS_LIVE_SERVER not in item.name and not server.alive():
        code = server.process.poll() if server.process is not None else None
        how = f"its process exited with {code}" if code is not None else "/health does not answer"
        line = f"the live vLLM server at {server.url} stopped mid-run ({how}); the live tier stops here"
        report.longrepr = line
        item.session.shouldstop = line


ALL_CPUS = frozenset(os.sched_getaffinity(0))


def _engine_busy() -> Path | None:
    flag = os.environ.get(tiers.ENGINE_BUSY_ENV)
    return Path(flag) if flag else None


def _place(item) -> None:
    """When the bootstrap runs the engine tiers in one process and the rest in another, a test of the rest
    starts on the last core only while a live or engine test runs: vLLM binds its engine to the first core
    and leaves the last to its API server (verify/runner, second_engine_groups), so the engine the live
    tests time keeps a core of its own. With no engine test running, every test has every core."""
    flag = _engine_busy()
    if flag is None or len(ALL_CPUS) < 2:
        return
    if tiers.markers_of(item) & tiers.ENGINE_TIERS:
        flag.touch()
        os.sched_setaffinity(0, ALL_CPUS)
    else:
        os.sched_setaffinity(0, {max(ALL_CPUS)} if flag.exists() else ALL_CPUS)


def pytest_runtest_teardown(item):
    flag = _engine_busy()
    if flag is not None and tiers.markers_of(item) & tiers.ENGINE_TIERS:
        flag.unlink(missing_ok=True)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture of the test is set up (a session server included), say what it may start,
    and on which cores."""
    _place(item)
    os.environ[tier_guard.ALLOWED_ENV] = ",".join(sorted(tiers.markers_of(item)))
    os.environ[tier_guard.LOG_ENV] = item.config._tier_log
    Path(item.config._tier_log).write_text("")
    _VIOLATIONS.clear()


def stack_imported(before: set[str], markers: set[str]) -> list[str]:
    """What a test imported of the serving stack that its markers do not allow (tiers.STACK_MODULES)."""
    if markers & tiers.STACK_TIERS:
        return []
    return [f"imported {name} without the stack marker" for name in tiers.STACK_MODULES
            if name in sys.modules and name not in before]


@pytest.fixture(autouse=True)
def tier_guarded(request):
    before = {name for name in tiers.STACK_MODULES if name in sys.modules}
    yield
    _VIOLATIONS.extend(stack_imported(before, tiers.markers_of(request.node)))
    log = Path(os.environ.get(tier_guard.LOG_ENV, "/nonexistent"))
    seen = _VIOLATIONS + (log.read_text().splitlines() if log.is_file() else [])
    _VIOLATIONS.clear()
    if seen:
        pytest.fail(f"{request.node.nodeid}: " + "; ".join(dict.fromkeys(seen)), pytrace=False)


def pytest_unconfigure(config):
    Path(config._tier_log).unlink(missing_ok=True)


def pytest_addoption(parser):
    parser.addoption("--server-url", default=os.environ.get("VERIFY_SERVER_URL"),
                     help="use this running vLLM server instead of starting one")


from verify.live.proxy import SETUPS as PROXY_SETUPS  # noqa: E402  (each proxy's temp dir is named after its set-up)


# Every process this test process starts, and theirs, inherits this tag: with the suite spread over
# several processes at once (the bootstrap runs two; xdist, more), each counts only what it started itself.
TAG_ENV = "VERIFY_TEST_PROCESS_TAG"
os.environ[TAG_ENV] = f"pytest-{os.getpid()}"


def _tagged_mine(pid: str) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone already, or not ours to read
        return False
    return f"{TAG_ENV}={os.environ[TAG_ENV]}".encode() in environ


def our_processes() -> list[str]:
    """vLLM servers, proxy (nginx, Caddy, HAProxy) and Prometheus processes started by this test process
    (from this checkout or its temp dirs)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()[1:]
    mine = str(os.getpid())
    found = []
    for line in out:
        pid, _, args = line.strip().partition(" ")
        if pid == mine:
            continue
        if ("vllm.entrypoints.openai.api_server" in args or "VLLM::" in args or "verify.runner.offline" in args or
            (any(kind in args for kind in ("nginx", "caddy", "haproxy"))
             and any(f"{setup}-" in args for setup in PROXY_SETUPS)) or
                ("prometheus" in args and "/prometheus-" in args)) and _tagged_mine(pid):  # prometheus.py's temp dir
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
    from tests import floor  # here, once pytest has registered it as a plugin (tests/floor.py)
    t0 = time.monotonic()
    server = cm.__enter__()
    floor.server_started(request.config, "shared", server.url, time.monotonic() - t0)
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
