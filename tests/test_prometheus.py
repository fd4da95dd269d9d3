"""The metrics article's Prometheus configuration and rules, checked by Prometheus' own promtool,
and the real Prometheus the verify stage starts: it scrapes the live server, and nothing of it
outlives the run, even when the run is killed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, our_processes
from verify.errors import VerifyError
from verify.live import prometheus



@pytest.fixture(autouse=True)
def _prometheus_installed():
    if shutil.which("promtool") is None or shutil.which("prometheus") is None:
        pytest.fail("Debian's prometheus is not installed (apt-get install -y prometheus; bootstrap.sh test does it)")

SNIPPETS = ROOT / "snippets" / "metrics"


def _promtool(*args, cwd=SNIPPETS) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", *args], capture_output=True, text=True, cwd=cwd)


def test_the_configuration_and_its_rule_files_pass_promtool_check():
    out = _promtool("check", "config", "prometheus.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 rule files found" in out.stdout
    out = _promtool("check", "rules", "recording-rules.yml", "alert-rules.yml")
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_alert_rules_pass_their_unit_tests_and_a_wrong_expectation_fails(tmp_path):
    out = _promtool("test", "rules", "alert-rules.test.yml")
    assert out.returncode == 0 and "SUCCESS" in out.stdout, out.stdout + out.stderr
    for f in ("recording-rules.yml", "alert-rules.yml"):
        shutil.copy(SNIPPETS / f, tmp_path / f)
    # The KV alert's threshold written as a percentage (90), the misreading the page warns of:
    # the rule's own test then fails, because the metric is a fraction.
    (tmp_path / "alert-rules.yml").write_text((SNIPPETS / "alert-rules.yml").read_text()
                                              .replace("vllm:kv_cache_usage_perc) > 0.9", "vllm:kv_cache_usage_perc) > 90"))
    shutil.copy(SNIPPETS / "alert-rules.test.yml", tmp_path / "alert-rules.test.yml")
    out = _promtool("test", "rules", "alert-rules.test.yml", cwd=tmp_path)
    assert out.returncode != 0 and "VLLMKVCacheNearlyFull" in out.stdout + out.stderr


def test_the_run_rewrites_exactly_the_target_and_the_intervals():
    text = prometheus.render_config(prometheus.CONFIG.read_text(), "127.0.0.1:4321", 1.0, 0.5)
    assert "'127.0.0.1:4321'" in text and "localhost:8000" not in text
    assert "scrape_interval: 1s" in text and "evaluation_interval: 500ms" in text
    with pytest.raises(VerifyError, match="exactly one target"):
        prometheus.render_config(text, "127.0.0.1:1", 1.0, 1.0)


@pytest.mark.live
def test_prometheus_scrapes_the_live_server_and_stops(live_server):
    target = f"127.0.0.1:{live_server.port}"
    with prometheus.managed_prometheus(target) as prom:
        assert prometheus.wait_for(prom.targets_up, 20), "Prometheus never scraped the server"
        assert prometheus.wait_for(lambda: prom.query("vllm:num_requests_running"), 20)
        running = prom.query("vllm:num_requests_running")
        assert running[0]["metric"]["model_name"] == "chat"
        rules = prom._get("/api/v1/rules", {})["groups"]
        assert {g["name"] for g in rules} == {"vllm-recording", "vllm-alerts"}
        pid, workdir = prom.proc.pid, prom.workdir
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert not workdir.exists(), "its data folder goes with it"


def test_a_port_in_use_is_a_one_line_error():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(VerifyError, match="already in use"):
            with prometheus.managed_prometheus("127.0.0.1:9", port=s.getsockname()[1]):
                pass


@pytest.mark.proxy
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_killed_while_prometheus_runs_leaves_no_prometheus(sig):
    """The run is killed with Prometheus up (SIGTERM: the run's own unwinding; SIGKILL: the kernel's
    parent-death signal): no Prometheus process is left."""
    before = set(our_processes())
    child = subprocess.Popen([sys.executable, "-c", (
        "import time\n"
        "from verify.live.processes import unwind_on_signals\n"
        "from verify.live.prometheus import managed_prometheus\n"
        "unwind_on_signals()\n"
        "with managed_prometheus('127.0.0.1:9'):\n"
        "    print('up', flush=True)\n"
        "    time.sleep(120)\n")], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "up"
    assert set(our_processes()) - before, "Prometheus is not running"
    child.send_signal(sig)
    child.wait(timeout=30)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and set(our_processes()) - before:
        time.sleep(0.2)
    assert not set(our_processes()) - before
