"""The symptom index's own confirming commands (snippets/symptoms/), run against the live server: the shell
ones as a reader runs them, the PromQL ones in a real Prometheus that scrapes the live server. Every
file in the folder is run by one test here, so the index cannot show a command nobody ran."""

from __future__ import annotations

import re
import subprocess
import time

import httpx
import pytest

from tests.conftest import ROOT
from tests.symptom_queries import query_in
from verify.live import prometheus

FOLDER = ROOT / "snippets" / "symptoms"
# What each shell command prints on a healthy server (the symptom absent), as a pattern.
SHELL = {
    "health.sh": (r"^/health: 200$", {}),
    "models.sh": (r"^chat$", {}),
    "non_streaming.sh": (r"^HTTP 200 after [0-9.]+ s$", {"MAX_TOKENS": "8"}),
    "watch_drain.sh": (r"drain\s+ok\s+\d+ polls, every completion answered", {"WATCH_S": "1"}),
}
# Run elsewhere, as they need no server: vllm_command.sh in tests/test_vllm_command.py (the stack tier).
ELSEWHERE = {"vllm_command.sh"}
# The client's defaults: a ten-minute read timeout, two retries.
PYTHON = {"client_defaults.py": r"^timeout=Timeout\(connect=5\.0, read=600\b.* max_retries=2$"}
# Queries whose vllm: series must be exported; and the one that must find none (an old name).
EMPTY_BY_DESIGN = {"old_names.promql"}

pytestmark = pytest.mark.live


def test_every_file_in_the_folder_is_run_here():
    files = {p.name for p in FOLDER.iterdir()}
    assert files == set(SHELL) | set(PYTHON) | ELSEWHERE | {p.name for p in FOLDER.glob("*.promql")}, files


@pytest.mark.parametrize("name", sorted(SHELL))
def test_a_shell_command_confirms_the_healthy_case(name, base_env):
    pattern, extra = SHELL[name]
    out = subprocess.run(["bash", str(FOLDER / name)], cwd=ROOT, env={**base_env, **extra}, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.search(pattern, out.stdout, re.M), out.stdout[-2000:]


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_a_python_command_confirms_what_it_says(name, base_env):
    import sys
    out = subprocess.run([sys.executable, str(FOLDER / name)], cwd=ROOT, env=base_env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert re.search(PYTHON[name], out.stdout, re.M), out.stdout


def test_non_streaming_sh_through_a_proxy_read_timeout_shows_the_504(live_server, base_env):
    """gateway-timeout-504: the command through nginx with a 2 s proxy_read_timeout (the proxy-read-timeout
    job's configuration), for a generation that takes longer."""
    from verify.live.proxy import managed_proxy
    with managed_proxy("nginx-short-read-timeout", live_server.port) as proxy:
        out = subprocess.run(["bash", str(FOLDER / "non_streaming.sh")], cwd=ROOT, capture_output=True, text=True,
                             env={**base_env, "BASE_URL": proxy.url + "/v1", "MAX_TOKENS": "1000"}, timeout=120)
    assert re.fullmatch(r"HTTP 504 after 2\.\d+ s\n", out.stdout), out.stdout + out.stderr


def test_models_sh_lists_the_names_a_404_for_a_model_asks_for(live_server, base_env):
    """model-does-not-exist: a request naming the base model's own name gets the 404; models.sh lists the
    names that work instead."""
    r = httpx.post(live_server.api + "/completions", json={"model": "Qwen/Qwen2.5-0.5B-Instruct", "prompt": "Hi",
                                                          "max_tokens": 1}, timeout=60)
    assert r.status_code == 404 and "does not exist" in r.text, r.text
    out = subprocess.run(["bash", str(FOLDER / "models.sh")], cwd=ROOT, env=base_env, capture_output=True,
                         text=True, timeout=60).stdout.split()
    assert out and "Qwen/Qwen2.5-0.5B-Instruct" not in out and "chat" in out, out


def _a_client_leaves_mid_stream(api: str) -> None:
    body = {"model": "chat", "prompt": "Tell a long story.", "max_tokens": 200, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", api + "/completions", json=body, timeout=120) as r:
        for n, _ in enumerate(r.iter_lines()):
            if n >= 4:
                break  # the client leaves: the server aborts the request


def test_every_promql_query_runs_in_prometheus_on_the_series_the_server_exports(live_server):
    target = f"127.0.0.1:{live_server.port}"
    with prometheus.managed_prometheus(target, scrape_interval_s=0.5) as prom:
        assert prometheus.wait_for(lambda: prom.query("vllm:num_requests_running"), 30), "no scrape"
        # Once scraped: a request, so the histograms and counters the queries read move; and a stream its
        # client leaves, the fault finished_by_reason.promql cannot show (no-aborts-on-dashboard).
        httpx.post(live_server.api + "/completions", json={"model": "chat", "prompt": "Hi", "max_tokens": 4},
                   timeout=120).raise_for_status()
        _a_client_leaves_mid_stream(live_server.api)
        finished = query_in("finished_by_reason.promql")
        assert prometheus.wait_for(lambda: any(float(r["value"][1]) > 0 for r in prom.query(finished)), 30)
        time.sleep(1.0)  # a scrape after the left stream's abort
        exported = set(prom._get("/api/v1/label/__name__/values", {}))
        for path in sorted(FOLDER.glob("*.promql")):
            expr = query_in(path.name)
            result = prom.query(expr)  # an invalid query raises with Prometheus' own error
            names = set(re.findall(r"vllm:[a-z_:]+", expr))
            if path.name in EMPTY_BY_DESIGN:
                assert result == [] and not names & exported, (path.name, result)
            else:
                assert names <= exported, (path.name, names - exported)
            if path.name == "finished_by_reason.promql":  # the left stream is under no reason
                reasons = {r["metric"].get("finished_reason") for r in result if float(r["value"][1]) > 0}
                assert reasons and "abort" not in reasons and reasons <= {"stop", "length"}, result
            if path.name == "kv_usage.promql":  # a fraction, not a percentage
                assert result and all(0 <= float(r["value"][1]) <= 1 for r in result), result


def test_the_hang_command_shows_the_hang_on_a_stopped_engine(live_server):
    """ready-but-hangs: its confirming command (snippets/health/look.py, as the index shows it) run against the
    live server with its engine core stopped (SIGSTOP, as the health-probes job stops it) shows the symptom:
    /health 200 while the one-token completion gets no answer in time. The engine then continues, and the
    same command sees it answer again, so the live server is left as it was found."""
    import importlib.util
    import signal

    from verify.jobs.health import _watch
    if live_server.process is None:
        pytest.skip("a server given by URL: its engine core is not this test's to stop")
    core = _watch.engine_core(live_server.process.pid)
    assert core is not None, "no engine core process under the live server"
    spec = importlib.util.spec_from_file_location("look", ROOT / "snippets" / "health" / "look.py")
    look = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(look)
    core.send_signal(signal.SIGSTOP)
    try:
        hung = look.look(live_server.url, "chat")
    finally:
        core.send_signal(signal.SIGCONT)
    assert hung["health"] == 200 and hung["completion"] == "ReadTimeout", hung
    assert look.look(live_server.url, "chat", timeout=60)["completion"] == 200
