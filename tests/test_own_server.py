"""The engine tier's one server of its own, beside the shared one (a start takes 70-100 s on 2 cores, so
everything that needs other flags than the shared server's runs here): the lora variant, two requests at a
time (--max-num-seqs 2), three admitted in all (--max-num-queued-reqs 3, which counts the running ones), a
KV cache of seven blocks (--num-gpu-blocks-override 7, --max-model-len 512), a 30 s drain
(--shutdown-timeout 30). The tests run in file order; the drain ends the server, so it is last.

- The LoRA machinery: the variant's adapters built, put in by path, served by name; its environment set
  (placeholders replaced by the cached folders, the recorded command free of the machine's paths,
  VLLM_ALLOW_RUNTIME_LORA_UPDATING reaching the server: an unknown adapter gets the runtime endpoint's own
  404, not the router's). What the LoRA jobs measure on their own servers is theirs to record.
- The symptom index's confirming commands (snippets/symptoms/) against the faults they diagnose: a burst
  of short requests, more than the server admits; while it lasts, waiting.promql and queue_and_kv.promql
  show requests waiting (with the KV cache under half used) in a real Prometheus that scrapes the server, and
  after it rejections.promql counts the refused ones under reason max_num_queued_reqs. Two long requests
  then need more KV cache than there is, and preemptions.promql rises above zero. Then the server is
  drained (SIGTERM) while watch_drain.sh watches, and it reports the requests that failed with their
  statuses. The other faults are met on the shared server (tests/test_symptoms_live.py: a stopped engine,
  a proxy timeout, a name the server does not serve; tests/test_live_server_stopped.py: a dead engine).
"""


from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import threading
import time

import httpx
import pytest

from tests.conftest import ROOT
from tests.symptom_queries import query_in
from verify.config.adapters import RECIPES
from verify.config.profiles import LORA_ADAPTERS, SERVED_MODEL_NAME, get_profile
from verify.live import prometheus

pytestmark = pytest.mark.engine  # starts a server of its own (not the shared one)

FOLDER = ROOT / "snippets" / "symptoms"
RUNNING = 2  # --max-num-seqs
ADMITTED = 3  # --max-num-queued-reqs: running and waiting together
BURST = 8
# A KV cache of seven blocks of 128 tokens (the context cut to fit it): two short requests (a block each) fill
# under half of it, two of LONG_TOKENS (four blocks each) need more than all of it, so one is preempted.
BLOCKS, MAX_LEN, LONG_TOKENS = 7, 512, 400
FLAGS = ("--max-num-seqs", str(RUNNING), "--max-num-queued-reqs", str(ADMITTED), "--shutdown-timeout", "30",
         "--num-gpu-blocks-override", str(BLOCKS), "--max-model-len", str(MAX_LEN))


@pytest.fixture(scope="module")
def server(request):
    from tests import floor
    from verify.live.server import managed_server
    t0 = time.monotonic()
    with managed_server(get_profile("cpu"), variant="lora", extra_flags=FLAGS, progress=lambda m: None) as srv:
        floor.server_started(request.config, "own", srv.url, time.monotonic() - t0)
        yield srv
        floor.server_stopped("own")


def test_the_lora_variant_serves_each_adapter_with_runtime_updating_on(server):
    models = {m["id"]: m for m in httpx.get(server.api + "/models", timeout=10).json()["data"]}
    for name in LORA_ADAPTERS:
        assert models[name]["parent"] == "chat"
        assert models[name]["root"].endswith(RECIPES[name].folder_name())
    recorded = " ".join(server.argv)
    assert f"attn-a=<adapters>/{RECIPES['attn-a'].folder_name()}" in recorded and "vllm-docs-verify/adapters" not in recorded
    r = httpx.post(server.url + "/v1/unload_lora_adapter", json={"lora_name": "never-loaded"}, timeout=10)
    assert r.status_code == 404 and "cannot be found" in r.json()["error"]["message"]

    def greedy(model):
        return httpx.post(server.api + "/chat/completions", timeout=60, json={
            "model": model, "messages": [{"role": "user", "content": "Name three colours of the rainbow."}],
            "temperature": 0, "max_tokens": 12}).json()["choices"][0]["message"]["content"]
    assert greedy("attn-a") != greedy("chat")


def _values(result: list[dict]) -> list[float]:
    return [float(sample["value"][1]) for sample in result]


def test_a_burst_past_the_admission_limit_is_seen_waiting_then_counted_refused(server):
    def one(_):
        return httpx.post(server.api + "/completions", timeout=300, json={
            "model": SERVED_MODEL_NAME, "prompt": "Count to a hundred.", "max_tokens": 64, "ignore_eos": True})

    with prometheus.managed_prometheus(f"127.0.0.1:{server.port}", scrape_interval_s=0.25) as prom:
        assert prometheus.wait_for(lambda: prom.query("vllm:num_requests_waiting"), 30), "no scrape"
        waiting, queue_and_kv, kv = [], [], []
        with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
            answers = pool.map(one, range(BURST))
            done = threading.Event()
            collected = []

            def collect():
                collected.extend(answers)
                done.set()
            threading.Thread(target=collect, daemon=True).start()
            while not done.wait(0.25):  # read the queries as a dashboard would, while the burst lasts
                waiting.append(max(_values(prom.query(query_in("waiting.promql"))), default=0.0))
                queue_and_kv.append(prom.query(query_in("queue_and_kv.promql")))
                kv.append(max(_values(prom.query("vllm:kv_cache_usage_perc")), default=None))
        statuses = sorted(r.status_code for r in collected)
        refused = [r for r in collected if r.status_code == 503]
        assert statuses.count(200) == ADMITTED and len(refused) == BURST - ADMITTED, statuses
        assert all("currently busy" in r.text for r in refused), refused[0].text
        # waiting.promql: above zero while the burst lasts, at most the admitted ones past the two running.
        assert 0 < max(waiting) <= ADMITTED - RUNNING, waiting
        # queue_and_kv.promql: a non-empty result (requests waiting while the KV cache is under half used).
        assert any(queue_and_kv), list(zip(waiting, kv))
        # rejections.promql: the refusals counted by reason, with no load added to ask.
        assert prometheus.wait_for(lambda: prom.query(query_in("rejections.promql")), 10)
        by_reason = {s["metric"].get("reason"): float(s["value"][1])
                     for s in prom.query(query_in("rejections.promql"))}
        assert by_reason.get("max_num_queued_reqs", 0) > 0, by_reason


def test_two_long_requests_past_the_kv_cache_show_preemptions_rising(server):
    """preemptions.promql: above zero once two running requests need more KV cache blocks than there are; both
    still finish (kv-preemption.all-finish)."""
    def one(_):
        return httpx.post(server.api + "/completions", timeout=300, json={
            "model": SERVED_MODEL_NAME, "prompt": "Tell a long story.", "max_tokens": LONG_TOKENS, "ignore_eos": True})

    with prometheus.managed_prometheus(f"127.0.0.1:{server.port}", scrape_interval_s=0.25) as prom:
        assert prometheus.wait_for(lambda: prom.query("vllm:num_preemptions_total"), 30), "no scrape"
        with concurrent.futures.ThreadPoolExecutor(RUNNING) as pool:
            answers = list(pool.map(one, range(RUNNING)))
        assert [r.status_code for r in answers] == [200] * RUNNING, [r.text[:200] for r in answers]
        assert all(r.json()["usage"]["completion_tokens"] == LONG_TOKENS for r in answers)
        expr = query_in("preemptions.promql")
        assert prometheus.wait_for(lambda: max(_values(prom.query(expr)), default=0.0) > 0, 10), prom.query(expr)


def test_a_drain_watched_by_watch_drain_sh_reports_its_failed_requests(server, tmp_path):
    """watch_drain.sh, as the index shows it (its extra argument keeps the report), started before SIGTERM."""
    report = tmp_path / "r.json"
    probe = subprocess.Popen(["bash", str(FOLDER / "watch_drain.sh"), "--report", str(report)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "BASE_URL": server.api, "WATCH_S": "6"})
    for line in probe.stderr:
        if "start the drain now" in line:
            break
    # A stream in flight keeps the server draining (not gone) while the probe's requests arrive.
    body = {"model": SERVED_MODEL_NAME, "prompt": "Tell a long story.", "max_tokens": LONG_TOKENS,
            "ignore_eos": True, "stream": True}
    stream = threading.Thread(target=lambda: httpx.post(server.api + "/completions", json=body, timeout=60),
                              daemon=True)
    stream.start()
    time.sleep(1.0)
    os.kill(server.process.pid, signal.SIGTERM)
    out, rest = probe.communicate(timeout=180)
    record = json.loads(report.read_text())
    checks = {c["id"]: c for c in record["checks"]}
    assert probe.returncode == 3, rest
    assert checks["drain"]["verdict"] == "differs" and "500" in checks["drain"]["measured"], checks["drain"]
    assert checks["health"]["verdict"] == "ok"
    # The reader is sent to the symptom: printed, and in the report.
    assert "symptoms/#symptom-errors-during-rollout" in out, out
    assert any("symptom-errors-during-rollout" in line for line in record["symptoms"])
